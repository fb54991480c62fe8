"""Hooks and MCP servers get what they need, not the user's keys; what they print is redacted.

Driven through the real program (``baton -p --mode json``) with a hostile local provider:
MCP servers written with the official SDK (``tests/tools/mcp/env_server.py``) and, where it is
installed, the reference server ``@modelcontextprotocol/server-everything`` (whose ``get-env``
tool returns the server's whole environment); real hook commands from the user's settings.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.key_leaks import leaks
from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import read_entries, run_baton, session_files, write_models_json

API = "openai-completions"
ENV_SERVER = Path(__file__).resolve().parents[1] / "tools" / "mcp" / "env_server.py"
EVERYTHING = shutil.which("mcp-server-everything")

# What the user's shell holds: provider keys, tokens, a password, and harmless settings.
USER_ENV = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-Hq2Lw9Zr4Tx7Vb1Nm8Kd5Pf3Gj6Ys0Ca",
    "OPENAI_API_KEY": "sk-proj-Wd3Fg8Hj2Kl5Zx7Cv9Bn4Mq1Rt6Yu0Ie",
    "GITHUB_TOKEN": "ghp_Tz8Yx6Wv4Ut2Sr0Qp9On7Ml5Kj3Ih1Gf",
    "DB_PASSWORD": "Pw-7Hs2Kd9Lm4Qz8Xc",
    "SERVICE_TOKEN": "svc-Mn5Bv7Cx9Zl2Kj4Hg6Fd8Sa1",
    "HARMLESS_SETTING": "visible-value-42",
}
MODEL_KEY = "bk-replay-Qw3Er5Ty7Ui9Op1As2Df4"


def _run(home: Path, workdir: Path, calls: list[tuple[str, dict[str, Any]]], *,
         settings: dict[str, Any] | None = None, mcp: dict[str, Any] | None = None,
         timeout: float = 120) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The provider makes ``calls``; every output, and the messages of the session file."""
    replies = [Reply.sse(tool_call_reply(API, f"call_{i}", name, args)) for i, (name, args) in enumerate(calls)]
    replies.append(Reply.sse(text_reply(API, "Done.")))
    (home / "settings.json").write_text(json.dumps({"mcp": {"startupTimeoutMs": 90_000}, **(settings or {})}))
    if mcp is not None:
        (home / "mcp.json").write_text(json.dumps({"mcpServers": mcp}))
    with ReplayServer(replies) as server:
        provider = models_json_provider(API, server.url)
        provider["apiKey"] = MODEL_KEY
        write_models_json(home, {"replay": provider})
        result = run_baton(home, workdir, "-p", "--mode", "json", "--approval", "full",
                           "--model", "replay/replay-model", "go", timeout=timeout, **USER_ENV)
        requests = [json.dumps(r.json()) for r in server.requests]
    assert result.returncode == 0, result.stderr
    outputs = {"stdout": result.stdout, "stderr": result.stderr}
    outputs.update({f"request {i}": body for i, body in enumerate(requests)})
    files = session_files(home)
    outputs.update({f"session {p.name}": p.read_text() for p in files})
    messages = [e["message"] for e in read_entries(files[0]) if e.get("type") == "message"]
    return outputs, messages


def _all_leaks(outputs: dict[str, str]) -> list[str]:
    found = []
    for name, value in [*USER_ENV.items(), ("model key", MODEL_KEY)]:
        if name != "HARMLESS_SETTING":
            found += [f"{name} {leak}" for leak in leaks(outputs, value)]
    return found


def _result_text(messages: list[dict[str, Any]], index: int) -> str:
    results = [m for m in messages if m["role"] == "toolResult"]
    return "".join(b.get("text", "") for b in results[index]["content"])


def test_an_mcp_server_gets_no_keys_but_what_its_entry_names(home: Path, workdir: Path) -> None:
    servers = {"env": {"command": sys.executable, "args": [str(ENV_SERVER)],
                       "env": {"SERVICE_TOKEN": "${SERVICE_TOKEN}", "SERVER_MODE": "ci"}}}
    outputs, messages = _run(home, workdir, [("mcp__env__get_env", {}),
                                             ("mcp__env__encoded", {"name": "SERVICE_TOKEN"})], mcp=servers)
    environment = json.loads(_result_text(messages, 0))
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD"):
        assert name not in environment, f"the server got {name}"
    assert environment["SERVER_MODE"] == "ci" and environment["HARMLESS_SETTING"] == "visible-value-42"
    assert "SERVICE_TOKEN" in environment  # named in the server's entry: the user's choice...
    encoded = _result_text(messages, 1)
    assert '"hex"' in encoded and '"lines"' in encoded
    assert _all_leaks(outputs) == []  # ...but what the server prints of it is still redacted


def test_an_mcp_servers_stderr_log_is_redacted(home: Path, workdir: Path) -> None:
    """A server prints the token its entry hands it on stderr (in two writes, and base64):
    ``$BATON_HOME/logs/mcp-<name>.log`` holds it redacted."""
    servers = {"env": {"command": sys.executable, "args": [str(ENV_SERVER)],
                       "env": {"SERVICE_TOKEN": "${SERVICE_TOKEN}", "ENV_SERVER_LOG_VARIABLE": "SERVICE_TOKEN"}}}
    outputs, _ = _run(home, workdir, [("mcp__env__get_env", {})], mcp=servers)
    log = (home / "logs" / "mcp-env.log").read_text()
    assert "starting with SERVICE_TOKEN=" in log and "(base64 " in log  # the server's stderr is there
    assert _all_leaks({**outputs, "mcp-env.log": log}) == []


@pytest.mark.skipif(EVERYTHING is None, reason="@modelcontextprotocol/server-everything is not installed "
                                                "(npm install -g @modelcontextprotocol/server-everything)")
def test_server_everything_get_env_returns_no_keys(home: Path, workdir: Path) -> None:
    """The issue's observation: ``get-env`` returned ANTHROPIC_API_KEY and GITHUB_TOKEN."""
    servers = {"everything": {"command": EVERYTHING, "args": ["stdio"]}}
    outputs, messages = _run(home, workdir, [("mcp__everything__get-env", {})], mcp=servers)
    environment = json.loads(_result_text(messages, 0))
    assert "HARMLESS_SETTING" in environment and "PATH" in environment
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "SERVICE_TOKEN"):
        assert name not in environment, f"the server got {name}"
    assert _all_leaks(outputs) == []


def _hook(command: str, matcher: str = "") -> list[dict[str, Any]]:
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]


def test_hooks_get_no_keys_and_what_they_print_is_redacted(home: Path, workdir: Path, tmp_path: Path) -> None:
    """A hook's environment is the one bash gets plus Claude Code's variables; its output
    (block reasons, PostToolUse feedback, context for the model) is redacted."""
    vault = tmp_path / "vault.txt"  # a key the hook can read: it is not in its environment
    vault.write_text(USER_ENV["OPENAI_API_KEY"])
    seen = tmp_path / "hook-env.txt"
    encode = f"K=$(cat {vault}); echo \"key=$K\"; printf '%s' \"$K\" | base64; printf 'a%s' \"$K\" | od -An -tx1"
    settings = {"hooks": {
        "UserPromptSubmit": _hook(f"env > {seen}; {encode}"),
        "PostToolUse": _hook(f"({encode}) >&2; exit 2", matcher="bash"),
    }}
    outputs, messages = _run(home, workdir, [("bash", {"command": "echo ran"})], settings=settings)
    hook_env = dict(line.split("=", 1) for line in seen.read_text().splitlines() if "=" in line)
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "SERVICE_TOKEN"):
        assert name not in hook_env, f"the hook got {name}"
    assert hook_env["CLAUDE_PROJECT_DIR"] == str(workdir) and hook_env["HARMLESS_SETTING"] == "visible-value-42"
    assert "[PostToolUse hook]" in _result_text(messages, 0) and "key=" in _result_text(messages, 0)
    assert "key=" in outputs["request 0"]  # the UserPromptSubmit context reached the model
    assert _all_leaks(outputs) == []


def test_an_editors_mcp_server_gets_no_keys_either(home: Path, workdir: Path) -> None:
    """ACP: the MCP servers an editor passes in ``session/new`` start the same way — the
    scrubbed environment plus the ``env`` the editor names."""
    acp = pytest.importorskip("acp")
    import asyncio

    from tests.tui.cli_harness import baton_command, baton_env

    class Client:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            pass

        async def request_permission(self, **kwargs: Any) -> Any:
            raise AssertionError("no permission request expected")

    async def story() -> None:
        cmd = baton_command("--mode", "acp", "--model", "replay/replay-model", "--approval", "full")
        env = {**baton_env(home), **USER_ENV}
        async with acp.spawn_agent_process(Client(), cmd[0], *cmd[1:], env=env, cwd=str(workdir)) as (conn, _):
            await conn.initialize(protocol_version=1)
            server = acp.schema.McpServerStdio(
                name="editor", command=sys.executable, args=[str(ENV_SERVER)],
                env=[acp.schema.EnvVariable(name="SERVER_MODE", value="from-the-editor")])
            new = await conn.new_session(cwd=str(workdir), mcp_servers=[server])
            result = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("go")])
            assert result.stop_reason == "end_turn"

    replies = [Reply.sse(tool_call_reply(API, "call_0", "mcp__editor__get_env", {})),
               Reply.sse(text_reply(API, "Done."))]
    (home / "settings.json").write_text(json.dumps({"mcp": {"startupTimeoutMs": 90_000}}))
    with ReplayServer(replies) as server:
        provider = models_json_provider(API, server.url)
        provider["apiKey"] = MODEL_KEY
        write_models_json(home, {"replay": provider})
        asyncio.run(asyncio.wait_for(story(), 120))
        sent = server.requests[1].json()
    environment = json.loads(next(m["content"] for m in sent["messages"] if m["role"] == "tool"))
    assert environment["SERVER_MODE"] == "from-the-editor" and "HARMLESS_SETTING" in environment
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "SERVICE_TOKEN"):
        assert name not in environment, f"the editor's server got {name}"
    assert _all_leaks({"request": json.dumps(sent)}) == []
