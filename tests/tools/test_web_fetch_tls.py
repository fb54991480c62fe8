"""web_fetch over TLS to the address it checked: the certificate is still checked against the
URL's host name (sent as SNI), so pinning the address never weakens TLS. A test CA signs a
certificate for ``docs.tls.test``; a resolver the test controls answers 127.0.0.1 for it."""

from __future__ import annotations

import asyncio
import datetime
import http.server
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from baton.agent.tool import ToolError
from baton.providers.messages import TextContent
from baton.sessions.permissions.paths import Workspace
from baton.sessions.permissions.policy import Policy
from baton.sessions.permissions.rules import RuleSet
from baton.sessions.permissions.web_access import PolicyWebAccess
from baton.tools.web_fetch import WebFetchTool

x509 = pytest.importorskip("cryptography.x509")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402


def _cert(subject: str, issuer_key: ec.EllipticCurvePrivateKey, issuer: str, key: ec.EllipticCurvePrivateKey,
          *, ca: bool, san: str | None = None) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder()
               .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
               .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if san is not None:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(san)]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[int, ssl.SSLContext]]:
    """An HTTPS server on 127.0.0.1 whose certificate names docs.tls.test; and a client context
    trusting only the test CA."""
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = _cert("baton test CA", ca_key, "baton test CA", ca_key, ca=True)
    leaf = _cert("docs.tls.test", ca_key, "baton test CA", key, ca=False, san="docs.tls.test")
    (tmp_path / "leaf.pem").write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                         serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(tmp_path / "leaf.pem", tmp_path / "key.pem")

    class Page(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return None

        def do_GET(self) -> None:
            body = f"<h1>Secure docs</h1><p>Host: {self.headers.get('Host')}</p>".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    httpd.socket = server_context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    client_context = ssl.create_default_context(cadata=ca.public_bytes(serialization.Encoding.PEM).decode())
    try:
        yield httpd.server_address[1], client_context
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def resolver(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every name resolves to 127.0.0.1 (the names in these tests exist nowhere else)."""

    async def getaddrinfo(self: asyncio.AbstractEventLoop, host: str, port: int, **kwargs: object) -> object:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", getaddrinfo)


def tool_for(tmp_path: Path, host: str, context: ssl.SSLContext) -> WebFetchTool:
    tool = WebFetchTool(str(tmp_path))
    policy = Policy(Workspace.for_dir(str(tmp_path)), RuleSet.parse(allow=[f"web_fetch(domain:{host})"]), "auto")
    tool.access = PolicyWebAccess(policy, "web_fetch", "url")
    tool.ssl_context = context
    return tool


async def test_tls_to_the_checked_address_verifies_the_host_name(
    tls_server: tuple[int, ssl.SSLContext], resolver: None, tmp_path: Path, baton_home: Path
) -> None:
    port, context = tls_server
    result = await tool_for(tmp_path, "docs.tls.test", context).execute("c", {"url": f"https://docs.tls.test:{port}/"})
    text = "".join(b.text for b in result.content if isinstance(b, TextContent))
    assert "# Secure docs" in text and f"Host: docs.tls.test:{port}" in text


async def test_a_certificate_for_another_name_is_refused(
    tls_server: tuple[int, ssl.SSLContext], resolver: None, tmp_path: Path, baton_home: Path
) -> None:
    port, context = tls_server
    with pytest.raises(ToolError) as refused:
        await tool_for(tmp_path, "evil.tls.test", context).execute("c", {"url": f"https://evil.tls.test:{port}/"})
    assert "Could not fetch" in str(refused.value) and "certificate" in str(refused.value).lower()
