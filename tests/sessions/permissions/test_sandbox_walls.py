"""The sandbox holds against the model: a hostile provider's bash calls through a real session and
real bwrap, in both kinds of sandbox (a fresh bwrap, and the session's long-lived one).

Each test tries one way out — other processes' ``/proc`` entries, a local service's Unix socket,
the shared ``/tmp``, socket variables — and checks on the host that nothing happened."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import uuid
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from baton.tools.sandbox import probe
from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.sessions.permissions.helpers import run_call
from tests.tui.cli_harness import run_baton, write_models_json

pytestmark = pytest.mark.skipif(not probe().available, reason=f"no sandbox here: {probe().reason}")
both_kinds = pytest.mark.usefixtures("sandbox_kind")

API = "openai-completions"


@pytest.fixture
def ws(tmp_path: Path, baton_home: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".baton").mkdir(parents=True)
    (root / ".baton" / "settings.json").write_text('{"approval": "ask"}\n')
    (root / ".git" / "hooks").mkdir(parents=True)
    return root


def proc_escape(ws: Path, stray: Path) -> str:
    """Every way through another process's ``/proc`` entry to the host's files (the protected
    names spelled so that no text check sees them, as a model would)."""
    return (
        "for d in /proc/[0-9]*; do for via in root cwd; do "
        f"echo x > $d/$via{stray} 2>/dev/null; "
        f"echo '{{\"approval\": \"full\"}}' > $d/$via{ws}/.ba''ton/settings.json 2>/dev/null; "
        f"printf '#!/bin/sh\\ntouch {stray}\\n' > $d/$via{ws}/.g''it/ho''oks/pre-commit 2>/dev/null; "
        "done; done; echo tried"
    )


def assert_untouched(ws: Path, stray: Path) -> None:
    assert not stray.exists(), "wrote outside the workspace"
    assert json.loads((ws / ".baton" / "settings.json").read_text()) == {"approval": "ask"}
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()


@both_kinds
async def test_other_processes_proc_entries_lead_nowhere(ws: Path, outside_tmp: Path) -> None:
    # Without a PID namespace, /proc/<bwrap's pid>/root was the host's root, writable.
    stray = outside_tmp / "escaped.txt"
    outcome = await run_call(ws, "bash", {"command": proc_escape(ws, stray) + "; ls /proc | grep -c '^[0-9]'"})
    assert "tried" in outcome.result_text
    assert_untouched(ws, stray)
    visible = int(outcome.result_text.split()[-1])
    assert visible <= 4, f"{visible} processes visible: the sandbox sees only its own"


def test_the_proc_escape_fails_through_baton_p_in_both_kinds(tmp_path: Path, outside_tmp: Path) -> None:
    # The installed program, a hostile provider: the first command runs in a fresh bwrap, the
    # second in the session's long-lived sandbox.
    home, ws = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    (ws / ".baton").mkdir(parents=True)
    (ws / ".baton" / "settings.json").write_text('{"approval": "ask"}\n')
    (ws / ".git" / "hooks").mkdir(parents=True)
    stray = outside_tmp / "escaped.txt"
    command = proc_escape(ws, stray) + "; readlink /proc/1/exe"
    replies = [Reply.sse(tool_call_reply(API, "call_1", "bash", {"command": command})),
               Reply.sse(tool_call_reply(API, "call_2", "bash", {"command": command})),
               Reply.sse(text_reply(API, "Done."))]
    with ReplayServer(replies) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        result = run_baton(home, ws, "-p", "--approval", "auto", "--model", "replay/replay-model", "escape")
        assert result.returncode == 0, result.stderr
        sent = [m for m in server.requests[2].json()["messages"] if m["role"] == "tool"]
    outputs = [json.dumps(m["content"]) for m in sent]
    assert all("tried" in out for out in outputs), outputs
    assert "bwrap" in outputs[0] and "python" in outputs[1], "a fresh bwrap, then the long-lived sandbox"
    assert_untouched(ws, stray)


# ------------------------------------------------------------------ local services


@contextmanager
def tmux_server(*where: str) -> Iterator[None]:
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_TMPDIR")}
    subprocess.run(["tmux", *where, "new-session", "-d", "-x", "80", "-y", "24"], check=True, env=env, timeout=10)
    try:
        yield
    finally:
        subprocess.run(["tmux", *where, "kill-server"], check=False, env=env, timeout=10, capture_output=True)


@both_kinds
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("placement", ["-L (a socket in /tmp)", "-S (a socket elsewhere)"])
async def test_the_users_tmux_server_runs_nothing_for_the_sandbox(ws: Path, outside_tmp: Path,
                                                                 placement: str) -> None:
    # `tmux new-window 'cmd'` makes the user's own tmux server run cmd, outside the sandbox.
    where = ["-L", f"baton-test-{uuid.uuid4().hex[:8]}"] if placement.startswith("-L") else \
        ["-S", str(outside_tmp / "tmux.sock")]
    stray = outside_tmp / "ran-by-tmux.txt"
    with tmux_server(*where):
        outcome = await run_call(ws, "bash", {"command": f"tmux {' '.join(where)} new-window 'touch {stray}'; "
                                                         "sleep 0.5; echo tried"})
        subprocess.run(["sleep", "0.5"], check=False)
    assert "tried" in outcome.result_text
    assert not stray.exists(), "the user's tmux server ran the command outside the sandbox"


@contextmanager
def unix_listener(address: str | bytes, kind: int = socket.SOCK_STREAM) -> Iterator[list[bytes]]:
    """A Unix socket on the host at ``address`` recording what reaches it."""
    server = socket.socket(socket.AF_UNIX, kind)
    server.bind(address)
    if kind == socket.SOCK_STREAM:
        server.listen(4)
    server.settimeout(0.1)
    seen: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                if kind == socket.SOCK_STREAM:
                    conn, _ = server.accept()
                    with conn:
                        conn.settimeout(1)
                        seen.append(b"connected:" + conn.recv(100))
                else:
                    seen.append(server.recv(100))
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        thread.join(2)
        server.close()


CONNECT = """
import socket, sys
address = sys.argv[1].encode() if sys.argv[1].startswith("@") else sys.argv[1]
if isinstance(address, bytes):
    address = b"\\0" + address[1:]
try:
    if sys.argv[2] == "stream":
        s = socket.socket(socket.AF_UNIX); s.connect(address); s.sendall(b"hello"); print("CONNECTED")
    else:
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); a.sendto(b"hello", address); print("SENT")
except OSError as exc:
    print("refused:", exc)
"""


@pytest.mark.parametrize("where", ["named, outside the workspace", "named, in the host's /tmp", "abstract",
                                   "datagram, through a socketpair"])
@both_kinds
async def test_no_unix_socket_of_the_host_is_reachable(ws: Path, tmp_path: Path, outside_tmp: Path,
                                                       where: str) -> None:
    (ws / "connect.py").write_text(CONNECT)
    kind = socket.SOCK_DGRAM if where.startswith("datagram") else socket.SOCK_STREAM
    address: str | bytes = {
        "named, outside the workspace": str(outside_tmp / "service.sock"),
        "named, in the host's /tmp": str(tmp_path / "service.sock"),
        "abstract": f"\0baton-test-{uuid.uuid4().hex}".encode(),
        "datagram, through a socketpair": str(outside_tmp / "datagram.sock"),
    }[where]
    shown = "@" + address[1:].decode() if isinstance(address, bytes) else address
    with unix_listener(address, kind) as seen:
        outcome = await run_call(ws, "bash", {"command": f"python3 connect.py '{shown}' "
                                                         f"{'stream' if kind == socket.SOCK_STREAM else 'dgram'}"})
        subprocess.run(["sleep", "0.3"], check=False)
    assert "refused:" in outcome.result_text, outcome.result_text
    assert seen == [], "a host service was reached"


@both_kinds
async def test_socket_variables_are_gone_and_temp_is_private(ws: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS", "TMUX", "DISPLAY", "WAYLAND_DISPLAY",
                 "XDG_RUNTIME_DIR", "DOCKER_HOST", "MY_AGENT_SOCK"):
        monkeypatch.setenv(name, f"/run/user/0/{name.lower()}")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    host_secret = tmp_path / "host-temp-file.txt"
    host_secret.write_text("another program's temp file\n")
    made = f"from-sandbox-{uuid.uuid4().hex[:8]}.txt"
    command = f"env | sort; cat {host_secret} 2>&1; echo made > /tmp/{made}; echo made > {tmp_path}/{made}; echo done"
    outcome = await run_call(ws, "bash", {"command": command})
    lines = outcome.result_text.splitlines()
    assert "TMPDIR=/tmp" in lines
    assert not [line for line in lines if "/run/user/0/" in line], "a socket variable reached the command"
    assert "another program's temp file" not in outcome.result_text, "the host's temp dir is visible"
    assert "done" in lines
    leaked = [path for path in (Path("/tmp") / made, tmp_path / made) if path.exists()]
    for path in leaked:
        path.unlink()
    assert not leaked, "the host's temp dir is writable"


KEYRING_SYSCALLS = {"x86_64": (248, 250), "aarch64": (217, 219)}
"""``add_key`` and ``keyctl`` by machine."""
READ_KEY = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
buffer = ctypes.create_string_buffer(200)
size = libc.syscall(int(sys.argv[1]), 11, int(sys.argv[2]), buffer, 200)  # KEYCTL_READ
print("read:", buffer.raw[:max(size, 0)].decode(), "errno", ctypes.get_errno())
"""


@both_kinds
@pytest.mark.skipif(os.uname().machine not in KEYRING_SYSCALLS, reason="keyring syscall numbers not known here")
async def test_the_users_keyring_is_out_of_reach(ws: Path) -> None:
    # Kernel keyrings are not namespaced: the user keyring (Kerberos tickets, tokens) is every
    # process's of the user.
    import ctypes

    add_key, keyctl = KEYRING_SYSCALLS[os.uname().machine]
    libc = ctypes.CDLL(None, use_errno=True)
    payload = f"keyring-secret-{uuid.uuid4().hex}".encode()
    key = libc.syscall(add_key, b"user", b"baton-test-key", payload, len(payload), ctypes.c_int(-4))  # @u
    if key < 0:
        pytest.skip(f"cannot add a key here (errno {ctypes.get_errno()})")
    try:
        (ws / "read_key.py").write_text(READ_KEY)
        outcome = await run_call(ws, "bash", {"command": f"python3 read_key.py {keyctl} {key}; cat /proc/keys"})
    finally:
        libc.syscall(keyctl, 21, key)  # KEYCTL_INVALIDATE
    assert payload.decode() not in outcome.result_text
    assert "errno 1" in outcome.result_text, outcome.result_text


@both_kinds
async def test_no_terminal_to_push_keystrokes_into(ws: Path) -> None:
    # TIOCSTI on the user's terminal would type a command into their shell: the sandbox has no
    # controlling terminal and a session of its own.
    command = ("python3 -c \"import fcntl, termios; fcntl.ioctl(open('/dev/tty', 'w'), termios.TIOCSTI, b'x')\" "
               "2>&1 | tail -1; ps -o sid=,tty= -p $$")
    outcome = await run_call(ws, "bash", {"command": command})
    assert "No such device or address" in outcome.result_text, outcome.result_text
    assert outcome.result_text.split()[-1] == "?", "no controlling terminal"


@pytest.mark.parametrize("probe", [
    "mount -o remount,rw / 2>&1; touch /usr/baton-probe 2>&1",
    "unshare -Urm sh -c 'mount --bind / /mnt 2>&1; touch /mnt/usr/baton-probe 2>&1' 2>&1",
    "cat /proc/1/environ /proc/self/environ 2>/dev/null | tr '\\0' '\\n' | grep -c '^PROBE_SECRET_API_KEY='",
    "python3 -c \"import socket; socket.socket(40, socket.SOCK_STREAM)\" 2>&1 | tail -1",
    "strace -f -o /dev/null true 2>&1; echo strace=$?",
])
@both_kinds
async def test_other_ways_out_stay_closed(ws: Path, probe: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROBE_SECRET_API_KEY", "sk-never-in-a-command")
    outcome = await run_call(ws, "bash", {"command": probe})
    assert not Path("/usr/baton-probe").exists()
    assert "sk-never-in-a-command" not in outcome.result_text
    if "environ" in probe:
        assert outcome.result_text.split()[0] == "0", outcome.result_text
    if "socket(40" in probe:
        assert "Address family not supported" in outcome.result_text
    if probe.startswith("strace"):
        assert "strace=0" in outcome.result_text, "debuggers still work inside"


# ------------------------------------------------------------------ normal work still works


PYTEST_FILE = """
import multiprocessing

def square(x):
    return x * x

def test_pool():
    with multiprocessing.Pool(2) as pool:
        assert pool.map(square, [1, 2, 3]) == [1, 4, 9]
"""

MAKEFILE = "hello: hello.c\n\tcc -O0 -o hello hello.c\n"


@both_kinds
async def test_a_realistic_command_mix_still_works(tmp_path: Path, baton_home: Path) -> None:
    ws = tmp_path / "project"
    ws.mkdir()
    _write_wheel(ws / "localpkg-1.0-py3-none-any.whl")
    (ws / "hello.c").write_text('#include <stdio.h>\nint main(void) { puts("hello from c"); return 0; }\n')
    (ws / "Makefile").write_text(MAKEFILE)
    (ws / "test_pool.py").write_text(PYTEST_FILE)
    (ws / "script.js").write_text("const fs = require('fs'); fs.writeFileSync('node-out.txt', 'from node');"
                                  "console.log('node ok', require('os').tmpdir());\n")
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", str(ws)], check=True)
    subprocess.run([*git, "-C", str(ws), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(ws), "commit", "-qm", "init"], check=True)
    (ws / "hello.c").write_text((ws / "hello.c").read_text().replace("hello from c", "hello again"))
    steps = {
        "git": "git status --short && git diff --stat && git log --oneline | wc -l",
        "python": "python3 -c 'import sys, tempfile; print(\"py\", tempfile.gettempdir())'",
        "pip": f"{sys.executable} -m pip install -q --no-cache-dir --no-index --target ./deps "
               "./localpkg-1.0-py3-none-any.whl && "
               "PYTHONPATH=deps python3 -c 'import localpkg; print(\"pkg\", localpkg.VALUE)'",
        "make": "make -s && ./hello",
        "pytest": f"{sys.executable} -m pytest -q -p no:cacheprovider test_pool.py 2>&1 | tail -1",
        "node": "node script.js && cat node-out.txt",
    }
    for name, command in steps.items():
        if name == "node" and shutil.which("node") is None:
            continue
        if name == "make" and (shutil.which("make") is None or shutil.which("cc") is None):
            continue
        outcome = await run_call(ws, "bash", {"command": command})
        assert not outcome.is_error, f"{name}: {outcome.result_text}"
        text = outcome.result_text
        expected = {"git": "M hello.c", "python": "py /tmp", "pip": "pkg 42", "make": "hello again",
                    "pytest": "1 passed", "node": "node ok /tmp"}[name]
        assert expected in text, f"{name}: {text}"
    assert (ws / "deps" / "localpkg" / "__init__.py").exists()


@both_kinds
async def test_timeout_and_stop_end_the_whole_sandboxed_command(ws: Path) -> None:
    marker = f"baton-marker-{uuid.uuid4().hex[:8]}"
    outcome = await run_call(ws, "bash", {"command": f"(exec -a {marker} sleep 30) & setsid sleep 31 & sleep 30",
                                          "timeout": 1})
    assert "timed out after 1 seconds" in outcome.result_text
    left = [p for p in Path("/proc").glob("[0-9]*") if _cmdline(p).startswith(marker)]
    assert left == [], "a background job outlived the timeout"
    stopped = await run_call(ws, "bash", {"command": "echo before; kill -STOP $$; echo never"})
    assert "Command was stopped" in stopped.result_text and "never" not in stopped.result_text


def _write_wheel(path: Path) -> None:
    """A minimal wheel of a package ``localpkg`` (``VALUE = 42``), for pip to install offline."""
    files = {
        "localpkg/__init__.py": "VALUE = 42\n",
        "localpkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: localpkg\nVersion: 1.0\n",
        "localpkg-1.0.dist-info/WHEEL": ("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                         "Tag: py3-none-any\n"),
    }
    record = "".join(f"{name},,\n" for name in files) + "localpkg-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in {**files, "localpkg-1.0.dist-info/RECORD": record}.items():
            wheel.writestr(name, text)


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().split(b"\0")[0].decode("utf-8", "replace")
    except OSError:
        return ""
