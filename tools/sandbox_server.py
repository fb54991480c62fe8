"""The process that starts sandboxed commands from inside one long-lived bubblewrap sandbox.

Run by :mod:`baton.tools.sandbox_host` as ``python -I -S sandbox_server.py FD`` under bwrap, so
every command it starts inherits the sandbox's mounts and namespaces without paying for a new
sandbox each time (bwrap's set-up costs about 5 ms of CPU per command). Standard library only:
it runs without site-packages.

Requests arrive on the socket ``FD``: a 12-byte header (body length, request id) carrying the
output pipe's write end as ``SCM_RIGHTS``, then a JSON body ``{"argv", "cwd", "env"}``. Replies go
to stdout, one JSON object a line: ``{"ready": true}`` once, then per request ``{"id", "pid"}``
(or ``{"id", "error"}``) and later ``{"id", "exit"}`` with the exit status as asyncio reports it
(negative for a signal). Each command is started with ``posix_spawn`` (no copy of this process)
in its own session and process group (its pid), stdin from ``/dev/null``, stdout and stderr on
the pipe. When the socket closes (baton closed the host, or died: the kernel closes its end),
the server kills what it started and exits; bwrap runs it without ``--die-with-parent`` so that it
gets to do so.
"""

from __future__ import annotations

import array
import json
import os
import selectors
import signal
import socket
import struct
import sys

HEADER = struct.Struct("!IQ")


def _receive_exact(sock: socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _receive_request(sock: socket.socket) -> tuple[int, dict[str, object], list[int]]:
    fds = array.array("i")
    header, ancillary, _flags, _address = sock.recvmsg(HEADER.size, socket.CMSG_LEN(4 * fds.itemsize))
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
    if not header:
        raise EOFError
    if len(header) < HEADER.size:
        header += _receive_exact(sock, HEADER.size - len(header))
    length, request_id = HEADER.unpack(header)
    body = json.loads(_receive_exact(sock, length))
    return request_id, body, list(fds)


def _start(body: dict[str, object], output_fd: int) -> int:
    argv = [str(part) for part in body["argv"]]  # type: ignore[attr-defined]
    env = {str(k): str(v) for k, v in body["env"].items()}  # type: ignore[attr-defined]
    os.chdir(str(body["cwd"]))  # posix_spawn has no working-directory action; the child inherits ours
    return os.posix_spawnp(
        argv[0],
        argv,
        env,
        setsid=True,
        setsigdef=(signal.SIGPIPE, signal.SIGINT),
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, output_fd, 1),
            (os.POSIX_SPAWN_DUP2, output_fd, 2),
            (os.POSIX_SPAWN_CLOSE, output_fd),
        ],
    )


def _end_all(children: dict[int, int]) -> None:
    """Baton has gone (or closed the host): its commands go with it, as under ``--die-with-parent``."""
    for pid in children:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass


def _reply(message: dict[str, object]) -> None:
    os.write(1, (json.dumps(message) + "\n").encode())


def main(control_fd: int) -> None:
    """Serve requests on ``control_fd`` until it closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the terminal's Ctrl+C is baton's to handle
    os.set_inheritable(control_fd, False)
    sock = socket.socket(fileno=control_fd)
    sock.setblocking(True)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    os.set_blocking(wake_read, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)
    children: dict[int, int] = {}
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    selector.register(wake_read, selectors.EVENT_READ)
    _reply({"ready": True})
    while True:
        for key, _events in selector.select():
            if key.fileobj is sock:
                try:
                    request_id, body, fds = _receive_request(sock)
                except (EOFError, ConnectionError):
                    _end_all(children)
                    return
                if not fds:
                    _reply({"id": request_id, "error": "no output pipe was passed"})
                    continue
                try:
                    pid = _start(body, fds[0])
                except (OSError, KeyError, TypeError, AttributeError) as exc:
                    _reply({"id": request_id, "error": str(exc)})
                else:
                    children[pid] = request_id
                    _reply({"id": request_id, "pid": pid})
                finally:
                    for fd in fds:
                        os.close(fd)
            else:
                try:
                    while os.read(wake_read, 512):
                        pass
                except BlockingIOError:
                    pass
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid in children:
                _reply({"id": children.pop(pid), "exit": os.waitstatus_to_exitcode(status)})


if __name__ == "__main__":
    main(int(sys.argv[1]))
