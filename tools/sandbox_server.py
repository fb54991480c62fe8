"""The process that starts sandboxed commands from inside one long-lived bubblewrap sandbox.

Run by :mod:`baton.tools.sandbox_host` as ``python -I -S sandbox_server.py FD`` under bwrap, as
pid 1 of the sandbox's PID namespace (``--as-pid-1``), so every command it starts inherits the
sandbox's mounts, namespaces and seccomp filter without paying for a new sandbox each time
(bwrap's set-up costs about 5 ms of CPU per command). It imports only modules built into the
interpreter or written in C (no ``json``, ``socket``, ``signal``, ``selectors``: their imports
would cost more than the server's whole start).

Being the namespace's init, it reaps every process left in it, and no command can signal it
(the kernel drops a signal sent to a namespace's init from inside unless it has a handler, even
SIGKILL). When it exits, the kernel kills everything left in the namespace: nothing a command
started outlives the server.

Requests arrive on the socket ``FD``: a 12-byte header (body length, request id; big-endian)
carrying the output pipe's write end as ``SCM_RIGHTS``, then a :mod:`marshal`-encoded body
``(argv, cwd, env)`` (both ends are the same interpreter). Replies go back on the same socket
(a command can reopen the server's stdout through ``/proc/1/fd/1``, never a socket), a line
each: ``ready`` once, then per request ``pid ID PID N`` (or ``error ID MESSAGE``) and later
``exit ID STATUS`` with the exit status as asyncio reports it (negative for a signal). ``PID`` is
the pid inside the namespace; ``N`` is 1 when the line carries a pidfd of the command (baton reads
the pid it has outside from the pidfd), 0 where the kernel has no pidfds.

Each command is started with ``posix_spawn`` (no copy of this process) in its own session and
process group (its pid), stdin from ``/dev/null``, stdout and stderr on the pipe. When the socket
closes (baton closed the host, or died: the kernel closes its end), the server kills what it
started and exits, and the namespace goes with it.
"""

import _signal
import _socket
import marshal
import posix
import select
import sys

HEADER_SIZE = 12
FD_SIZE = 4
"""Bytes of one file descriptor in ``SCM_RIGHTS`` data (a C int)."""


def _receive_exact(sock: _socket.socket, size: int) -> bytes:
    chunks = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


Request = tuple[list[str], str, dict[str, str]]
"""``(argv, cwd, env)``."""


def _receive_request(sock: _socket.socket) -> tuple[int, Request, list[int]]:
    header, ancillary, _flags, _address = sock.recvmsg(HEADER_SIZE, _socket.CMSG_LEN(FD_SIZE))
    fds = []
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            fds += [int.from_bytes(data[i : i + FD_SIZE], sys.byteorder, signed=True)
                    for i in range(0, len(data) - FD_SIZE + 1, FD_SIZE)]
    if not header:
        raise EOFError
    if len(header) < HEADER_SIZE:
        header += _receive_exact(sock, HEADER_SIZE - len(header))
    length = int.from_bytes(header[:4], "big")
    request_id = int.from_bytes(header[4:], "big")
    return request_id, marshal.loads(_receive_exact(sock, length)), fds


def _start(body: Request, output_fd: int) -> int:
    argv, cwd, env = body
    posix.chdir(cwd)  # posix_spawn has no working-directory action; the child inherits ours
    return posix.posix_spawnp(
        argv[0],
        argv,
        env,
        setsid=True,
        setsigdef=(_signal.SIGPIPE, _signal.SIGINT),
        file_actions=[
            (posix.POSIX_SPAWN_OPEN, 0, "/dev/null", posix.O_RDONLY, 0),
            (posix.POSIX_SPAWN_DUP2, output_fd, 1),
            (posix.POSIX_SPAWN_DUP2, output_fd, 2),
            (posix.POSIX_SPAWN_CLOSE, output_fd),
        ],
    )


def _end_all(children: dict[int, int]) -> None:
    """Baton has gone (or closed the host): its commands go with it, as under ``--die-with-parent``."""
    for pid in children:
        try:
            posix.killpg(pid, _signal.SIGKILL)
        except OSError:
            pass


def _reply(sock: _socket.socket, *words: object, fd: int = -1) -> None:
    line = (" ".join(str(word) for word in words).replace("\n", " ") + "\n").encode(errors="replace")
    if fd < 0:
        sock.sendall(line)
        return
    sent = sock.sendmsg([line], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fd.to_bytes(FD_SIZE, sys.byteorder))])
    if sent < len(line):
        sock.sendall(line[sent:])


def _reap(sock: _socket.socket, children: dict[int, int]) -> None:
    """Collect every ended process (as pid 1, orphans of the commands too); report the commands."""
    while True:
        try:
            pid, status = posix.waitpid(-1, posix.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid in children:
            _reply(sock, "exit", children.pop(pid), posix.waitstatus_to_exitcode(status))


def _report_started(sock: _socket.socket, request_id: int, pid: int) -> None:
    try:
        pidfd = posix.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfds in this kernel (before 5.3)
        _reply(sock, "pid", request_id, pid, 0)
        return
    try:
        _reply(sock, "pid", request_id, pid, 1, fd=pidfd)
    finally:
        posix.close(pidfd)


def main(control_fd: int) -> None:
    """Serve requests on ``control_fd`` until it closes."""
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)  # the terminal's Ctrl+C is baton's to handle
    posix.set_inheritable(control_fd, False)
    sock = _socket.socket(fileno=control_fd)
    wake_read, wake_write = posix.pipe()
    posix.set_blocking(wake_read, False)
    posix.set_blocking(wake_write, False)
    _signal.set_wakeup_fd(wake_write)
    _signal.signal(_signal.SIGCHLD, lambda _signum, _frame: None)  # wakes poll() through wake_write
    poller = select.poll()
    poller.register(control_fd, select.POLLIN)
    poller.register(wake_read, select.POLLIN)
    children: dict[int, int] = {}
    _reply(sock, "ready")
    while True:
        for fd, _events in poller.poll():
            if fd != control_fd:
                try:
                    while posix.read(wake_read, 512):
                        pass
                except BlockingIOError:
                    pass
                continue
            try:
                request_id, body, fds = _receive_request(sock)
            except (EOFError, ConnectionError):
                _end_all(children)
                return
            if not fds:
                _reply(sock, "error", request_id, "no output pipe was passed")
                continue
            try:
                pid = _start(body, fds[0])
            except (OSError, ValueError, TypeError) as exc:
                _reply(sock, "error", request_id, exc)
            else:
                children[pid] = request_id
                _report_started(sock, request_id, pid)
            finally:
                for extra in fds:
                    posix.close(extra)
        _reap(sock, children)


if __name__ == "__main__":
    try:
        main(int(sys.argv[1]))
    except (BrokenPipeError, ConnectionError):
        pass  # baton went away while a reply was on its way
