"""One long-lived sandbox per set-up, starting every sandboxed command of a session.

Starting bubblewrap costs about 5 ms of CPU (namespaces, mounts), more than the command itself
for the short ``ls``/``grep``/``cat`` calls an agent makes all day. A :class:`SandboxHost` starts
bwrap once, running :mod:`baton.tools.sandbox_server` inside it, and asks that server to start
each command: the command sees exactly the sandbox a fresh bwrap with the same arguments would
give it. :class:`SandboxHosts` keeps one host per set-up: when the arguments change (a protected
path appeared, the network was allowed, a bound directory was replaced), a new host starts and
the old one ends once its commands have.

A hosted command is the leader of its own process group, as a directly started one is, so
timeouts, aborts and :func:`baton.tools.processes.register_group` work unchanged; its exit status
comes from the server. When baton exits or dies, the server sees its socket close and kills what
it started. If the server dies under a running command (a command may kill it), the command keeps
running in its registered group; its exit status is read once it ends (baton is its subreaper) or
reported as unknown.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import marshal
import os
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from baton.providers.errors import BatonError
from baton.tools.proc_table import process_table
from baton.tools.processes import register_group
from baton.tools.sandbox import bound_paths_identity
from baton.tools.shell import CommandLaunchError, signal_group

SERVER_SCRIPT = Path(__file__).with_name("sandbox_server.py")
START_TIMEOUT_SECONDS = 10.0
_ORPHAN_POLL_SECONDS = 0.05


class SandboxHostError(BatonError):
    """The host could not start, or stopped before it was handed a command (which can safely be
    started again elsewhere)."""


class CommandFateUnknownError(CommandLaunchError):
    """The host stopped after it was handed a command and before it said it started it, and the
    command is not running: it may have run and ended, or never started. Starting it again could
    run it twice."""


class HostedProcess:
    """A command started by a host: the parts of ``asyncio.subprocess.Process`` bash uses."""

    def __init__(self, pid: int, exit_status: asyncio.Future[int | None]) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._exit_status = exit_status

    async def wait(self) -> int | None:
        """Wait for the command to end; its exit status (negative: killed by that signal), or
        None when it cannot be known."""
        self.returncode = await asyncio.shield(self._exit_status)
        return self.returncode


class SandboxHost:
    """One bwrap sandbox with a server inside that starts commands on request."""

    def __init__(self, sandbox_args: list[str]) -> None:
        self.sandbox_args = list(sandbox_args)
        self.identity = bound_paths_identity(self.sandbox_args)
        self._process: asyncio.subprocess.Process | None = None
        self._socket: socket.socket | None = None
        self._reader: asyncio.Task[None] | None = None
        self._send_lock = asyncio.Lock()
        self._next_id = 0
        self._requests: dict[int, _Request] = {}
        self._closed = False
        self._orphan_watches: set[asyncio.Task[None]] = set()

    @property
    def alive(self) -> bool:
        """Whether the host can start commands."""
        return not self._closed and self._reader is not None and not self._reader.done()

    @property
    def busy(self) -> bool:
        """Whether commands it started are still running (or starting)."""
        return bool(self._requests)

    async def start(self, timeout: float = START_TIMEOUT_SECONDS) -> None:
        """Start bwrap and its server; raises :class:`SandboxHostError` when it does not come up."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        # Without --die-with-parent: when baton dies the server sees its socket close and kills the
        # commands it started before it exits (a SIGKILL from bwrap would leave them running).
        options = [arg for arg in self.sandbox_args if arg != "--die-with-parent"]
        argv = [*options, "--", sys.executable, "-I", "-S", str(SERVER_SCRIPT), str(theirs.fileno())]
        try:
            self._process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(theirs.fileno(),),
                env={"PATH": os.environ.get("PATH", os.defpath)},
                start_new_session=True,
                limit=1 << 20,
            )
        except OSError as exc:
            ours.close()
            raise SandboxHostError(f"bwrap failed to start ({exc})") from None
        finally:
            theirs.close()
        register_group(self._process.pid)
        ours.setblocking(False)
        self._socket = ours
        stdout = self._process.stdout
        assert stdout is not None
        try:
            line = await asyncio.wait_for(stdout.readline(), timeout)
        except TimeoutError:
            line = b""
        if line != b"ready\n":
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
        request = self._requests[request_id] = _Request(
            loop.create_future(), loop.create_future(), os.fstat(output_fd).st_ino
        )
        body = marshal.dumps((list(argv), cwd, dict(env)))
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
            self._socket.close()
        process = self._process
        if process is not None and process.returncode is None:
            try:
                await asyncio.wait_for(process.wait(), 2.0)
            except TimeoutError:
                signal_group(process.pid, signal.SIGKILL)
                await process.wait()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader

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
                writable = loop.create_future()
                loop.add_writer(self._socket.fileno(), writable.set_result, None)
                try:
                    await writable
                finally:
                    loop.remove_writer(self._socket.fileno())
        if sent < len(header):
            await loop.sock_sendall(self._socket, header[sent:])

    async def _read_replies(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        stdout = self._process.stdout
        loop = asyncio.get_running_loop()
        try:
            while line := await stdout.readline():
                kind, _, rest = line.decode("utf-8", "replace").rstrip("\n").partition(" ")
                number, _, value = rest.partition(" ")
                request = self._requests.get(int(number)) if number.isdigit() else None
                if request is None:
                    continue
                if kind == "pid":
                    request.pid = int(value)
                    _resolve(request.started, request.pid)
                elif kind == "exit":
                    del self._requests[int(number)]
                    _resolve(request.exit_status, int(value))
                elif kind == "error":
                    del self._requests[int(number)]
                    if not request.started.done():
                        request.started.set_exception(OSError(value))
        finally:
            self._closed = True
            requests, self._requests = self._requests, {}
            for request in requests.values():
                if request.pid is None and not request.started.done():
                    # Handed over, never confirmed: the command may have started (it may be what
                    # killed the server). Find it by its output pipe; never start it twice.
                    request.pid = _pipe_writer(request.output_inode)
                    if request.pid is None:
                        request.started.set_exception(CommandFateUnknownError(
                            "The sandbox stopped while starting the command (did the command end it?), "
                            "so it is not known whether the command ran. Check its effects before running it "
                            "again."))
                    else:
                        request.started.set_result(request.pid)
                if request.pid is None:
                    _resolve(request.exit_status, None)
                    continue
                watch = loop.create_task(_watch_orphan(request.pid, request.exit_status),
                                         name=f"sandbox-orphan-{request.pid}")
                self._orphan_watches.add(watch)
                watch.add_done_callback(self._orphan_watches.discard)

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

    def __init__(self) -> None:
        self._current: SandboxHost | None = None
        self._retired: list[SandboxHost] = []
        self._lock = asyncio.Lock()

    async def spawn(
        self, sandbox_args: list[str], argv: list[str], cwd: str, env: dict[str, str], output_fd: int
    ) -> HostedProcess:
        """Start ``argv`` in a sandbox made with ``sandbox_args`` (bwrap's arguments before ``--``);
        raises :class:`SandboxHostError` when no host can start it. A host found dead on the way
        (a command killed its server) is replaced once."""
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
                    or host.identity != bound_paths_identity(sandbox_args)):
                if host is not None:
                    self._retired.append(host)
                self._current = None
                host = SandboxHost(sandbox_args)
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
    """One command asked of a host: its pid once started, its exit status once ended."""

    started: asyncio.Future[int]
    exit_status: asyncio.Future[int | None]
    output_inode: int
    """The command's output pipe: how to find the command if the server dies before naming it."""
    pid: int | None = None


def _resolve(future: asyncio.Future[Any], value: int | None) -> None:
    if not future.done():
        future.set_result(value)


def _pipe_writer(inode: int) -> int | None:
    """The process group leader writing to pipe ``inode`` (a hosted command leads its group),
    found in ``/proc``; None when no such process is left."""
    target = f"pipe:[{inode}]"
    for row in process_table() or []:
        if row.pid != row.pgid or row.state in (b"Z", b"X"):
            continue
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{row.pid}/fd/1") == target:
                return row.pid
    return None


async def _watch_orphan(pid: int, done: asyncio.Future[int | None]) -> None:
    """A command whose server died: baton is its subreaper, so reap it and keep its status."""
    while not done.done():
        try:
            reaped, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # not (yet) re-parented to baton
            if not os.path.exists(f"/proc/{pid}"):
                done.set_result(None)
                return
        else:
            if reaped:
                done.set_result(os.waitstatus_to_exitcode(status))
                return
        await asyncio.sleep(_ORPHAN_POLL_SECONDS)
