"""One long-lived sandbox per set-up, starting every sandboxed command of a session.

Starting bubblewrap costs about 5 ms of CPU (namespaces, mounts), more than the command itself
for the short ``ls``/``grep``/``cat`` calls an agent makes all day. A :class:`SandboxHost` starts
bwrap once, running :mod:`baton.tools.sandbox_server` inside it as the PID namespace's init, and
asks that server to start each command: the command sees exactly the sandbox a fresh bwrap with
the same arguments would give it (the same seccomp filter, environment rules and mounts).
:class:`SandboxHosts` keeps one host per set-up: when the arguments change (a protected path
appeared, the network was allowed, a bound directory was replaced), a new host starts and the
old one ends once its commands have.

A hosted command leads its own process group. The server names it by its pid inside the
namespace and hands over a pidfd, from which baton reads the pid the command has outside
(``/proc/self/fdinfo``), so timeouts, aborts, the stopped-process watch and
:func:`baton.tools.processes.register_group` work on the right group. A command that ended before
baton read that has no group left to signal (its pid is None). Background jobs of a command stay
in the sandbox until the host closes.

No command can end its server (see :mod:`baton.tools.sandbox_server`); when the server ends
anyway (baton closed the host, or it was killed from outside), the kernel ends every process of
the namespace, so commands still running are reported with an unknown exit status, and a
command handed over but never confirmed as started is reported as of unknown fate, never
started again.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import marshal
import os
import re
import select
import signal
import socket
import subprocess
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from baton.providers.errors import BatonError
from baton.tools.proc_table import process_table
from baton.tools.processes import register_group
from baton.tools.sandbox import (
    bound_paths_identity,
    filter_pipe,
    read_bwrap_info,
    sandbox_environment,
    wait_ready,
)
from baton.tools.shell import CommandLaunchError, signal_group

SERVER_SCRIPT = Path(__file__).with_name("sandbox_server.py")
START_TIMEOUT_SECONDS = 10.0
MAX_REPLY_LINE = 64 * 1024
"""A longer reply line means the server is not the one baton started (or has gone mad): the host
is closed."""
_MAX_QUEUED_FDS = 64
_FD_SPACE = socket.CMSG_SPACE(array.array("i").itemsize * 8)


def server_program() -> Path:
    """What the sandbox's interpreter runs: the server's compiled bytecode when it is current for
    the source (written on first use where the folder allows it), else the source. Run from its
    source, the interpreter compiles the script first, and the compiler's memory stays with the
    process for the sandbox's whole life (~0.75 MB of its ~9 MB)."""
    import importlib.util

    try:
        cached = Path(importlib.util.cache_from_source(str(SERVER_SCRIPT)))
    except (NotImplementedError, ValueError):  # no cache tag in this interpreter
        return SERVER_SCRIPT
    if cached.parent.parent != SERVER_SCRIPT.parent:
        return SERVER_SCRIPT  # a pycache prefix elsewhere: maybe hidden inside the sandbox
    if _bytecode_current(cached):
        return cached
    import py_compile

    try:
        py_compile.compile(str(SERVER_SCRIPT), cfile=str(cached), doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
    except (OSError, py_compile.PyCompileError):
        return SERVER_SCRIPT
    return cached if _bytecode_current(cached) else SERVER_SCRIPT


def _bytecode_current(cached: Path) -> bool:
    """Whether ``cached`` is this interpreter's bytecode of the server's source as it is now (a
    timestamp-checked ``.pyc`` whose recorded modification time and size are the source's)."""
    import importlib.util

    try:
        source = SERVER_SCRIPT.stat()
        with open(cached, "rb") as handle:
            header = handle.read(16)
    except OSError:
        return False
    return (
        len(header) == 16
        and header[:4] == importlib.util.MAGIC_NUMBER
        and int.from_bytes(header[4:8], "little") == 0
        and int.from_bytes(header[8:12], "little") == int(source.st_mtime) & 0xFFFFFFFF
        and int.from_bytes(header[12:16], "little") == source.st_size & 0xFFFFFFFF
    )


class SandboxHostError(BatonError):
    """The host could not start, or stopped before it was handed a command (which can safely be
    started again elsewhere)."""


class CommandFateUnknownError(CommandLaunchError):
    """The host stopped after it was handed a command and before it said it started it: it may
    have run and ended, or never started. Starting it again could run it twice."""


class HostedProcess:
    """A command started by a host: the parts of ``asyncio.subprocess.Process`` bash uses."""

    def __init__(self, pid: int | None, exit_status: asyncio.Future[int | None]) -> None:
        self.pid = pid
        """The command's process group outside the sandbox; None when it ended before baton
        could learn it."""
        self.returncode: int | None = None
        self._exit_status = exit_status

    async def wait(self) -> int | None:
        """Wait for the command to end; its exit status (negative: killed by that signal), or
        None when it cannot be known."""
        self.returncode = await asyncio.shield(self._exit_status)
        return self.returncode


class SandboxHost:
    """One bwrap sandbox with a server inside that starts commands on request."""

    def __init__(self, sandbox_args: list[str], *, socket_filter: bool = True) -> None:
        self.sandbox_args = list(sandbox_args)
        self.identity = bound_paths_identity(self.sandbox_args)
        self.socket_filter = socket_filter
        self._mount_points = _mount_points(self.sandbox_args)
        self._mountinfo: int | None = None
        self._mount_watch: select.poll | None = None
        self._mounts_seen_intact = False
        self.server_pid: int | None = None
        """The server's pid outside the sandbox (the namespace's init)."""
        self.pid_namespace: int | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._socket: socket.socket | None = None
        self._replies: _Replies | None = None
        self._reader: asyncio.Task[None] | None = None
        self._send_lock = asyncio.Lock()
        self._next_id = 0
        self._requests: dict[int, _Request] = {}
        self._closed = False

    @property
    def alive(self) -> bool:
        """Whether the host can start commands."""
        return not self._closed and self._reader is not None and not self._reader.done()

    def mounts_intact(self) -> bool:
        """Whether every mount the host was started with is still there: removing a folder on the
        host (``rm -rf .git``) silently takes its read-only bind out of the sandbox, and the
        folder made in its place may even reuse the inode number.

        The mount table is read once, through a descriptor of the sandbox's ``mountinfo`` kept
        open (it names the namespace, not a pid that could be reused); after that the kernel
        says when to read it again: ``poll`` reports ``POLLPRI`` on that descriptor once any
        mount of the namespace has changed since the last look (a lazy unmount of a deleted
        folder included), so an unchanged table costs one ``poll`` and no read."""
        if self.server_pid is None:
            return False
        try:
            if self._mountinfo is None:
                self._mountinfo = os.open(f"/proc/{self.server_pid}/mountinfo", os.O_RDONLY | os.O_CLOEXEC)
                self._mount_watch = select.poll()
                self._mount_watch.register(self._mountinfo, select.POLLPRI)
            elif self._mounts_seen_intact and self._mount_watch is not None and not self._mount_watch.poll(0):
                return True
            # poll has reset the change mark; a change from here on shows in the read or the next poll
            present = {_unescape(line.split(b" ", 5)[4]) for line in _read_all(self._mountinfo).splitlines()}
        except (OSError, IndexError):
            return False
        self._mounts_seen_intact = self._mount_points <= present
        return self._mounts_seen_intact

    @property
    def busy(self) -> bool:
        """Whether commands it started are still running (or starting)."""
        return bool(self._requests)

    async def start(self, timeout: float = START_TIMEOUT_SECONDS) -> None:
        """Start bwrap and its server; raises :class:`SandboxHostError` when it does not come up."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        info_read, info_write = os.pipe()
        filter_fd = filter_pipe() if self.socket_filter else None
        fds = [theirs.fileno(), info_write, *([] if filter_fd is None else [filter_fd])]
        options = [*self.sandbox_args, "--as-pid-1", "--info-fd", str(info_write)]
        if filter_fd is not None:
            options += ["--seccomp", str(filter_fd)]
        argv = [*options, "--", sys.executable, "-I", "-S", str(server_program()), str(theirs.fileno())]
        try:
            self._process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=fds,
                env={"PATH": os.environ.get("PATH", os.defpath)},
                start_new_session=True,
            )
        except OSError as exc:
            ours.close()
            os.close(info_read)
            raise SandboxHostError(f"bwrap failed to start ({exc})") from None
        finally:
            theirs.close()
            os.close(info_write)
            if filter_fd is not None:
                os.close(filter_fd)
        register_group(self._process.pid)
        ours.setblocking(False)
        self._socket = ours
        self._replies = _Replies(ours)
        info = await read_bwrap_info(info_read)
        self.server_pid = info.get("child-pid")
        self.pid_namespace = info.get("pid-namespace")
        try:
            first = await asyncio.wait_for(self._replies.next(), timeout)
        except (TimeoutError, OSError):
            first = None
        if first is None or first[0] != ["ready"]:
            why = await self._stderr_tail()
            await self.close()
            raise SandboxHostError(f"the sandbox host did not start{f' ({why})' if why else ''}")
        self._reader = asyncio.get_running_loop().create_task(self._read_replies(), name="sandbox-host")

    async def spawn(self, argv: list[str], cwd: str, env: dict[str, str], output_fd: int) -> HostedProcess:
        """Start ``argv`` in the sandbox with stdout and stderr on ``output_fd`` (which the
        caller still owns and closes)."""
        if not self.alive or self._socket is None:
            raise SandboxHostError("the sandbox host has stopped")
        loop = asyncio.get_running_loop()
        self._next_id += 1
        request_id = self._next_id
        request = self._requests[request_id] = _Request(loop.create_future(), loop.create_future())
        body = marshal.dumps((list(argv), cwd, sandbox_environment(env)))
        try:
            async with self._send_lock:
                await self._send_header(len(body).to_bytes(4, "big") + request_id.to_bytes(8, "big"), output_fd)
                await loop.sock_sendall(self._socket, body)
        except OSError as exc:
            self._requests.pop(request_id, None)
            raise SandboxHostError(f"the sandbox host stopped ({exc})") from None
        # An OSError here is the server's: it could not start this command (fork failed).
        return HostedProcess(await request.started, request.exit_status)

    async def close(self) -> None:
        """Stop the host (commands still running are ended with it: they die with the server)."""
        self._closed = True
        if self._socket is not None:
            with contextlib.suppress(OSError):  # the server sees the end of its requests, the reader its replies'
                self._socket.shutdown(socket.SHUT_RDWR)
        process = self._process
        if process is not None and process.returncode is None:
            try:
                await asyncio.wait_for(process.wait(), 2.0)
            except TimeoutError:
                if self.server_pid is not None:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(self.server_pid, signal.SIGKILL)  # the namespace goes with its init
                signal_group(process.pid, signal.SIGKILL)
                await process.wait()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._socket is not None:
            self._socket.close()
        if self._replies is not None:
            self._replies.discard_fds()
        if self._mountinfo is not None:
            os.close(self._mountinfo)
            self._mountinfo, self._mount_watch = None, None

    # ------------------------------------------------------------------ internals

    async def _send_header(self, header: bytes, fd: int) -> None:
        assert self._socket is not None
        loop = asyncio.get_running_loop()
        rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]).tobytes())]
        while True:
            try:
                sent = self._socket.sendmsg([header], rights)
                break
            except BlockingIOError:
                await wait_ready(self._socket.fileno(), write=True)
        if sent < len(header):
            await loop.sock_sendall(self._socket, header[sent:])

    async def _read_replies(self) -> None:
        assert self._replies is not None
        try:
            while (reply := await self._replies.next()) is not None:
                self._handle(*reply)
        except (OSError, ValueError):
            pass
        finally:
            self._closed = True
            requests, self._requests = self._requests, {}
            for request in requests.values():
                if not request.started.done():
                    # Handed over, never confirmed: the command may have started (and died with the
                    # namespace). Never start it twice.
                    request.started.set_exception(CommandFateUnknownError(
                        "The sandbox stopped while starting the command, so it is not known whether the "
                        "command ran. Check its effects before running it again."))
                _resolve(request.exit_status, None)

    def _handle(self, words: list[str], fd: int | None) -> None:
        kind = words[0] if words else ""
        number = int(words[1]) if len(words) > 1 and words[1].isdigit() else None
        request = self._requests.get(number) if number is not None else None
        if request is not None and number is not None:
            if kind == "pid" and not request.started.done():
                inner = int(words[2]) if len(words) > 2 and words[2].isdigit() else None
                outer = _pidfd_pid(fd) if fd is not None else self._outer_pid(inner)
                fd = None  # _pidfd_pid closed it
                request.started.set_result(outer)
            elif kind == "exit" and len(words) > 2 and words[2].lstrip("-").isdigit():
                del self._requests[number]
                _resolve(request.started, None)
                _resolve(request.exit_status, int(words[2]))
            elif kind == "error" and not request.started.done():
                del self._requests[number]
                request.started.set_exception(OSError(" ".join(words[2:])))
                _resolve(request.exit_status, None)
        if fd is not None:
            os.close(fd)

    def _outer_pid(self, inner: int | None) -> int | None:
        """Without pidfds: the process of the server's namespace whose pid there is ``inner``."""
        if inner is None or self.pid_namespace is None:
            return None
        for row in process_table() or []:
            with contextlib.suppress(OSError, ValueError):
                if os.stat(f"/proc/{row.pid}/ns/pid").st_ino != self.pid_namespace:
                    continue
                with open(f"/proc/{row.pid}/status", "rb") as handle:
                    for line in handle:
                        if line.startswith(b"NSpid:"):
                            pids = line.split()[1:]
                            if len(pids) >= 2 and int(pids[-1]) == inner:
                                return row.pid
        return None

    async def _stderr_tail(self) -> str:
        process = self._process
        if process is None or process.stderr is None:
            return ""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(process.wait(), 1.0)
        if process.returncode is None:
            return ""
        data = await process.stderr.read(4096)
        lines = data.decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else f"exit status {process.returncode}"


class SandboxHosts:
    """The current host for a session's sandboxed commands (see the module docstring)."""

    def __init__(self, *, socket_filter: bool = True) -> None:
        self._current: SandboxHost | None = None
        self._retired: list[SandboxHost] = []
        self._lock = asyncio.Lock()
        self.socket_filter = socket_filter

    async def spawn(
        self, sandbox_args: list[str], argv: list[str], cwd: str, env: dict[str, str], output_fd: int
    ) -> HostedProcess:
        """Start ``argv`` in a sandbox made with ``sandbox_args`` (bwrap's arguments before ``--``);
        raises :class:`SandboxHostError` when no host can start it. A host found dead on the way
        is replaced once."""
        try:
            return await self._spawn(sandbox_args, argv, cwd, env, output_fd)
        except SandboxHostError:
            if self._current is not None and self._current.alive:
                raise
            return await self._spawn(sandbox_args, argv, cwd, env, output_fd)

    async def _spawn(
        self, sandbox_args: list[str], argv: list[str], cwd: str, env: dict[str, str], output_fd: int
    ) -> HostedProcess:
        async with self._lock:
            host = self._current
            if (host is None or not host.alive or host.sandbox_args != sandbox_args
                    or host.identity != bound_paths_identity(sandbox_args) or not host.mounts_intact()):
                if host is not None:
                    self._retired.append(host)
                self._current = None
                host = SandboxHost(sandbox_args, socket_filter=self.socket_filter)
                await host.start()
                self._current = host
            await self._close_idle_retired()
        return await host.spawn(argv, cwd, env, output_fd)

    async def close(self) -> None:
        """Stop every host."""
        hosts = [*self._retired, *([self._current] if self._current is not None else [])]
        self._current, self._retired = None, []
        for host in hosts:
            await host.close()

    async def _close_idle_retired(self) -> None:
        keep: list[SandboxHost] = []
        for host in self._retired:
            if host.busy and host.alive:
                keep.append(host)
            else:
                await host.close()
        self._retired = keep


@dataclass(slots=True)
class _Request:
    """One command asked of a host: its outer pid once started, its exit status once ended."""

    started: asyncio.Future[int | None]
    exit_status: asyncio.Future[int | None]


class _Replies:
    """The server's reply lines, each with the file descriptor it carried (if any)."""

    def __init__(self, sock: socket.socket) -> None:
        self._socket = sock
        self._buffer = b""
        self._fds: deque[int] = deque()
        self._eof = False

    async def next(self) -> tuple[list[str], int | None] | None:
        """The next reply (its words, and a pidfd when it says it carries one); None at the end."""
        while b"\n" not in self._buffer:
            if self._eof:
                return None
            if len(self._buffer) > MAX_REPLY_LINE:
                raise ValueError("the sandbox host sent a reply line too long")
            await self._receive()
        line, _, self._buffer = self._buffer.partition(b"\n")
        words = line.decode("utf-8", "replace").split()
        carries = len(words) == 4 and words[0] == "pid" and words[3] == "1"
        fd = self._fds.popleft() if carries and self._fds else None
        return words, fd

    def discard_fds(self) -> None:
        """Close the descriptors no reply claimed."""
        while self._fds:
            os.close(self._fds.popleft())

    async def _receive(self) -> None:
        while True:
            try:
                data, ancillary, _flags, _address = self._socket.recvmsg(65536, _FD_SPACE)
                break
            except BlockingIOError:
                await wait_ready(self._socket.fileno())
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                received = array.array("i")
                received.frombytes(payload[: len(payload) - len(payload) % received.itemsize])
                self._fds.extend(received)
        while len(self._fds) > _MAX_QUEUED_FDS:
            os.close(self._fds.popleft())
        if not data:
            self._eof = True
        self._buffer += data


def _pidfd_pid(fd: int) -> int | None:
    """The pid (as baton sees it) of the process the pidfd ``fd`` refers to; None when it is not
    a pidfd or the process has been reaped. Closes ``fd``."""
    try:
        with open(f"/proc/self/fdinfo/{fd}", "rb") as handle:
            for line in handle:
                if line.startswith(b"Pid:"):
                    pid = int(line.split()[1])
                    return pid if pid > 1 else None
    except (OSError, ValueError, IndexError):
        return None
    finally:
        os.close(fd)
    return None


def _mount_points(bwrap_args: list[str]) -> frozenset[str]:
    """Where ``bwrap_args`` mounts something that can vanish (binds and tmpfs), as real paths."""
    points: set[str] = set()
    for index, flag in enumerate(bwrap_args):
        if flag in ("--bind", "--ro-bind") and index + 2 < len(bwrap_args):
            points.add(os.path.realpath(bwrap_args[index + 2]))
        elif flag == "--tmpfs" and index + 1 < len(bwrap_args):
            points.add(os.path.realpath(bwrap_args[index + 1]))
    points.discard("/")
    return frozenset(points)


def _read_all(fd: int) -> bytes:
    """The whole of a ``/proc`` file open at ``fd``, read from its start."""
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _unescape(field: bytes) -> str:
    """A mountinfo path (space, tab, newline and backslash are written as octal escapes)."""
    if b"\\" not in field:
        return field.decode("utf-8", "surrogateescape")
    return re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), field).decode("utf-8", "surrogateescape")


def _resolve(future: asyncio.Future[int | None], value: int | None) -> None:
    if not future.done():
        future.set_result(value)
