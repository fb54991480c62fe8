"""The shared clients' TLS context reads its trusted certificates at its first handshake: a run
that only talks to plain-http servers never parses the CA bundle, and a TLS server is checked
against the same certificates httpx would trust (nothing at all before they are loaded)."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import httpx
import pytest

from baton.providers.tls import trust_on_first_handshake
from baton.providers.transport import aclose_shared_client, shared_client
from tests.replay_server import ReplayServer, Reply


async def _tls_server(cert: Path, key: Path) -> tuple[asyncio.Server, int]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=context)
    return server, server.sockets[0].getsockname()[1]


def test_the_context_trusts_nothing_until_a_handshake_loads_the_bundle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    context = trust_on_first_handshake()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0
    context.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="example.com")
    assert context.cert_store_stats()["x509_ca"] == httpx.create_ssl_context().cert_store_stats()["x509_ca"] > 0


async def test_a_server_trusted_through_ssl_cert_file_is_reached_and_others_are_refused(
        certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    cert, key = certificate
    server, port = await _tls_server(cert, key)
    try:
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # chosen when the context is made, as httpx does
        trusting = httpx.AsyncClient(verify=trust_on_first_handshake())
        async with trusting:
            assert (await trusting.get(f"https://127.0.0.1:{port}/")).text == "ok"
        monkeypatch.delenv("SSL_CERT_FILE")
        default = httpx.AsyncClient(verify=trust_on_first_handshake())  # certifi's bundle: not this one
        async with default:
            with pytest.raises(httpx.ConnectError, match=r"(?i)certificate"):
                await default.get(f"https://127.0.0.1:{port}/")
    finally:
        server.close()
        await server.wait_closed()


async def test_the_shared_client_over_plain_http_loads_no_ca_bundle() -> None:
    with ReplayServer(lambda _request: Reply(chunks=[b"data: {}\n\n"])) as server:
        client = shared_client()
        try:
            async with client.stream("POST", server.url + "/v1", content=b"{}") as response:
                await response.aread()
            verify = client._transport._pool._ssl_context  # type: ignore[attr-defined]
            assert verify.cert_store_stats()["x509_ca"] == 0
        finally:
            await aclose_shared_client()

