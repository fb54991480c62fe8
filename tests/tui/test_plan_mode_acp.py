"""Plan mode and the task list over ACP (issue 27 §2, §3): ``baton --mode acp --plan`` driven by
the ACP SDK's client against a hostile local provider."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp")

from acp import text_block  # noqa: E402

from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply  # noqa: E402
from tests.replay_server import ReplayServer, Reply  # noqa: E402
from tests.tui.cli_harness import write_models_json  # noqa: E402
from tests.tui.test_acp_mode import AM, ApprovingEditor, acp_agent  # noqa: E402

PLAN = "# Plan\n\n1. Write `out.txt`."
TODOS = [{"content": "Write out.txt", "status": "in_progress", "activeForm": "Writing out.txt"},
         {"content": "Check it", "status": "pending", "activeForm": "Checking it"}]


def _story(home: Path, workdir: Path, answer: str) -> tuple[ApprovingEditor, Any]:
    replies = [
        Reply.sse(tool_call_reply(AM, "toolu_t", "todo_write", {"todos": TODOS})),
        Reply.sse(tool_call_reply(AM, "toolu_early", "write", {"path": "early.txt", "content": "no\n"})),
        Reply.sse(tool_call_reply(AM, "toolu_plan", "exit_plan_mode", {"plan": PLAN})),
        Reply.sse(tool_call_reply(AM, "toolu_w", "write", {"path": "out.txt", "content": "yes\n"})),
        Reply.sse(text_reply(AM, "Done.")),
    ]

    async def story() -> tuple[ApprovingEditor, Any]:
        client = ApprovingEditor([answer])
        async with acp_agent(client, home, workdir, "--model", "replay-am/replay-model", "--plan") as conn:
            await conn.initialize(protocol_version=1)
            new = await conn.new_session(cwd=str(workdir), mcp_servers=[])
            result = await conn.prompt(session_id=new.session_id, prompt=[text_block("plan it")])
        return client, result

    with ReplayServer(replies) as server:
        write_models_json(home, {"replay-am": models_json_provider(AM, server.url)})
        return asyncio.run(story())


def test_acp_asks_the_editor_about_the_plan_and_sends_the_task_list(home: Path, workdir: Path) -> None:
    client, result = _story(home, workdir, "accept_auto")
    assert result.stop_reason == "end_turn"
    [(call, options)] = client.asked  # the refused write asked nothing; the plan asked once
    assert options == ["accept_auto", "accept_ask", "keep_planning", "cancel"]
    assert PLAN in call.content[0].content.text and call.tool_call_id == "toolu_plan"
    [plan] = client.of_kind("plan")
    assert [(e["content"], e["status"]) for e in plan["entries"]] == [("Write out.txt", "in_progress"),
                                                                      ("Check it", "pending")]
    assert not (workdir / "early.txt").exists()
    assert (workdir / "out.txt").read_text() == "yes\n"  # accepted in auto mode: the write ran unasked


def test_acp_cancelled_plan_leaves_plan_mode_on(home: Path, workdir: Path) -> None:
    client, _ = _story(home, workdir, "cancel")
    assert len(client.asked) == 1
    assert not (workdir / "early.txt").exists() and not (workdir / "out.txt").exists()


def test_acp_load_session_sends_the_last_task_list(home: Path, workdir: Path) -> None:
    from tests.tui.test_acp_mode import EditorClient

    _story(home, workdir, "cancel")
    [path] = sorted((home / "sessions").rglob("*.jsonl"))
    session_id = path.stem.rsplit("_", 1)[-1]

    async def load() -> EditorClient:
        client = EditorClient()
        with ReplayServer([]) as server:
            write_models_json(home, {"replay-am": models_json_provider(AM, server.url)})
            async with acp_agent(client, home, workdir, "--model", "replay-am/replay-model") as conn:
                await conn.initialize(protocol_version=1)
                await conn.load_session(cwd=str(workdir), session_id=session_id, mcp_servers=[])
        return client

    client = asyncio.run(load())
    [plan] = client.of_kind("plan")
    assert [e["content"] for e in plan["entries"]] == ["Write out.txt", "Check it"]
