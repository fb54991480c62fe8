"""What a subagent's box costs the interactive app when the subagent made many tool calls.

Two figures, CPU time of this process (``time.process_time``: meaningful on a loaded machine):

- **open from the file**: a resumed session whose one ``task`` call ran a subagent with ``--calls``
  tool calls (each with ~50 lines of output); Ctrl+O reads the child session file (in the
  transcript's worker thread), builds the box's log and draws it;
- **live**: the same subagent's events fed to the app's transcript as the session emits them
  (``SubagentEvent``s under the task call id) with the box open, the transcript flushed after
  each tool turn as its 10 Hz timer would.

The box keeps its last ``LOG_ENTRIES`` entries, so both should stay flat as ``--calls`` grows
(what grows is parsing the file and handling the events).

Run: ``python benchmarks/bench_subagent_box.py [--calls 500]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _messages(calls: int) -> list[Any]:
    from baton.providers.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage

    out: list[Any] = [UserMessage(content="list everything")]
    for n in range(calls):
        out.append(AssistantMessage(content=[ToolCall(id=f"c{n}", name="bash", arguments={"command": f"echo {n}"})],
                                    api="openai-completions", provider="p", model="m", stop_reason="toolUse"))
        out.append(ToolResultMessage(tool_call_id=f"c{n}", tool_name="bash",
                                     content=[TextContent(text=f"line of step {n}\n" * 50)]))
    out.append(AssistantMessage(content=[TextContent(text="Done.")], api="openai-completions", provider="p",
                                model="m"))
    return out


def _parent(cwd: Path, calls: int) -> tuple[Path, list[Any]]:
    from baton.providers.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
    from baton.sessions.store import SessionStore

    parent = SessionStore.create(cwd / "sessions", cwd)
    folder = cwd / "sessions" / "subagents" / parent.session_id
    child = SessionStore.create(folder, cwd)
    messages = _messages(calls)
    for message in messages:
        child.append_message(message)
    child.close()
    parent.append_message(UserMessage(content="go"))
    parent.append_message(AssistantMessage(
        content=[ToolCall(id="toolu_1", name="task", arguments={"description": "list", "prompt": "p"})],
        api="anthropic-messages", provider="p", model="m", stop_reason="toolUse"))
    parent.append_message(ToolResultMessage(
        tool_call_id="toolu_1", tool_name="task", content=[TextContent(text="Done.")],
        details={"agent": "general", "model": "p/m", "status": "done", "sessionFile": str(child.path),
                 "sessionId": child.session_id}))
    parent.close()
    assert parent.path is not None
    return parent.path, messages


async def _run(calls: int) -> None:
    from baton.agent.events import (
        MessageEndEvent,
        MessageStartEvent,
        ToolExecutionEndEvent,
        ToolExecutionStartEvent,
    )
    from baton.agent.tool import AgentToolResult
    from baton.providers.faux import faux_model
    from baton.sessions import CodingSession, SessionOptions
    from baton.sessions.events import SubagentEvent
    from baton.tui.app.baton_app import BatonApp
    from baton.tui.app.widgets.subagent_box import SubagentView

    cwd = Path(tempfile.mkdtemp())
    os.environ["BATON_HOME"] = str(cwd / "home")
    path, messages = _parent(cwd, calls)
    model = faux_model("m", provider="p", api="faux-bench")
    session = await CodingSession.open(SessionOptions(cwd=cwd, model=model, tools=["task"], session=str(path),
                                                      session_dir=cwd / "sessions", context_files=False))
    app = BatonApp(session)
    async with app.run_test(size=(120, 50)) as pilot:
        await pilot.pause(0.2)
        [box] = app.transcript.views_of(SubagentView)
        start = time.process_time()
        await pilot.press("ctrl+o")
        while box.log is None:
            await pilot.pause(0.01)
        await app.transcript.flush_now()
        opened = time.process_time() - start
        entries = len(box.log.entries)

        # live: a fresh box fed the subagent's events with the box open
        box.log = None
        box.set_running()
        transcript = app.transcript
        start = time.process_time()
        transcript.handle_event(SubagentEvent("toolu_1", "general", MessageStartEvent(messages[0])))
        for n in range(calls):
            call, result = messages[1 + 2 * n], messages[2 + 2 * n]
            for event in (MessageEndEvent(call), ToolExecutionStartEvent(f"c{n}", "bash", {}),
                          ToolExecutionEndEvent(f"c{n}", "bash", AgentToolResult(result.content, None), False),
                          MessageEndEvent(result)):
                transcript.handle_event(SubagentEvent("toolu_1", "general", event))
            await transcript.flush_now()
        live = time.process_time() - start
    await session.close()
    print(f"{calls} tool calls, box keeps {entries} entries")
    print(f"open from the file (Ctrl+O: read, parse, draw): {opened * 1000:.0f} ms CPU")
    print(f"live, box open, flushed each turn: {live * 1000:.0f} ms CPU ({live / calls * 1000:.2f} ms per tool turn)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    asyncio.run(_run(args.calls))


if __name__ == "__main__":
    main()
