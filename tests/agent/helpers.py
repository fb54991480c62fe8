# mypy: disable-error-code="union-attr"
"""Tools, event recorders and faux-provider helpers shared by the agent tests."""

from __future__ import annotations

import asyncio
import os
import signal as signals
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel

from baton.agent import Agent, AgentEvent, AgentTool, AgentToolResult, ToolError
from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.models import Model


class NumberArgs(BaseModel):
    n: int


class EchoTool(AgentTool):
    """Answers ``got <n>``; ``n`` must be an integer (``"5"`` is coerced)."""

    name = "echo"
    label = "Echo"
    description = "Echo a number."
    parameters = NumberArgs

    def __init__(self) -> None:
        self.received: list[Any] = []

    async def run(self, tool_call_id: str, params: Any, signal: asyncio.Event, on_update: Any) -> AgentToolResult:
        self.received.append(params.n)
        return AgentToolResult.text(f"got {params.n}", details={"n": params.n})


class WaitArgs(BaseModel):
    label: str
    seconds: float = 0.05


class WaitTool(AgentTool):
    """Sleeps ``seconds`` (waking early on abort), logging start/end so overlap is visible."""

    name = "wait"
    label = "Wait"
    description = "Wait a while."
    parameters = WaitArgs

    def __init__(self) -> None:
        self.log: list[tuple[str, str, float]] = []
        self.started = asyncio.Event()

    async def run(self, tool_call_id: str, params: Any, signal: asyncio.Event, on_update: Any) -> AgentToolResult:
        self.log.append(("start", params.label, time.monotonic()))
        self.started.set()
        on_update(AgentToolResult.text(f"{params.label} running"))
        try:
            await asyncio.wait_for(signal.wait(), params.seconds)
        except TimeoutError:
            pass
        if signal.is_set():
            self.log.append(("aborted", params.label, time.monotonic()))
            raise ToolError("Aborted")
        self.log.append(("end", params.label, time.monotonic()))
        return AgentToolResult.text(f"{params.label} done")


class NoArgs(BaseModel):
    pass


class BoomTool(AgentTool):
    """Always raises."""

    name = "boom"
    label = "Boom"
    description = "Fails."
    parameters = NoArgs

    async def run(self, tool_call_id: str, params: Any, signal: asyncio.Event, on_update: Any) -> AgentToolResult:
        raise RuntimeError("the tool exploded")


class StubbornTool(AgentTool):
    """Ignores the abort signal; only task cancellation stops it."""

    name = "stubborn"
    label = "Stubborn"
    description = "Never looks at the signal."
    parameters = NoArgs

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = False

    async def run(self, tool_call_id: str, params: Any, signal: asyncio.Event, on_update: Any) -> AgentToolResult:
        self.started.set()
        try:
            await asyncio.sleep(100)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return AgentToolResult.text("finished")


class SleepProcessTool(AgentTool):
    """Spawns ``sleep 100``. With ``honour_signal`` it kills the process when the signal is
    set; otherwise it only cleans up when its task is cancelled."""

    name = "sleeper"
    label = "Sleeper"
    description = "Runs sleep 100."
    parameters = NoArgs

    def __init__(self, *, honour_signal: bool) -> None:
        self.honour_signal = honour_signal
        self.pid: int | None = None
        self.started = asyncio.Event()

    async def run(self, tool_call_id: str, params: Any, signal: asyncio.Event, on_update: Any) -> AgentToolResult:
        proc = await asyncio.create_subprocess_exec("sleep", "100")
        self.pid = proc.pid
        self.started.set()
        try:
            if self.honour_signal:
                waiter = asyncio.create_task(signal.wait())
                await asyncio.wait({waiter, asyncio.ensure_future(proc.wait())},
                                   return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if signal.is_set():
                    raise ToolError("Command aborted")
            else:
                await proc.wait()
            return AgentToolResult.text("slept")
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


def process_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def kill_quietly(pid: int | None) -> None:
    if pid is not None and process_alive(pid):
        os.kill(pid, signals.SIGKILL)


class Recorder:
    """Collects every event of an agent."""

    def __init__(self, agent: Agent) -> None:
        self.events: list[AgentEvent] = []
        agent.subscribe(self.events.append)

    def types(self, *, collapse_updates: bool = True) -> list[str]:
        """Event types in order; runs of message_update collapse into one ``message_update*``."""
        out: list[str] = []
        for event in self.events:
            kind: str = event.type
            if collapse_updates and kind == "message_update":
                kind = "message_update*"
                if out and out[-1] == kind:
                    continue
            out.append(kind)
        return out

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


@contextmanager
def faux(api: str, responses: Any = None, **kwargs: Any) -> Iterator[FauxProvider]:
    """A registered faux provider, unregistered afterwards."""
    provider = FauxProvider(api, responses, **kwargs)
    with provider:
        yield provider


def tool_reply(*calls: Any, text: str | None = None) -> FauxResponse:
    """A reply with optional text followed by tool calls."""
    content: list[Any] = [text] if text else []
    content.extend(calls)
    return FauxResponse(content=content)


def result_texts(agent: Agent) -> list[str]:
    """Texts of the tool results in the history, in order."""
    out = []
    for m in agent.messages:
        if m.role == "toolResult":
            out.append("".join(getattr(b, "text", "") for b in m.content))
    return out


def model_of(provider: FauxProvider, id: str = "faux-1", provider_name: str | None = None) -> Model:
    from baton.providers.faux import faux_model

    return faux_model(id, api=provider.api, provider=provider_name or provider.api)
