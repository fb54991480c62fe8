"""The long-lived sandbox: real bwrap, real server, real commands (skips where bwrap cannot run)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from baton.agent.tool import ToolError
from baton.tools.bash import BashTool
from baton.tools.sandbox import Sandbox, probe
from baton.tools.sandbox_host import SandboxHosts
from baton.tools.shell import CommandLauncher, StartedCommand, group_alive

pytestmark = pytest.mark.skipif(not probe().available, reason=f"no sandbox here: {probe().reason}")


@pytest.fixture
async def hosts() -> AsyncIterator[SandboxHosts]:
    hosts = SandboxHosts()
    yield hosts
    await hosts.close()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git" / "hooks").mkdir(parents=True)
    return root


async def run(hosts: SandboxHosts, sandbox: Sandbox, command: str, env: dict[str, str] | None = None,
              cwd: str | None = None) -> tuple[int | None, str]:
    read_fd, write_fd = os.pipe()
    try:
        process = await hosts.spawn(sandbox.bwrap_args(), ["/bin/bash", "-c", command], cwd or sandbox.workspace,
                                    env if env is not None else dict(os.environ), write_fd)
    finally:
        os.close(write_fd)
    status = await process.wait()
    chunks = []
    while chunk := await asyncio.to_thread(os.read, read_fd, 1 << 16):
        chunks.append(chunk)
    os.close(read_fd)
    return status, b"".join(chunks).decode("utf-8", "surrogateescape")


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


async def test_one_host_serves_every_command_of_a_set_up(hosts: SandboxHosts, ws: Path) -> None:
    sandbox = Sandbox(str(ws))
    parents = {(await run(hosts, sandbox, "echo $PPID"))[1].strip() for _ in range(5)}
    assert len(parents) == 1, "the same server started all five"
    outputs = await asyncio.gather(*(run(hosts, sandbox, f"sleep 0.0{i}; echo call {i}") for i in range(6)))
    assert [out for _, out in outputs] == [f"call {i}\n" for i in range(6)]


async def test_a_protected_path_that_appears_gets_a_new_host_that_protects_it(hosts: SandboxHosts,
                                                                              tmp_path: Path) -> None:
    ws = tmp_path / "fresh"
    ws.mkdir()
    sandbox = Sandbox(str(ws))
    _, first = await run(hosts, sandbox, "echo $PPID; git init -q . 2>&1 || mkdir -p .git/hooks")
    (ws / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
    _, second = await run(hosts, sandbox, "echo $PPID; echo x > .git/hooks/post-checkout")
    assert first.split()[0] != second.split()[0], "a new host once .git exists"
    assert "Read-only file system" in second
    shutil.rmtree(ws / ".git")
    (ws / ".git" / "hooks").mkdir(parents=True)
    _, third = await run(hosts, sandbox, "echo x > .git/hooks/post-checkout")
    assert "Read-only file system" in third, "a replaced .git is bound again"


async def test_command_killing_the_server_is_reported_and_the_next_one_runs(hosts: SandboxHosts, ws: Path) -> None:
    sandbox = Sandbox(str(ws))
    tool = BashTool(str(ws), command_launcher=hosted_launcher(hosts, sandbox, []))
    result = await tool.execute("c1", {"command": "kill -9 $PPID; sleep 0.2; echo outlived it"}, asyncio.Event())
    assert result.content[0].text == (
        "outlived it\n\nCommand ended with an unknown exit status (the sandbox that ran it stopped)"
    ), "only a subreaper (baton, not pytest) can read the status of a command whose server died"
    assert result.is_error
    status, out = await run(hosts, sandbox, "echo still here")
    assert (status, out) == (0, "still here\n")


async def test_a_command_that_ends_its_server_at_once_is_never_run_twice(hosts: SandboxHosts, ws: Path) -> None:
    # `pkill -9 python` kills the server too: the server may die before it names the command, and
    # starting the command again (in a new host or a fresh bwrap) would run it a second time.
    sandbox = Sandbox(str(ws))
    tool = BashTool(str(ws), command_launcher=hosted_launcher(hosts, sandbox, []))
    for _ in range(5):
        (ws / "runs.txt").unlink(missing_ok=True)
        try:  # the agent turns a ToolError into an error result, as it does an error status
            result = await tool.execute("c1", {"command": "echo ran >> runs.txt; kill -9 $PPID"}, asyncio.Event())
        except ToolError as exc:
            text = str(exc)
        else:
            assert result.is_error
            text = result.content[0].text
        assert (ws / "runs.txt").read_text() == "ran\n", "the command ran exactly once"
        assert "not known whether the command ran" in text or "unknown exit status" in text, text
    status, out = await run(hosts, sandbox, "echo still here")
    assert (status, out) == (0, "still here\n")


SUBREAPER_SCRIPT = """
import asyncio, os, sys
from baton.tools.processes import become_subreaper
from baton.tools.sandbox import Sandbox
from baton.tools.sandbox_host import SandboxHosts

async def main():
    assert become_subreaper()
    hosts = SandboxHosts()
    read_fd, write_fd = os.pipe()
    command = ["/bin/bash", "-c", "kill -9 $PPID; sleep 0.2; exit 4"]
    process = await hosts.spawn(Sandbox(sys.argv[1]).bwrap_args(), command, sys.argv[1], dict(os.environ), write_fd)
    os.close(write_fd)
    print(await asyncio.wait_for(process.wait(), 10))
    await hosts.close()

asyncio.run(main())
"""


def test_baton_as_subreaper_reads_the_status_of_a_command_whose_server_died(ws: Path) -> None:
    done = subprocess.run([sys.executable, "-c", SUBREAPER_SCRIPT, str(ws)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "4"


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


async def test_closing_ends_the_host(ws: Path) -> None:
    hosts = SandboxHosts()
    sandbox = Sandbox(str(ws))
    _, out = await run(hosts, sandbox, "echo $PPID")
    server = int(out)
    await hosts.close()
    for _ in range(100):
        if not Path(f"/proc/{server}").exists():
            break
        await asyncio.sleep(0.02)
    assert not Path(f"/proc/{server}").exists()


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
