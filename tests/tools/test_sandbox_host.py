"""The long-lived sandbox: real bwrap, real server, real commands (skips where bwrap cannot run)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from baton.agent.tool import ToolError
from baton.tools.bash import BashTool
from baton.tools.hidden_paths import HiddenPaths
from baton.tools.processes import descendants
from baton.tools.sandbox import Sandbox, probe
from baton.tools.sandbox_host import SandboxHosts
from baton.tools.shell import CommandLauncher, StartedCommand, group_alive
from tests.tools.hosted_commands import run

pytestmark = pytest.mark.skipif(not probe().available, reason=f"no sandbox here: {probe().reason}")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git" / "hooks").mkdir(parents=True)
    return root


def hosted_launcher(hosts: SandboxHosts, sandbox: Sandbox, started: list[StartedCommand]) -> CommandLauncher:
    """bash's launcher starting every call in ``hosts`` (and noting what it started)."""

    async def launch(argv: list[str], _call: str, cwd: str, env: dict[str, str], fd: int) -> StartedCommand:
        process = await hosts.spawn(sandbox.bwrap_args(), argv, cwd, env, fd)
        started.append(process)
        return process

    return launch


async def test_a_hosted_command_sees_the_sandbox_a_fresh_bwrap_gives(hosts: SandboxHosts, ws: Path) -> None:
    sandbox = Sandbox(str(ws))
    status, out = await run(hosts, sandbox, "pwd; echo made > made.txt; touch /etc/baton-host-test; "
                                            "echo x > .git/hooks/pre-commit; exit 7")
    assert status == 7
    assert out.splitlines()[0] == str(ws)
    assert (ws / "made.txt").read_text() == "made\n"
    assert out.count("Read-only file system") == 2, out
    assert not Path("/etc/baton-host-test").exists()
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    _, out = await run(hosts, sandbox, "exec 3<>/dev/tcp/127.0.0.1/9 && echo connected || echo refused")
    assert "connected" not in out.split() and "refused" in out


NAMESPACE = "readlink /proc/self/ns/pid"
"""Which sandbox a command runs in (every host has a PID namespace of its own)."""


async def test_one_host_serves_every_command_of_a_set_up(hosts: SandboxHosts, ws: Path) -> None:
    sandbox = Sandbox(str(ws))
    namespaces = {(await run(hosts, sandbox, NAMESPACE))[1].strip() for _ in range(5)}
    assert len(namespaces) == 1, "the same server started all five"
    outputs = await asyncio.gather(*(run(hosts, sandbox, f"sleep 0.0{i}; echo call {i}") for i in range(6)))
    assert [out for _, out in outputs] == [f"call {i}\n" for i in range(6)]


async def test_a_protected_path_that_appears_gets_a_new_host_that_protects_it(hosts: SandboxHosts,
                                                                              tmp_path: Path) -> None:
    ws = tmp_path / "fresh"
    ws.mkdir()
    sandbox = Sandbox(str(ws))
    _, first = await run(hosts, sandbox, f"{NAMESPACE}; git init -q . 2>&1 || mkdir -p .git/hooks")
    (ws / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
    _, second = await run(hosts, sandbox, f"{NAMESPACE}; echo x > .git/hooks/post-checkout")
    assert first.split()[0] != second.split()[0], "a new host once .git exists"
    assert "Read-only file system" in second
    shutil.rmtree(ws / ".git")
    (ws / ".git" / "hooks").mkdir(parents=True)
    _, third = await run(hosts, sandbox, "echo x > .git/hooks/post-checkout")
    assert "Read-only file system" in third, "a replaced .git is bound again"


async def test_a_hidden_folder_replaced_on_the_host_stays_hidden_from_a_host_checked_before(
        hosts: SandboxHosts, ws: Path, outside_tmp: Path) -> None:
    # A hidden folder is covered by a tmpfs, which no identity of bound paths covers: removing
    # the folder on the host takes the tmpfs out of the sandbox, and a folder made in its place
    # would show its files. The host's mount table was already found intact (so the next look
    # is only a poll): the change must still be seen before the next command starts.
    secret = outside_tmp / ".aws"  # outside /tmp: the sandbox's /tmp is its own
    secret.mkdir()
    (secret / "credentials").write_text("old-key\n")
    sandbox = Sandbox(str(ws), hidden=HiddenPaths((str(secret),)))
    for _ in range(3):  # the third spawn finds the mount table unchanged since the second's read
        _, out = await run(hosts, sandbox, f"{NAMESPACE}; cat {secret}/credentials 2>&1")
    namespace = out.split()[0]
    assert "old-key" not in out
    shutil.rmtree(secret)
    secret.mkdir()
    (secret / "credentials").write_text("new-key\n")
    _, out = await run(hosts, sandbox, f"{NAMESPACE}; cat {secret}/credentials 2>&1")
    assert "new-key" not in out, "the replaced folder is hidden again"
    assert out.split()[0] != namespace, "by a new host"
    _, again = await run(hosts, sandbox, f"cat {secret}/credentials 2>&1")
    assert "new-key" not in again


async def test_a_command_cannot_end_its_server(hosts: SandboxHosts, ws: Path) -> None:
    # The server is the namespace's init: the kernel drops any signal a command sends it (even
    # SIGKILL), so `pkill -9 python` cannot take down the other commands of the session.
    sandbox = Sandbox(str(ws))
    tool = BashTool(str(ws), command_launcher=hosted_launcher(hosts, sandbox, []))
    command = (f"{NAMESPACE}; kill -9 1; kill -9 $PPID; pkill -9 -f 'sandbox_[s]erver'; kill -STOP 1; sleep 0.2; "
               "echo outlived it")
    result = await tool.execute("c1", {"command": command}, asyncio.Event())
    namespace, _, rest = result.content[0].text.partition("\n")
    assert rest.endswith("outlived it") and not result.is_error, result.content[0].text
    status, out = await run(hosts, sandbox, f"{NAMESPACE}; echo still here")
    assert (status, out) == (0, f"{namespace}\nstill here\n"), "the same host runs the next command"


async def test_a_server_killed_from_outside_ends_its_commands_with_an_unknown_status(hosts: SandboxHosts,
                                                                                     ws: Path) -> None:
    sandbox = Sandbox(str(ws))
    updates: list[object] = []
    tool = BashTool(str(ws), command_launcher=hosted_launcher(hosts, sandbox, []))
    await run(hosts, sandbox, "true")
    host = hosts._current
    assert host is not None and host.server_pid is not None
    running = asyncio.ensure_future(tool.execute("c1", {"command": "sleep 30 & echo begun; sleep 30"},
                                                 asyncio.Event(), updates.append))
    while not updates:
        await asyncio.sleep(0.02)
    os.kill(host.server_pid, signal.SIGKILL)  # a crash: everything in the namespace goes with it
    result = await asyncio.wait_for(running, 20)
    assert result.is_error
    assert "unknown exit status (the sandbox that ran it stopped)" in result.content[0].text
    status, out = await run(hosts, sandbox, "echo still here")
    assert (status, out) == (0, "still here\n"), "a new host runs the next command"


async def test_a_command_the_host_never_confirmed_is_never_started_again(hosts: SandboxHosts, ws: Path) -> None:
    # The server stops before it reads the request, then dies: the command's fate is unknown to
    # baton, which must not start it a second time (in a new host or a fresh bwrap).
    sandbox = Sandbox(str(ws))
    tool = BashTool(str(ws), command_launcher=hosted_launcher(hosts, sandbox, []))
    await run(hosts, sandbox, "true")
    host = hosts._current
    assert host is not None and host.server_pid is not None
    os.kill(host.server_pid, signal.SIGSTOP)
    asyncio.get_running_loop().call_later(0.3, os.kill, host.server_pid, signal.SIGKILL)
    with pytest.raises(ToolError, match="not known whether the command ran"):
        await tool.execute("c1", {"command": "echo ran >> runs.txt"}, asyncio.Event())
    assert not (ws / "runs.txt").exists(), "never started, and never started again"
    status, out = await run(hosts, sandbox, "echo still here")
    assert (status, out) == (0, "still here\n")


async def test_a_hosted_command_is_known_by_its_pid_outside_the_sandbox(hosts: SandboxHosts, ws: Path) -> None:
    sandbox = Sandbox(str(ws))
    read_fd, write_fd = os.pipe()
    process = await hosts.spawn(sandbox.bwrap_args(), ["/bin/bash", "-c", "echo $$; sleep 5"], str(ws),
                                dict(os.environ), write_fd)
    os.close(write_fd)
    inner = int((await asyncio.to_thread(os.read, read_fd, 100)).decode())
    assert process.pid is not None and process.pid != inner
    status_lines = Path(f"/proc/{process.pid}/status").read_text().splitlines()
    assert f"NSpid:\t{process.pid}\t{inner}" in status_lines, "the same process, named in both namespaces"
    assert os.getpgid(process.pid) == process.pid, "and it leads its own process group"
    host = hosts._current
    assert host is not None and host._outer_pid(inner) == process.pid, "found without a pidfd too (kernels < 5.3)"
    os.killpg(process.pid, signal.SIGTERM)
    assert await process.wait() == -signal.SIGTERM
    os.close(read_fd)


async def test_arguments_environment_and_bytes_arrive_unchanged(hosts: SandboxHosts, ws: Path) -> None:
    sandbox = Sandbox(str(ws))
    odd = "caf\u00e9 \udcff tab\there"
    big = "y" * 100_000
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "ODD": odd}
    _, out = await run(hosts, sandbox, f'printf "%s|" "$ODD"; printf "%s" "{big}" | wc -c', env=env)
    assert out == f"{odd}|100000\n"
    (ws / "sub").mkdir()
    _, out = await run(hosts, sandbox, "pwd", cwd=str(ws / "sub"))
    assert out == f"{ws / 'sub'}\n"


async def test_bash_timeouts_and_aborts_end_a_hosted_command_and_its_children(hosts: SandboxHosts,
                                                                            ws: Path) -> None:
    sandbox = Sandbox(str(ws))
    started: list[StartedCommand] = []
    tool = BashTool(str(ws), command_launcher=hosted_launcher(hosts, sandbox, started))
    result = await tool.execute("c1", {"command": "sleep 30 & sleep 30", "timeout": 0.5}, asyncio.Event())
    assert "timed out after 0.5 seconds" in result.content[0].text
    assert not group_alive(started[0].pid)
    signal = asyncio.Event()
    asyncio.get_running_loop().call_later(0.3, signal.set)
    result = await tool.execute("c2", {"command": "echo begun; sleep 30"}, signal)
    assert "begun" in result.content[0].text and "Command aborted" in result.content[0].text
    assert not group_alive(started[1].pid)


async def test_closing_ends_the_host_and_everything_left_in_it(ws: Path) -> None:
    hosts = SandboxHosts()
    sandbox = Sandbox(str(ws))
    read_fd, write_fd = os.pipe()
    process = await hosts.spawn(sandbox.bwrap_args(), ["/bin/bash", "-c", "setsid sleep 60 & sleep 60 &"],
                                str(ws), dict(os.environ), write_fd)
    os.close(write_fd)
    await process.wait()
    os.close(read_fd)
    host = hosts._current
    assert host is not None and host.server_pid is not None
    server = host.server_pid
    left = descendants(server)
    assert len(left) == 2, "the background jobs outlive their command, in the sandbox"
    await hosts.close()
    for _ in range(100):
        if not any(Path(f"/proc/{pid}").exists() for pid in [server, *left]):
            break
        await asyncio.sleep(0.02)
    assert not any(Path(f"/proc/{pid}").exists() for pid in [server, *left]), "nothing outlives the host"


KILLED_BATON_SCRIPT = """
import asyncio, os, signal, sys
from baton.tools.sandbox import Sandbox
from baton.tools.sandbox_host import SandboxHosts

async def main():
    hosts = SandboxHosts()
    read_fd, write_fd = os.pipe()
    process = await hosts.spawn(Sandbox(sys.argv[1]).bwrap_args(), ["/bin/bash", "-c", "sleep 60"],
                                sys.argv[1], dict(os.environ), write_fd)
    print(process.pid, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""


def test_a_hosted_command_dies_with_a_killed_baton(ws: Path) -> None:
    done = subprocess.run([sys.executable, "-c", KILLED_BATON_SCRIPT, str(ws)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == -9, done.stderr
    command = int(done.stdout)
    for _ in range(250):
        if not group_alive(command):
            break
        time.sleep(0.02)
    assert not group_alive(command), "the server saw baton's end of the socket close and killed it"


async def test_the_server_runs_from_its_compiled_bytecode(hosts: SandboxHosts, ws: Path) -> None:
    """Run from its source, the sandbox's interpreter compiles the script first and keeps the
    compiler's memory for its whole life."""
    status, out = await run(hosts, Sandbox(str(ws)), "echo served")
    assert (status, out) == (0, "served\n")
    host = hosts._current
    assert host is not None and host.server_pid is not None
    argv = Path(f"/proc/{host.server_pid}/cmdline").read_bytes().split(b"\0")
    program = next(Path(os.fsdecode(arg)) for arg in argv if b"sandbox_server" in arg)
    assert program.suffix == ".pyc" and program.parent.name == "__pycache__", argv


def test_the_servers_bytecode_is_never_older_than_its_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import marshal

    from baton.tools import sandbox_host

    source = tmp_path / "sandbox_server.py"
    source.write_text(sandbox_host.SERVER_SCRIPT.read_text() + '\nMARKER = "first"\n')
    monkeypatch.setattr(sandbox_host, "SERVER_SCRIPT", source)

    def constants(program: Path) -> tuple[object, ...]:
        assert program.suffix == ".pyc" and program.parent == tmp_path / "__pycache__"
        return marshal.loads(program.read_bytes()[16:]).co_consts

    assert "first" in constants(sandbox_host.server_program())
    source.write_text(source.read_text().replace('"first"', '"second, longer"'))
    assert "second, longer" in constants(sandbox_host.server_program()), "a stale .pyc was run"
    source.write_text(source.read_text().replace('"second, longer"', '"third, longer!"'))
    os.utime(source, (time.time() + 5, time.time() + 5))  # the same size, a newer source
    assert "third, longer!" in constants(sandbox_host.server_program())
