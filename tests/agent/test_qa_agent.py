# mypy: disable-error-code="union-attr"
"""QA regressions for the agent loop, found by driving baton end to end."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from baton.agent import Agent, AgentEvent, AgentTool, AgentToolResult
from baton.providers.faux import faux_tool_call
from tests.agent.helpers import faux, model_of, tool_reply

API = "faux-qa-agent"


class NoArgs(BaseModel):
    pass


class ProgressTool(AgentTool):
    """Reports progress three times; after each report it waits until a subscriber has seen it.

    This is what a UI watching a long ``bash`` needs: each update reaches it while the tool is
    still running, not when the tool ends."""

    name = "progress"
    label = "Progress"
    description = "Report progress."
    parameters = NoArgs

    def __init__(self) -> None:
        self.seen = asyncio.Event()
        self.waits: list[bool] = []

    async def run(self, tool_call_id: str, params: Any, signal: asyncio.Event, on_update: Any) -> AgentToolResult:
        for step in range(3):
            self.seen.clear()
            on_update(AgentToolResult.text(f"step {step}"))
            try:
                await asyncio.wait_for(self.seen.wait(), 2)
                self.waits.append(True)
            except TimeoutError:
                self.waits.append(False)
        return AgentToolResult.text("finished")


async def test_async_subscriber_sees_tool_updates_while_the_tool_runs() -> None:
    # The agent held an async subscriber's update coroutines until the tool returned, so the
    # coding session (an async subscriber) and everything above it — JSON mode, the TUI — saw a
    # bash command's output only when it had finished.
    tool = ProgressTool()
    events: list[tuple[str, str]] = []

    async def subscriber(event: AgentEvent) -> None:
        if event.type == "tool_execution_update":
            await asyncio.sleep(0.01 * (3 - len(events)))  # later updates finish sooner: order must hold
            events.append(("update", event.partial_result.content[0].text))
            tool.seen.set()
        elif event.type == "tool_execution_end":
            events.append(("end", event.result.content[0].text))

    with faux(API, [tool_reply(faux_tool_call("progress", {}, id="p1")), "done"]) as provider:
        agent = Agent(model=model_of(provider), tools=[tool])
        agent.subscribe(subscriber)
        await agent.prompt("go")
    assert tool.waits == [True, True, True]
    assert events == [("update", "step 0"), ("update", "step 1"), ("update", "step 2"), ("end", "finished")]
