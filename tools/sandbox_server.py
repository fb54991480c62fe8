"""The process that starts sandboxed commands from inside one long-lived bubblewrap sandbox.

Run by :mod:`baton.tools.sandbox_host` as ``python -I -S sandbox_server.py FD`` under bwrap, so
every command it starts inherits the sandbox's mounts and namespaces without paying for a new
sandbox each time (bwrap's set-up costs about 5 ms of CPU per command). It imports only modules
built into the interpreter or written in C (no ``json``, ``socket``, ``signal``, ``selectors``:
their imports would cost more than the server's whole start).

Requests arrive on the socket ``FD``: a 12-byte header (body length, request id; big-endian)
carrying the output pipe's write end as ``SCM_RIGHTS``, then a :mod:`marshal`-encoded body
``(argv, cwd, env)`` (both ends are the same interpreter). Replies go to stdout, a line each:
``ready`` once, then per request ``pid ID PID`` (or ``error ID MESSAGE``) and later
``exit ID STATUS`` with the exit status as asyncio reports it (negative for a signal).

Each command is started with ``posix_spawn`` (no copy of this process) in its own session and
process group (its pid), stdin from ``/dev/null``, stdout and stderr on the pipe. When the socket
closes (baton closed the host, or died: the kernel closes its end), the server kills what it
started and exits; bwrap runs it without ``--die-with-parent`` so that it gets to do so.
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


def _reply(*words: object) -> None:
    posix.write(1, (" ".join(str(word) for word in words).replace("\n", " ") + "\n").encode(errors="replace"))


def _reap(children: dict[int, int]) -> None:
    while children:
        try:
            pid, status = posix.waitpid(-1, posix.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid in children:
            _reply("exit", children.pop(pid), posix.waitstatus_to_exitcode(status))


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
    _reply("ready")
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
                _reply("error", request_id, "no output pipe was passed")
                continue
            try:
                pid = _start(body, fds[0])
            except (OSError, ValueError, TypeError) as exc:
                _reply("error", request_id, exc)
            else:
                children[pid] = request_id
                _reply("pid", request_id, pid)
            finally:
                for extra in fds:
                    posix.close(extra)
        _reap(children)


if __name__ == "__main__":
    main(int(sys.argv[1]))
