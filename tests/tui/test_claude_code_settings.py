"""Claude Code's ``.claude/settings.json`` and ``.claude/settings.local.json`` against the real
``baton`` process: their deny rules apply at once (they only tighten), their allow rules and hooks
wait for the user's trust like ``.baton/settings.json``'s, and Claude Code's capitalised tool names
(``Read(./.env)``, ``Bash(cat:*)``, ``Glob``) name baton's tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import run_baton, write_models_json

API = "openai-completions"
MODEL = "replay/replay-model"
SECRET = "DOTENV-SECRET-MARKER"


def claude_settings(workdir: Path, data: dict[str, Any], name: str = "settings.json") -> None:
    (workdir / ".claude").mkdir(exist_ok=True)
    (workdir / ".claude" / name).write_text(json.dumps(data))


def run(home: Path, workdir: Path, replies: list[Reply], *args: str) -> tuple[Any, str]:
    tmpdir = workdir.parent / "tmpdir"
    tmpdir.mkdir(exist_ok=True)
    with ReplayServer(replies) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        result = run_baton(home, workdir, "-p", "--model", MODEL, *args, "go", TMPDIR=str(tmpdir))
        sent = "\n".join(r.body.decode("utf-8", "replace") for r in server.requests)
    return result, sent


def call(name: str, arguments: dict[str, Any]) -> list[Reply]:
    return [Reply.sse(tool_call_reply(API, "call_1", name, arguments)), Reply.sse(text_reply(API, "Done."))]


def hook(marker: Path, event: str = "PreToolUse", matcher: str = "Bash") -> dict[str, Any]:
    return {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": f"cat > {marker}"}]}]}


def test_claude_deny_read_env_keeps_the_file_from_the_model(home: Path, workdir: Path) -> None:
    (workdir / ".env").write_text(f"TOKEN={SECRET}\n")
    claude_settings(workdir, {"permissions": {"deny": ["Read(./.env)"]}})
    result, sent = run(home, workdir, call("read", {"path": ".env"}))
    assert result.returncode == 0, result.stderr
    assert SECRET not in sent
    assert "Read(./.env)" in sent  # the model is told which rule refused it


def test_claude_deny_bash_prefix_applies_untrusted(home: Path, workdir: Path) -> None:
    (workdir / ".env").write_text(f"TOKEN={SECRET}\n")
    claude_settings(workdir, {"permissions": {"deny": ["Bash(cat:*)"]}}, "settings.local.json")
    result, sent = run(home, workdir, call("bash", {"command": "cat .env"}))
    assert result.returncode == 0, result.stderr
    assert SECRET not in sent and "Bash(cat:*)" in sent


def test_claude_glob_names_baton_find(home: Path, workdir: Path) -> None:
    (workdir / "a.txt").write_text("x")
    claude_settings(workdir, {"permissions": {"deny": ["Glob"]}})
    result, sent = run(home, workdir, call("find", {"pattern": "*.txt"}), "--tools", "read,find")
    assert result.returncode == 0, result.stderr
    assert "a.txt" not in sent.split('"role":"tool"', 1)[-1] and "Glob" in sent


def test_an_untrusted_claude_hook_and_allow_stay_inert_and_are_named(home: Path, workdir: Path) -> None:
    marker = workdir.parent / "hook-ran"
    claude_settings(workdir, {"permissions": {"allow": ["Bash"]}, "hooks": hook(marker)})
    result, _ = run(home, workdir, call("bash", {"command": "echo hi"}))
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    [line] = [line for line in result.stderr.splitlines() if line.startswith("baton: ignoring")]
    assert "permissions.allow" in line and "hooks (PreToolUse)" in line


def test_a_trusted_claude_hook_runs_with_claude_codes_input(home: Path, workdir: Path) -> None:
    marker = workdir.parent / "hook-ran"
    claude_settings(workdir, {"hooks": hook(marker)}, "settings.local.json")
    result, _ = run(home, workdir, call("bash", {"command": "echo hi"}), "--trust-project")
    assert result.returncode == 0, result.stderr
    payload = json.loads(marker.read_text())
    assert payload["tool_name"] == "Bash" and payload["tool_input"]["command"] == "echo hi"


def test_claude_settings_keep_only_rules_modes_and_hooks(home: Path, workdir: Path) -> None:
    """Claude Code's other keys (its model names, env) mean nothing to baton: not applied, not asked about."""
    claude_settings(workdir, {"model": "opus", "env": {"X": "1"}, "permissions": {"additionalDirectories": ["/"]}})
    result, _ = run(home, workdir, [Reply.sse(text_reply(API, "Done."))])
    assert result.returncode == 0, result.stderr
    assert "ignoring" not in result.stderr and "opus" not in result.stderr


def test_claude_default_mode_may_tighten_but_bypass_is_ignored_with_a_notice(home: Path, workdir: Path) -> None:
    claude_settings(workdir, {"permissions": {"defaultMode": "bypassPermissions"}})
    result, _ = run(home, workdir, call("bash", {"command": "touch made.txt"}))
    assert result.returncode == 0, result.stderr
    assert 'ignoring approval: "full"' in result.stderr
    claude_settings(workdir, {"permissions": {"defaultMode": "default"}})  # Claude Code asks: so does baton
    result, _ = run(home, workdir, call("bash", {"command": "touch asked.txt"}))
    assert result.returncode == 0, result.stderr
    assert not (workdir / "asked.txt").exists() and "needs approval" in result.stderr


def test_a_claude_settings_file_leading_out_of_the_project_is_not_read(home: Path, workdir: Path) -> None:
    outside = workdir.parent / "elsewhere.json"
    outside.write_text(json.dumps({"permissions": {"deny": ["Bash"]}}))
    (workdir / ".claude").mkdir()
    (workdir / ".claude" / "settings.json").symlink_to(outside)
    result, _ = run(home, workdir, call("bash", {"command": "echo ran > out.txt"}))
    assert result.returncode == 0, result.stderr
    assert "settings.json: not read" in result.stderr and "leads" in result.stderr
