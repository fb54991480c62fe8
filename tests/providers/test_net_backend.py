"""The asyncio network backend under httpx: real sockets (plain and TLS), flow control both ways,
timeouts, dropped connections and keep-alive, with httpx's own exceptions."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from baton.providers.net_backend import install_asyncio_backend
from baton.providers.transport import aclose_shared_client, shared_client
from tests.replay_server import ReplayServer, Reply

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def _client(**kwargs: object) -> httpx.AsyncClient:
    client = httpx.AsyncClient(**kwargs)  # type: ignore[arg-type]
    assert install_asyncio_backend(client)
    return client


async def _read_head(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return await reader.readexactly(length) if length else b""


async def _serve(handler: Handler, ssl_context: ssl.SSLContext | None = None) -> tuple[asyncio.Server, int]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=ssl_context)
    return server, server.sockets[0].getsockname()[1]


async def test_the_shared_client_streams_through_the_backend_and_reuses_its_connection() -> None:
    events = [f"data: {{\"n\": {i}}}\n\n".encode() for i in range(50)]
    with ReplayServer(lambda _request: Reply(chunks=events, delay=0.001)) as server:
        client = shared_client()
        try:
            streams = []
            for _ in range(3):
                async with client.stream("POST", server.url + "/v1", content=b"{}") as response:
                    body = b"".join([chunk async for chunk in response.aiter_bytes()])
                    streams.append(response.extensions["network_stream"])
                assert body == b"".join(events)
        finally:
            await aclose_shared_client()
    assert type(streams[0]).__name__ == "AsyncioStream"
    assert streams[0] is streams[1] is streams[2]  # one keep-alive connection for all three


async def test_tls_round_trip_with_a_streamed_body(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    parts = [f"part {i}\n".encode() for i in range(200)]

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await _read_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-type: text/plain\r\n\r\n")
        for part in [request, *parts]:
            writer.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    server, port = await _serve(handler, server_ctx)
    client = _client(verify=ssl.create_default_context(cafile=str(cert)))
    try:
        async with client.stream("POST", f"https://127.0.0.1:{port}/x", content=b"hello tls") as response:
            body = b"".join([chunk async for chunk in response.aiter_bytes()])
            assert response.extensions["network_stream"].get_extra_info("ssl_object") is not None
        assert body == b"hello tls" + b"".join(parts)
    finally:
        await client.aclose()
        server.close()
        await server.wait_closed()


async def test_a_certificate_that_is_not_trusted_is_a_connect_error(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1)
        writer.close()

    server, port = await _serve(handler, server_ctx)
    client = _client()  # the system's trust store: the self-signed certificate is not in it
    try:
        with pytest.raises(httpx.ConnectError, match=r"(?i)certificate"):
            await client.get(f"https://127.0.0.1:{port}/")
    finally:
        await client.aclose()
        server.close()
        await server.wait_closed()


async def test_large_bodies_both_ways_arrive_whole_with_a_slow_reader() -> None:
    payload = bytes(range(256)) * 8192  # 2 MiB: beyond both flow-control limits

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        body = await _read_head(reader)
        writer.write(f"HTTP/1.1 200 OK\r\ncontent-length: {len(body)}\r\n\r\n".encode())
        writer.write(body)  # echo it back
        await writer.drain()
        writer.close()

    server, port = await _serve(handler)
    client = _client()
    try:
        received = bytearray()
        async with client.stream("POST", f"http://127.0.0.1:{port}/echo", content=payload) as response:
            async for chunk in response.aiter_raw():
                received += chunk
                await asyncio.sleep(0.001)  # a consumer slower than the socket
        assert bytes(received) == payload
    finally:
        await client.aclose()
        server.close()
        await server.wait_closed()


async def test_a_stalled_stream_is_a_read_timeout() -> None:
    with ReplayServer([Reply(chunks=[b"data: 1\n\n", b"data: 2\n\n"], stall_after=1)]) as server:
        client = _client(timeout=httpx.Timeout(5.0, read=0.3))
        try:
            seen: list[bytes] = []
            with pytest.raises(httpx.ReadTimeout):
                async with client.stream("POST", server.url + "/v1", content=b"{}") as response:
                    async for chunk in response.aiter_bytes():
                        seen.append(chunk)
            assert b"".join(seen) == b"data: 1\n\n"
        finally:
            await client.aclose()


async def test_a_connection_dropped_mid_body_is_a_transport_error() -> None:
    with ReplayServer([Reply(chunks=[b"data: 1\n\n", b"data: 2\n\n"], disconnect_after=1)]) as server:
        client = _client()
        try:
            with pytest.raises(httpx.TransportError):
                async with client.stream("POST", server.url + "/v1", content=b"{}") as response:
                    async for _chunk in response.aiter_bytes():
                        pass
        finally:
            await client.aclose()


async def test_a_closed_port_is_a_connect_error() -> None:
    server, port = await _serve(lambda r, w: asyncio.sleep(0))
    server.close()
    await server.wait_closed()
    client = _client()
    try:
        with pytest.raises(httpx.ConnectError):
            await client.get(f"http://127.0.0.1:{port}/")
    finally:
        await client.aclose()


async def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    connections = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await _read_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()  # no "connection: close" header: the client learns it from the socket

    server, port = await _serve(handler)
    client = _client()
    try:
        for _ in range(3):
            response = await client.get(f"http://127.0.0.1:{port}/")
            assert response.text == "ok"
            await asyncio.sleep(0.05)
    finally:
        await client.aclose()
        server.close()
        await server.wait_closed()
    assert connections == 3


async def test_a_name_with_several_addresses_reaches_the_one_that_listens() -> None:
    # "localhost" may resolve to ::1 first; the server listens on 127.0.0.1 only.
    with ReplayServer([Reply(chunks=[b"data: 1\n\n"])]) as server:
        client = _client(timeout=5.0)
        try:
            response = await client.post(f"http://localhost:{server.port}/v1", content=b"{}")
            assert response.text == "data: 1\n\n"
        finally:
            await client.aclose()
