"""A network backend for httpcore built on plain asyncio protocols.

httpx (through httpcore) reaches the network through anyio by default, and every read of a
streamed response then pays for an anyio cancel scope (``fail_after``), a sniffio look-up and a
pause/resume of the socket's reader: a few hundred microseconds of CPU per server-sent event.
:class:`AsyncioBackend` does the same job with an :class:`asyncio.Protocol` that buffers what
arrives and a read that returns the buffer at once when it holds data, arming a timer only when
it has to wait. Behaviour is httpcore's contract: the same exceptions (``ReadTimeout``,
``ReadError``, ``ConnectError`` ...), ``b""`` at the end of the stream, TLS through
:meth:`asyncio.loop.start_tls`, flow control both ways.

:func:`install_asyncio_backend` puts it under an ``httpx.AsyncClient``'s default transport; where
the installed httpx/httpcore do not look as expected it changes nothing (anyio keeps working).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import Iterable

import httpcore
import httpx
from httpcore import AsyncNetworkBackend, AsyncNetworkStream

READ_HIGH_WATER = 256 * 1024
"""Buffered bytes at which the socket stops being read until the consumer catches up."""
READ_LOW_WATER = 64 * 1024
HAPPY_EYEBALLS_DELAY = 0.25
"""Seconds before the next address of a host is tried alongside (RFC 8305, anyio's default too):
a host whose IPv6 address does not answer is still reached over IPv4 at once."""

SocketOption = tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]


class _Protocol(asyncio.Protocol):
    """Buffers incoming bytes and wakes the one reader (or writer) waiting for them."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.eof = False
        self.lost = False
        self.error: BaseException | None = None
        self.read_paused = False
        self.reader: asyncio.Future[None] | None = None
        self.write_paused = False
        self.drainer: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) >= READ_HIGH_WATER and not self.read_paused and self.transport is not None:
            self.read_paused = True
            self.transport.pause_reading()
        self._wake_reader()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake_reader()
        return False  # close the transport: an HTTP/1.1 connection is done when the peer is

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.eof = True
        self.error = exc
        self._wake_reader()
        self._wake_drainer()

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        self._wake_drainer()

    def _wake_reader(self) -> None:
        waiter = self.reader
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _wake_drainer(self) -> None:
        waiter = self.drainer
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


def _expire(waiter: asyncio.Future[None], error: Exception) -> None:
    if not waiter.done():
        waiter.set_exception(error)


async def _park(protocol: object, slot: str, timeout: float | None, error: Exception) -> None:
    """Wait until the protocol resolves the future put in ``slot`` (``reader``: data arrived,
    ``drainer``: the peer reads again), at most ``timeout`` seconds."""
    waiter = asyncio.get_running_loop().create_future()
    setattr(protocol, slot, waiter)
    try:
        await _wait(waiter, timeout, error)
    finally:
        setattr(protocol, slot, None)


async def _wait(waiter: asyncio.Future[None], timeout: float | None, error: Exception) -> None:
    """Await ``waiter``, failing with ``error`` after ``timeout`` seconds (``None``: no limit)."""
    if timeout is None:
        await waiter
        return
    handle = asyncio.get_running_loop().call_later(timeout, _expire, waiter, error)
    try:
        await waiter
    finally:
        handle.cancel()


class AsyncioStream(AsyncNetworkStream):
    """One connection (plain or TLS) as httpcore reads and writes it."""

    def __init__(self, transport: asyncio.Transport, protocol: _Protocol) -> None:
        self._transport = transport
        self._protocol = protocol

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Up to ``max_bytes`` bytes; ``b""`` once the peer has closed and everything was read."""
        protocol = self._protocol
        if not protocol.buffer:
            if protocol.lost and protocol.error is not None:
                raise httpcore.ReadError(str(protocol.error) or type(protocol.error).__name__)
            if protocol.eof:
                return b""
            if self._transport.is_closing():
                raise httpcore.ReadError("The connection is closed")
            await _park(protocol, "reader", timeout, httpcore.ReadTimeout("timed out"))
            if not protocol.buffer:
                if protocol.error is not None:
                    raise httpcore.ReadError(str(protocol.error) or type(protocol.error).__name__)
                return b""
        buffer = protocol.buffer
        if len(buffer) <= max_bytes:
            data = bytes(buffer)
            buffer.clear()
        else:
            data = bytes(buffer[:max_bytes])
            del buffer[:max_bytes]
        if protocol.read_paused and len(buffer) <= READ_LOW_WATER and not protocol.lost:
            protocol.read_paused = False
            self._transport.resume_reading()
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Send ``buffer``, waiting (at most ``timeout``) while the peer does not keep up."""
        if not buffer:
            return
        protocol = self._protocol
        if protocol.lost or self._transport.is_closing():
            raise httpcore.WriteError("The connection is closed")
        self._transport.write(buffer)
        while protocol.write_paused and not protocol.lost:
            await _park(protocol, "drainer", timeout, httpcore.WriteTimeout("timed out"))
        if protocol.lost and protocol.error is not None:
            raise httpcore.WriteError(str(protocol.error) or type(protocol.error).__name__)

    async def aclose(self) -> None:
        """Close the connection (what is still queued for writing is flushed, briefly)."""
        transport = self._transport
        if transport.is_closing():
            return
        transport.close()
        try:
            await asyncio.sleep(0)  # one turn of the loop to flush what is queued
        finally:
            if not self._protocol.lost:
                transport.abort()  # no waiting for a TLS close_notify answer (anyio does the same)

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> AsyncNetworkStream:
        """Upgrade to TLS (the handshake bounded by ``timeout``); returns the TLS stream."""
        loop = asyncio.get_running_loop()
        try:
            upgraded = await asyncio.wait_for(
                loop.start_tls(self._transport, self._protocol, ssl_context, server_side=False,
                               server_hostname=server_hostname),
                timeout,
            )
        except TimeoutError as exc:
            self._transport.abort()
            raise httpcore.ConnectTimeout(str(exc) or "TLS handshake timed out") from exc
        except (OSError, ssl.SSLError, EOFError) as exc:
            self._transport.abort()
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        if upgraded is None:
            self._transport.abort()
            raise httpcore.ConnectError("TLS could not be started on this connection")
        assert isinstance(upgraded, asyncio.Transport)
        self._protocol.transport = upgraded
        return AsyncioStream(upgraded, self._protocol)

    def get_extra_info(self, info: str) -> object:
        """What httpcore asks about the connection (``is_readable``: closed or sent something
        while idle, so it cannot be reused)."""
        transport = self._transport
        if info == "ssl_object":
            return transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return transport.get_extra_info("sockname")
        if info == "server_addr":
            return transport.get_extra_info("peername")
        if info == "socket":
            return transport.get_extra_info("socket")
        if info == "is_readable":
            protocol = self._protocol
            if protocol.buffer or protocol.eof or transport.is_closing():
                return True
            sock = transport.get_extra_info("socket")
            return sock is not None and _socket_readable(sock)
        return None


def _socket_readable(sock: socket.socket) -> bool:
    from httpcore._utils import is_socket_readable

    return bool(is_socket_readable(sock))


def _apply_options(transport: asyncio.Transport, options: Iterable[SocketOption] | None) -> None:
    if not options:
        return
    sock = transport.get_extra_info("socket")
    for option in options:
        sock.setsockopt(*option)


class AsyncioBackend(AsyncNetworkBackend):
    """httpcore's network backend on plain asyncio (see the module docstring)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> AsyncNetworkStream:
        """Open a TCP connection (``TCP_NODELAY`` on, as asyncio sets it)."""
        loop = asyncio.get_running_loop()
        local = (local_address, 0) if local_address else None
        try:
            transport, protocol = await asyncio.wait_for(
                loop.create_connection(_Protocol, host, port, local_addr=local,
                                       happy_eyeballs_delay=HAPPY_EYEBALLS_DELAY),
                timeout,
            )
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(str(exc) or "timed out") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        return self._stream(transport, protocol, socket_options)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[SocketOption] | None = None
    ) -> AsyncNetworkStream:
        """Open a connection to the Unix socket at ``path``."""
        loop = asyncio.get_running_loop()
        try:
            transport, protocol = await asyncio.wait_for(loop.create_unix_connection(_Protocol, path), timeout)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(str(exc) or "timed out") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        return self._stream(transport, protocol, socket_options)

    def _stream(self, transport: asyncio.BaseTransport, protocol: asyncio.BaseProtocol,
                socket_options: Iterable[SocketOption] | None) -> AsyncioStream:
        assert isinstance(transport, asyncio.Transport) and isinstance(protocol, _Protocol)
        try:
            _apply_options(transport, socket_options)
        except OSError as exc:
            transport.abort()
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        return AsyncioStream(transport, protocol)

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds``."""
        await asyncio.sleep(seconds)


def install_asyncio_backend(client: httpx.AsyncClient) -> bool:
    """Make ``client``'s default transport connect through :class:`AsyncioBackend`; returns
    whether it did (httpx keeps its anyio backend when its internals are not as expected, and
    proxy transports are left as they are)."""
    transport = getattr(client, "_transport", None)
    pool = getattr(transport, "_pool", None)
    if type(pool) is not httpcore.AsyncConnectionPool or not hasattr(pool, "_network_backend"):
        return False
    with contextlib.suppress(AttributeError):
        pool._network_backend = AsyncioBackend()
        return True
    return False

