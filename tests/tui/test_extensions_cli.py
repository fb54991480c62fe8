"""Templates, skills and project trust through the real ``baton -p`` / ``--mode json`` process,
against the local replay server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.provider_scripts import models_json_provider, text_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import run_baton, write_models_json

API = "openai-completions"
MODEL = "replay-oc/replay-model"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def _last_user_text(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    users = [m for m in messages if m["role"] == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


@pytest.mark.parametrize("mode", ["text", "json"])
def test_template_expands_in_print_and_json_mode(mode: str, home: Path, workdir: Path) -> None:
    prompts = workdir / ".baton" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review\n---\nReview $1 for $2 issues.\n")
    with ReplayServer([Reply.sse(text_reply(API, "Reviewed."))]) as server:
        write_models_json(home, {"replay-oc": models_json_provider(API, server.url)})
        result = run_baton(home, workdir, "-p", "--mode", mode, "--model", MODEL, "/review app.py security",
                           HOME=str(home))
        requests = list(server.requests)
    assert result.returncode == 0, result.stderr
    assert _last_user_text(requests[0].json()) == "Review app.py for security issues."


def test_untrusted_project_hooks_skipped_with_one_line_unless_trusted(home: Path, workdir: Path) -> None:
    marker = workdir / "hook-ran"
    (workdir / ".baton").mkdir()
    (workdir / ".baton" / "settings.json").write_text(json.dumps(
        {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"touch {marker}"}]}]}}))
    with ReplayServer([Reply.sse(text_reply(API, "one")), Reply.sse(text_reply(API, "two"))]) as server:
        write_models_json(home, {"replay-oc": models_json_provider(API, server.url)})
        first = run_baton(home, workdir, "-p", "--model", MODEL, "hi", HOME=str(home))
        assert first.returncode == 0, first.stderr
        lines = [line for line in first.stderr.splitlines() if "untrusted" in line]
        assert len(lines) == 1 and "--trust-project" in lines[0] and "hooks (UserPromptSubmit)" in lines[0]
        assert not marker.exists()
        second = run_baton(home, workdir, "-p", "--trust-project", "--model", MODEL, "hi", HOME=str(home))
    assert second.returncode == 0, second.stderr
    assert "untrusted" not in second.stderr
    assert marker.exists()


def test_unknown_skill_is_refused_clearly(home: Path, workdir: Path) -> None:
    with ReplayServer([Reply.sse(text_reply(API, "never"))]) as server:
        write_models_json(home, {"replay-oc": models_json_provider(API, server.url)})
        result = run_baton(home, workdir, "-p", "--model", MODEL, "/skill:missing do it", HOME=str(home))
        requests = list(server.requests)
    assert result.returncode == 1
    assert "Unknown skill 'missing'" in result.stderr
    assert requests == []


def test_list_mcp_prints_servers_tools_and_failures(home: Path, workdir: Path, tmp_path: Path) -> None:
    from tests.tools.mcp.helpers import stdio_entry

    markers = tmp_path / "markers"
    markers.mkdir()
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {
        "test": stdio_entry(markers), "gone": {"command": str(tmp_path / "no-such-server")}}}))
    (workdir / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {"command": "true"}}}))
    (home / "settings.json").write_text(json.dumps({"mcp": {"startupTimeoutMs": 90000}}))
    result = run_baton(home, workdir, "--list-mcp", timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    test_line = next(line for line in lines if line.startswith("test "))
    assert "ready" in test_line and "stdio" in test_line and "7 tools" in test_line
    assert any("tools:" in line and "shout" in line and "slow" in line for line in lines)
    gone_line = next(line for line in lines if line.startswith("gone "))
    assert "failed" in gone_line
    assert any("last error:" in line for line in lines)
    assert any(line.startswith("Not trusted (skipped)") and ".mcp.json (1 server: proj)" in line for line in lines)


def test_missing_mcp_config_file_is_a_usage_error(home: Path, workdir: Path) -> None:
    result = run_baton(home, workdir, "-p", "--model", "demo/baton-demo", "--mcp-config", "nope.json", "hi")
    assert result.returncode == 2
    assert "--mcp-config: no such file" in result.stderr
