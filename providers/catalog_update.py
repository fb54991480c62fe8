"""``baton --update-models``: download models.dev's data and keep it as the catalog overlay.

Run only when asked (never at start-up). The answer is untrusted: it must come over HTTPS (plain
HTTP only from this machine, for mirrors and tests), within :data:`MAX_BYTES` and
:data:`DEADLINE` seconds; it is parsed with a depth limit and converted by the same code that
builds the bundled catalog (:func:`baton.providers.models_dev.convert`), which keeps model
facts only. Whatever goes wrong, the overlay already in place stays as it was.
"""

from __future__ import annotations

import ipaddress
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime
from http.client import HTTPMessage
from pathlib import Path
from typing import IO

DEFAULT_URL = "https://models.dev/api.json"
MAX_BYTES = 64 * 1024 * 1024
DEADLINE = 30.0
"""Seconds the whole download may take (a server that trickles bytes is cut off too)."""
_CHUNK = 64 * 1024


class UpdateError(Exception):
    """The download or its content was refused; the message is one line for the user."""


@dataclass(frozen=True)
class UpdateResult:
    """What ``--update-models`` stored."""

    path: Path
    models: int
    providers: int
    skipped: int
    """Model records left out for a bad value."""


def update_models(url: str, path: Path, *, deadline: float = DEADLINE, max_bytes: int = MAX_BYTES) -> UpdateResult:
    """Download ``url`` (models.dev's API shape), validate and convert it, and write the overlay
    to ``path``. Raises :class:`UpdateError` and leaves ``path`` alone on any failure."""
    from baton.providers.catalog_overlay import write_overlay
    from baton.providers.json_depth import load_config_json
    from baton.providers.models_dev import SourceError, convert

    check_url(url)
    body = _download(url, deadline, max_bytes)
    try:
        document = load_config_json(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UpdateError(f"{url} did not answer with UTF-8 text") from exc
    except ValueError as exc:
        raise UpdateError(f"{url} did not answer with valid JSON ({_short(exc)})") from exc
    try:
        providers, notes = convert(document)
    except SourceError as exc:
        raise UpdateError(f"{url} did not answer with models.dev's data: {_short(exc)}") from exc
    count = sum(len(models) for models in providers.values())
    if count == 0:
        raise UpdateError(f"{url} lists no model baton can use")
    fetched = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        write_overlay(path, providers, url, fetched)
    except OSError as exc:
        raise UpdateError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return UpdateResult(path, count, len(providers), len(notes))


def check_url(url: str) -> None:
    """Refuse a URL that is not ``https://`` (or ``http://`` to this machine)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and parts.hostname and _is_loopback(parts.hostname):
        return
    raise UpdateError(f"refusing {url!r}: the catalog is only downloaded over https:// "
                      "(or http:// from this machine)")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _SafeRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects follow the same rule as the URL itself (no https -> http downgrade)."""

    def redirect_request(
        self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str, headers: HTTPMessage, newurl: str
    ) -> urllib.request.Request | None:
        check_url(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _download(url: str, deadline: float, max_bytes: int) -> bytes:
    from baton import __version__

    opener = urllib.request.build_opener(_SafeRedirects)
    request = urllib.request.Request(url, headers={"User-Agent": f"baton/{__version__}", "Accept": "application/json"})
    end = time.monotonic() + deadline
    chunks: list[bytes] = []
    size = 0
    try:
        with opener.open(request, timeout=min(deadline, 15.0)) as response:
            while True:
                if time.monotonic() > end:
                    raise UpdateError(f"{url} took longer than {deadline:g} s")
                chunk = response.read1(_CHUNK)  # what has arrived: a trickle still meets the deadline
                if not chunk:
                    break
                size += len(chunk)
                if size > max_bytes:
                    raise UpdateError(f"{url} sent more than {max_bytes // (1024 * 1024)} MB")
                chunks.append(chunk)
    except UpdateError:
        raise
    except urllib.error.HTTPError as exc:
        raise UpdateError(f"{url} answered HTTP {exc.code} {exc.reason}") from exc
    except urllib.error.URLError as exc:
        raise UpdateError(f"cannot reach {url}: {_short(exc.reason)}") from exc
    except TimeoutError as exc:
        raise UpdateError(f"{url} did not answer within {deadline:g} s") from exc
    except OSError as exc:
        raise UpdateError(f"cannot download {url}: {_short(exc)}") from exc
    return b"".join(chunks)


def _short(value: object) -> str:
    return " ".join(str(value).split())[:200]
