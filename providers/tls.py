"""The TLS settings of baton's shared HTTP clients: httpx's choice of trusted certificates,
loaded at the first TLS handshake rather than when a client is made.

httpx builds its context when a client is built, and its default context parses the whole CA
bundle (certifi's, or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``): about 20 ms of CPU and 1.2 MB that
stay with the process, spent even when every request goes to a plain ``http://`` server (Ollama,
a local model server). :func:`shared_tls_context` gives a context with the same settings as
``httpx.create_ssl_context()`` (certificates and host names checked, ``SSLKEYLOGFILE`` honoured)
whose trust store is filled just before its first handshake. Until then it trusts nothing, so
a handshake can never pass on a store that is not yet loaded.
"""

from __future__ import annotations

import os
import ssl
import sys
import threading
from typing import Any

_lock = threading.Lock()
_shared: ssl.SSLContext | None = None


class TrustOnFirstHandshake(ssl.SSLContext):
    """A client context that loads its trusted certificates just before its first handshake
    (asyncio and anyio start one with :meth:`wrap_bio`, a blocking client with
    :meth:`wrap_socket`)."""

    _trust_source: tuple[str | None, str | None] | None = None
    """``(cafile, capath)`` still to load; None once loaded."""

    def _load_trust(self) -> None:
        if self._trust_source is None:
            return
        with _lock:
            source = self._trust_source
            if source is not None:
                cafile, capath = source
                if cafile is None and capath is None:
                    import certifi  # only here: certifi.where() imports zipfile and importlib.readers

                    cafile = certifi.where()
                self.load_verify_locations(cafile=cafile, capath=capath)
                self._trust_source = None

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        """Load the trusted certificates (once), then start a handshake over memory BIOs."""
        self._load_trust()
        return super().wrap_bio(*args, **kwargs)

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        """Load the trusted certificates (once), then wrap a socket."""
        self._load_trust()
        return super().wrap_socket(*args, **kwargs)


def trust_on_first_handshake() -> TrustOnFirstHandshake:
    """A new context with httpx's default settings, its certificates chosen now (from the
    environment, as httpx does) and loaded at its first handshake."""
    context = TrustOnFirstHandshake(ssl.PROTOCOL_TLS_CLIENT)  # checks certificates and host names
    if cafile := os.environ.get("SSL_CERT_FILE"):
        context._trust_source = (cafile, None)
    elif capath := os.environ.get("SSL_CERT_DIR"):
        context._trust_source = (None, capath)
    else:
        context._trust_source = (None, None)
    keylog = os.environ.get("SSLKEYLOGFILE")
    if keylog and not sys.flags.ignore_environment:  # as ssl.create_default_context does
        context.keylog_filename = keylog
    return context


def shared_tls_context() -> ssl.SSLContext:
    """The process's one client context (made on first call; see the module docstring)."""
    global _shared
    if _shared is None:
        _shared = trust_on_first_handshake()
    return _shared
