"""Files a repository (or a broken setup) plants for baton to read at start-up (issue 23).

Each one is a symlink out of the project, a FIFO (opening or reading it waits forever), a device
(``/dev/zero``: reading never ends, then memory runs out) or a YAML alias bomb. Driven through the
real ``baton -p`` (and ``--mode rpc``) against a local replay provider: baton must start, say once
which file it did not read, answer — and send none of the planted file's bytes to the provider.

The runs are capped at 3 GB of address space, so a regression fails with a MemoryError instead of
eating the machine; a hang is caught by the subprocess timeout.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from baton.tui.app.widgets.status import git_branch
from tests.provider_scripts import models_json_provider, text_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import baton_command, baton_env, write_models_json
from tests.tui.rpc_client import RpcProcess

API = "openai-completions"
MEMORY_CAP = 3 << 30
PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY----- planted-marker-a1b2c3"
ALIAS_BOMB = (
    "---\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
    "argument-hint: *i\n"
    "---\n"
    "body\n"
)


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_capped(home: Path, cwd: Path, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    """``baton`` to completion with at most 3 GB of address space (see the module docstring)."""
    return subprocess.run(
        baton_command(*args), cwd=cwd, env=baton_env(home), input="", capture_output=True, text=True,
        timeout=timeout, preexec_fn=_cap_memory,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".baton").mkdir(parents=True)
    (root / ".git").mkdir()
    return root


@pytest.fixture
def secrets(home: Path) -> Path:
    """``~/.ssh/id_rsa`` (HOME is ``$BATON_HOME`` in these runs)."""
    ssh = home / ".ssh"
    ssh.mkdir()
    (ssh / "id_rsa").write_text(PRIVATE_KEY + "\n")
    return ssh / "id_rsa"


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def link(path: Path, target: str | Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    return path


Plant = Callable[[Path, Path, Path], str]
"""(project, $BATON_HOME, ~/.ssh/id_rsa) -> a name the warning must mention."""

PLANTS: dict[str, Plant] = {
    "project settings.json -> /dev/zero": lambda p, h, k: link(p / ".baton/settings.json", "/dev/zero").name,
    "project settings.json is a FIFO": lambda p, h, k: fifo(p / ".baton/settings.json").name,
    "global settings.json -> /dev/zero": lambda p, h, k: link(h / "settings.json", "/dev/zero").name,
    "global settings.json is a FIFO": lambda p, h, k: fifo(h / "settings.json").name,
    ".mcp.json -> /dev/zero": lambda p, h, k: link(p / ".mcp.json", "/dev/zero").name,
    ".mcp.json is a FIFO": lambda p, h, k: fifo(p / ".mcp.json").name,
    "mcp.json is a FIFO": lambda p, h, k: fifo(h / "mcp.json").name,
    "AGENTS.md is a FIFO": lambda p, h, k: fifo(p / "AGENTS.md").name,
    "AGENTS.md -> /dev/zero": lambda p, h, k: link(p / "AGENTS.md", "/dev/zero").name,
    "AGENTS.md -> ~/.ssh/id_rsa": lambda p, h, k: link(p / "AGENTS.md", k).name,
    "CLAUDE.md -> ~/.ssh/id_rsa": lambda p, h, k: link(p / "CLAUDE.md", k).name,
    "SYSTEM.md is a FIFO": lambda p, h, k: fifo(p / ".baton/SYSTEM.md").name,
    "SYSTEM.md -> ~/.ssh/id_rsa": lambda p, h, k: link(p / ".baton/SYSTEM.md", k).name,
    "APPEND_SYSTEM.md -> $BATON_HOME/models.json": lambda p, h, k: link(
        p / ".baton/APPEND_SYSTEM.md", h / "models.json").name,
    "SKILL.md alias bomb": lambda p, h, k: _write(p / ".baton/skills/bomb/SKILL.md", ALIAS_BOMB),
    "SKILL.md is a FIFO": lambda p, h, k: str(fifo(p / ".baton/skills/pipe/SKILL.md")),
    "skill folder -> outside": lambda p, h, k: _skill_outside(p),
    "command file alias bomb": lambda p, h, k: _write(p / ".claude/commands/bomb.md", ALIAS_BOMB),
    "prompt template is a FIFO": lambda p, h, k: fifo(p / ".baton/prompts/pipe.md").name,
    "prompt template -> ~/.ssh/id_rsa": lambda p, h, k: link(p / ".baton/prompts/leak.md", k).name,
}


def _write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def _skill_outside(project: Path) -> str:
    elsewhere = project.parent / "elsewhere" / "outside-skill"
    _write(elsewhere / "SKILL.md", "---\nname: outside\ndescription: planted-marker-skill\n---\nbody\n")
    link(project / ".baton/skills/outside", elsewhere)
    return "SKILL.md"


@pytest.mark.parametrize("plant", list(PLANTS), ids=list(PLANTS))
def test_print_mode_starts_warns_once_and_answers(home: Path, project: Path, secrets: Path, plant: str) -> None:
    with ReplayServer([Reply.sse(text_reply(API, "Hello back."))]) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        name = PLANTS[plant](project, home, secrets)
        result = run_capped(home, project, "-p", "--model", "replay/replay-model", "hello")
        bodies = [request.body.decode() for request in server.requests]
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello back.\n"
    warnings = [line for line in result.stderr.splitlines() if name in line]
    assert len(warnings) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert len(bodies) == 1
    for planted in ("planted-marker", "baseUrl", "apiKey", "lol"):
        assert planted not in bodies[0]


def test_a_template_leading_to_a_key_is_not_expanded(home: Path, project: Path, secrets: Path) -> None:
    link(project / ".baton/prompts/leak.md", secrets)
    with ReplayServer([Reply.sse(text_reply(API, "ok"))]) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        result = run_capped(home, project, "-p", "--model", "replay/replay-model", "/leak")
        body = server.requests[0].body.decode()
    assert result.returncode == 0, result.stderr
    assert "planted-marker" not in body and "/leak" in body  # sent as typed
    assert "leak.md ignored: it leads outside the project" in result.stderr


@pytest.mark.parametrize("kind", ["FIFO", "/dev/zero"])
def test_models_json_that_is_not_a_file_is_one_warning(home: Path, project: Path, kind: str) -> None:
    # models.json itself is the hostile file: the built-in demo model still answers
    if kind == "FIFO":
        fifo(home / "models.json")
    else:
        link(home / "models.json", "/dev/zero")
    result = run_capped(home, project, "-p", "--model", "demo/baton-demo", "hello")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
    assert len([line for line in result.stderr.splitlines() if "models.json" in line]) == 1, result.stderr


def test_trust_records_that_are_a_fifo_do_not_hang_start_up(home: Path, project: Path) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "true"}}}))
    fifo(home / "trusted-projects.json")
    with ReplayServer([Reply.sse(text_reply(API, "Hello back."))]) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        result = run_capped(home, project, "-p", "--model", "replay/replay-model", "hello")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello back.\n"
    assert "ignoring the untrusted .mcp.json" in result.stderr


@pytest.mark.parametrize("target", ["FIFO", "/dev/zero", "/dev/stdin"])
def test_a_session_path_that_is_not_a_file_is_refused(home: Path, project: Path, target: str) -> None:
    path = project.parent / "session.jsonl"
    if target == "FIFO":
        fifo(path)
    else:
        link(path, target)
    result = run_capped(home, project, "-p", "--model", "demo/baton-demo", "--session", str(path), "hello")
    assert result.returncode != 0
    assert "not a session file" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("plant", ["project settings.json is a FIFO", "AGENTS.md is a FIFO", ".mcp.json is a FIFO",
                                   "SKILL.md alias bomb"])
def test_rpc_mode_starts_warns_once_and_answers(home: Path, project: Path, secrets: Path, plant: str) -> None:
    with ReplayServer([Reply.sse(text_reply(API, "Hello back."))]) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        name = PLANTS[plant](project, home, secrets)
        rpc = RpcProcess(home, project, "--model", "replay/replay-model")
        try:
            assert rpc.call({"type": "prompt", "message": "hello"}, timeout=60)["success"] is True
            rpc.event("agent_end", timeout=60)
            assert rpc.close_stdin() == 0
        finally:
            rpc.kill()
        assert rpc.proc.stderr is not None
        stderr = rpc.proc.stderr.read().decode()
    assert len([line for line in stderr.splitlines() if name in line]) == 1, stderr
    assert len(server.requests) == 1


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_the_branch_shown_is_read_from_a_regular_head_only(tmp_path: Path, kind: str) -> None:
    (tmp_path / ".git").mkdir()
    if kind == "fifo":
        os.mkfifo(tmp_path / ".git" / "HEAD")
    else:
        (tmp_path / ".git" / "HEAD").symlink_to("/dev/zero")
    assert git_branch(tmp_path) is None
    (tmp_path / ".git" / "HEAD").unlink()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert git_branch(tmp_path) == "main"
