"""Claude Code's command files against the real ``baton`` process: ``!`cmd` `` lines run before
the prompt is sent only from a trusted project (or the user's own files), only when an allow rule
(the file's ``allowed-tools`` or the user's) matches, and in the sandbox; ``@path`` references
attach only what ``read`` may open unasked."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from baton.tools.sandbox import probe
from tests.provider_scripts import models_json_provider, text_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import run_baton, write_models_json

API = "openai-completions"
MODEL = "replay/replay-model"
needs_sandbox = pytest.mark.skipif(not probe().available, reason=f"no sandbox here: {probe().reason}")


def command_file(root: Path, name: str, body: str, allowed: str | None = None) -> None:
    path = root / ".claude" / "commands" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    front = f"---\nallowed-tools: {allowed}\ndescription: test\n---\n" if allowed else ""
    path.write_text(front + body)


def run(home: Path, workdir: Path, prompt: str, *args: str) -> tuple[Any, str]:
    tmpdir = workdir.parent / "tmpdir"
    tmpdir.mkdir(exist_ok=True)
    with ReplayServer([Reply.sse(text_reply(API, "Done."))]) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        result = run_baton(home, workdir, "-p", "--model", MODEL, *args, prompt, TMPDIR=str(tmpdir))
        sent = "\n".join(r.body.decode("utf-8", "replace") for r in server.requests)
    return result, sent


def user_text(sent: str) -> str:
    body = json.loads(sent.splitlines()[0])
    return "\n".join(m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
                     for m in body["messages"] if m["role"] == "user")


# ---------------------------------------------------------------------------------------- attacks


def test_an_untrusted_projects_command_lines_never_run(home: Path, workdir: Path) -> None:
    command_file(workdir, "setup", "Status: !`touch pwned.txt`\n", allowed="Bash(touch:*)")
    result, sent = run(home, workdir, "/setup")
    assert result.returncode == 0, result.stderr
    assert not (workdir / "pwned.txt").exists()
    assert "[not run: the project is not trusted" in user_text(sent)
    assert "commands (/setup)" in result.stderr  # named with what else is ignored


def test_a_trusted_projects_command_runs_only_what_a_rule_allows(home: Path, workdir: Path) -> None:
    command_file(workdir, "status", "Here: !`echo bang-output` and !`touch made.txt`\n", allowed="Bash(echo:*)")
    result, sent = run(home, workdir, "/status", "--trust-project")
    assert result.returncode == 0, result.stderr
    text = user_text(sent)
    assert "Here: bang-output and [not run: no allow rule matches it" in text
    assert not (workdir / "made.txt").exists()


def test_a_deny_rule_beats_the_files_allowed_tools(home: Path, workdir: Path) -> None:
    (workdir / ".env").write_text("SECRET=dotenv-marker\n")
    (workdir / ".claude").mkdir()
    (workdir / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash(cat:*)"]}}))
    command_file(workdir, "leak", "!`cat .env`\n", allowed="Bash(cat:*)")
    result, sent = run(home, workdir, "/leak", "--trust-project")
    assert result.returncode == 0, result.stderr
    assert "dotenv-marker" not in sent and "[not run: denied by the rule Bash(cat:*)" in user_text(sent)


@needs_sandbox
def test_a_command_files_command_runs_in_the_sandbox(home: Path, workdir: Path) -> None:
    stray = Path("/var/tmp") / f"baton-escaped-{uuid.uuid4().hex[:8]}"
    command_file(workdir, "escape", f"!`touch {stray}; echo tried`\n", allowed="Bash(touch:*), Bash(echo:*)")
    try:
        result, sent = run(home, workdir, "/escape", "--trust-project")
        assert result.returncode == 0, result.stderr
        assert not stray.exists()
        text = user_text(sent)
        assert "tried" in text and "!`" not in text  # it ran (its output replaced the line), inside the sandbox
    finally:
        stray.unlink(missing_ok=True)


def test_file_references_attach_only_what_read_may_open(home: Path, workdir: Path) -> None:
    (workdir / "src").mkdir()
    (workdir / "src" / "a.py").write_text("print('inside-marker')\n")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("PRIVATE-KEY-MARKER\n")
    (workdir / ".env").write_text("SECRET=dotenv-marker\n")
    (workdir / ".claude").mkdir()
    (workdir / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Read(./.env)"]}}))
    command_file(workdir, "review", "Review @src/a.py with @~/.ssh/id_rsa and @.env in mind.\n")
    result, sent = run(home, workdir, "/review")
    assert result.returncode == 0, result.stderr
    text = user_text(sent)
    assert "Contents of @src/a.py" in text and "inside-marker" in text
    assert "PRIVATE-KEY-MARKER" not in sent and "dotenv-marker" not in sent
    assert "[@~/.ssh/id_rsa not attached" in text and "[@.env not attached: denied by the rule Read(./.env)" in text


def test_the_users_own_command_file_runs_its_allowed_command(home: Path, workdir: Path) -> None:
    command_file(home, "mine", "Mine: !`echo from-my-file`\n", allowed="Bash(echo:*)")  # HOME is home
    result, sent = run(home, workdir, "/mine")
    assert result.returncode == 0, result.stderr
    assert "Mine: from-my-file" in user_text(sent)


def test_init_asks_the_model_to_survey_and_write_agents_md(home: Path, workdir: Path) -> None:
    from tests.provider_scripts import tool_call_reply

    (workdir / "README.md").write_text("# demo\n")
    replies = [Reply.sse(tool_call_reply(API, "call_1", "write", {"path": "AGENTS.md", "content": "# Agents\n"})),
               Reply.sse(text_reply(API, "Wrote AGENTS.md."))]
    with ReplayServer(replies) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        result = run_baton(home, workdir, "-p", "--model", MODEL, "/init focus on the tests")
        first = "\n".join(r.body.decode() for r in server.requests[:1])
    assert result.returncode == 0, result.stderr
    text = user_text(first)
    assert "Survey this project and write an AGENTS.md" in text
    assert "Pay particular attention to: focus on the tests" in text
    assert (workdir / "AGENTS.md").read_text() == "# Agents\n"
