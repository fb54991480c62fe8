"""Running subagents for the ``task`` tool (``tools/task.py``).

A subagent is an :class:`~agent.agent.Agent` of its own in this process: a fresh context (its
system prompt and the task), the tools its definition allows (:func:`sessions.agents.allowed_tools`),
any model (:mod:`sessions.roles`), and a session file of its own in pi's format —
``<session dir>/subagents/<parent session id>/<time>_<id>.jsonl``, its header naming the parent
file as ``parentSession`` — which the ``task`` result's details link (``sessionFile``). The
parent's context holds only the task call and the final answer.

What a subagent may do is what the session may do, no more:

- every tool call passes the session's gates (:class:`~sessions.tool_gates.ToolGates`): hooks,
  the permission policy (and its questions), checkpoints — an edit by a subagent is snapshotted
  under the prompt that started it, so ``/rewind`` undoes it;
- its tools are new instances equipped as the session's are (the sandbox's command launcher, the
  path pins the policy fills, the environment, process slots, an editor's file access);
- a tool call id a subagent's model repeats while another call with that id is running (in the
  parent or a sibling) is refused before any gate sees it: the policy keys its per-call state
  (the path judged, sandboxed or not) by that id;
- nesting stops at ``subagents.maxDepth`` (default 1: subagents get no ``task`` tool), and at
  most ``subagents.maxParallel`` run at once per level (further calls wait their turn).

Abort reaches every running subagent through the ``task`` call's signal; each records its
partial answer as aborted (in its own file and as the ``task`` result, ``status: "aborted"``).
Events: each subagent event (not its streamed deltas) is emitted on the session as a
:class:`~sessions.events.SubagentEvent` under the ``task`` call's id; the call's progress
(agent, model, current tool, tokens, elapsed time) arrives as its ``tool_execution_update``s.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from baton.agent.agent import Agent
from baton.agent.events import (
    AgentEvent,
    MessageEndEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
)
from baton.agent.execution import (
    AfterToolCallContext,
    BeforeToolCallResult,
    ToolCallContext,
)
from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, ToolError
from baton.providers.json_types import JsonObject
from baton.providers.messages import AssistantMessage, TextContent, Usage
from baton.providers.models import Model, clamp_thinking_level
from baton.sessions.agents import AgentCatalog, AgentDefinition, allowed_tools, load_agents
from baton.sessions.context_files import ContextFile
from baton.sessions.events import SubagentEvent
from baton.sessions.roles import RoleError, resolve_model_spec
from baton.sessions.store import SessionStore
from baton.sessions.system_prompt import build_system_prompt
from baton.tools.task import TaskParams, TaskTool

if TYPE_CHECKING:
    from baton.sessions.coding_session import CodingSession

logger = logging.getLogger(__name__)

SUBAGENT_DIR = "subagents"
CHILD_ABORT_GRACE = 0.4
"""Seconds a subagent's aborted tools get to stop: well within the parent's own grace (1 s),
so its partial answer is recorded before the parent stops waiting for the ``task`` call."""
SUBAGENT_NOTE = (
    "You are a subagent: you were started by another agent for the task in the first message and "
    "you cannot ask it questions. Work on your own, then end with your final answer: it is the "
    "only part of your work the caller receives."
)
_IN_SUBAGENT: contextvars.ContextVar[bool] = contextvars.ContextVar("baton_in_subagent", default=False)


class CallIds:
    """The tool call ids running in subagents of one session, and the gate that keeps them apart
    from the parent's (see the module docstring)."""

    def __init__(self, session: CodingSession) -> None:
        self._session = session
        self.holders: dict[str, object] = {}
        """Call id → the ``ToolCall`` object running under it in a subagent."""

    def clash(self, call_id: str, call: object) -> bool:
        """Whether ``call_id`` is taken by another running call (the parent's or a subagent's)."""
        holder = self.holders.get(call_id)
        return call_id in self._session.agent.pending_tool_calls or (holder is not None and holder is not call)

    async def parent_gate(self, context: ToolCallContext, signal: asyncio.Event) -> BeforeToolCallResult | None:
        """Before-gate of the session: a parent call whose id a subagent's running call holds."""
        if _IN_SUBAGENT.get():
            return None
        if context.tool_call.id in self.holders:
            return BeforeToolCallResult(True, clash_text(context.tool_call.id))
        return None


def clash_text(call_id: str) -> str:
    """What the model reads for a call refused for its id."""
    return (f"Refused: tool call id {call_id!r} is already used by another running call (a subagent's or "
            "the caller's); the call was not run. Call the tool again.")


@dataclass(slots=True)
class _Progress:
    agent: str
    model: str
    started: float = field(default_factory=time.monotonic)
    current_tool: str | None = None
    turns: int = 0
    tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    status: str = "running"
    session_file: str | None = None
    session_id: str = ""

    def details(self) -> JsonObject:
        out: JsonObject = {
            "agent": self.agent, "model": self.model, "status": self.status, "turns": self.turns,
            "toolCalls": self.tool_calls, "elapsedMs": int((time.monotonic() - self.started) * 1000),
            "usage": self.usage.model_dump(mode="json", by_alias=True), "cost": self.usage.cost.total,
            "sessionId": self.session_id,
        }
        if self.session_file:
            out["sessionFile"] = self.session_file
        if self.current_tool:
            out["currentTool"] = self.current_tool
        return out

    def line(self) -> str:
        tokens = self.usage.input + self.usage.output + self.usage.cache_read + self.usage.cache_write
        doing = f" · running {self.current_tool}" if self.current_tool else ""
        elapsed = int(time.monotonic() - self.started)
        return f"{self.agent} on {self.model}{doing} · {self.turns} turns · {tokens} tokens · {elapsed}s"

    def add(self, usage: Usage) -> None:
        mine, cost = self.usage, self.usage.cost
        mine.input += usage.input
        mine.output += usage.output
        mine.cache_read += usage.cache_read
        mine.cache_write += usage.cache_write
        mine.total_tokens = (mine.total_tokens or 0) + (usage.total_tokens or 0)
        cost.input += usage.cost.input
        cost.output += usage.cost.output
        cost.cache_read += usage.cost.cache_read
        cost.cache_write += usage.cost.cache_write
        cost.total += usage.cost.total


class SubagentRunner:
    """The session's :class:`~tools.task.TaskRunner` at one nesting ``depth`` (1: subagents of
    the main agent)."""

    def __init__(self, session: CodingSession, call_ids: CallIds, depth: int = 1) -> None:
        self.session = session
        self.call_ids = call_ids
        self.depth = depth
        self._slots = asyncio.Semaphore(session.settings.subagents.max_parallel)
        self._catalog: AgentCatalog | None = None

    @property
    def catalog(self) -> AgentCatalog:
        """The agents (read on first use, and again after :meth:`reload`)."""
        if self._catalog is None:
            settings = self.session.settings
            self._catalog = load_agents(self.session.cwd, project_trusted=settings.pending_trust is None)
        return self._catalog

    def reload(self) -> None:
        """Read the agent files again (the project was trusted, a file changed)."""
        self._catalog = None

    def agents_summary(self) -> str:
        """One line per agent for the ``task`` tool's description."""
        return self.catalog.summary()

    async def run_task(
        self, tool_call_id: str, params: TaskParams, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """Run one subagent for a ``task`` call to its end (see the module docstring)."""
        agent = self.catalog.get(params.agent)
        if agent is None:
            names = ", ".join(self.catalog.agents)
            raise ToolError(f"Unknown agent {params.agent!r}; available agents: {names}")
        model = self._model_for(agent)
        async with self._slot(signal):
            if signal.is_set():
                raise ToolError("Aborted before the subagent started")
            result = await _Run(self, agent, model, tool_call_id, params, signal, on_update).run()
        await self._subagent_stopped(agent.name, tool_call_id)
        return result

    async def _subagent_stopped(self, agent: str, tool_call_id: str) -> None:
        """Claude Code's ``SubagentStop`` hooks (their verdict cannot undo a finished subagent)."""
        hooks = self.session.extensions.hooks
        if not hooks.has("SubagentStop"):
            return
        try:
            await hooks.run("SubagentStop", stop_hook_active=False, agent_type=agent, tool_use_id=tool_call_id)
        except Exception as exc:  # a hook must never fail the task that already ended
            logger.warning("SubagentStop hooks failed: %s", exc)

    @contextlib.asynccontextmanager
    async def _slot(self, signal: asyncio.Event) -> AsyncIterator[None]:
        waiter = asyncio.ensure_future(self._slots.acquire())
        stop = asyncio.ensure_future(signal.wait())
        try:
            await asyncio.wait({waiter, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
        if not waiter.done():
            waiter.cancel()
            raise ToolError("Aborted while waiting for a subagent slot")
        try:
            yield
        finally:
            self._slots.release()

    def _model_for(self, agent: AgentDefinition) -> Model:
        session = self.session
        try:
            model = resolve_model_spec(agent.model, session.settings, session.model, session.options.extra_models)
        except RoleError as exc:
            raise ToolError(f"Agent {agent.name!r} cannot run: {exc}") from exc
        if not session.models.can_call(model):
            from baton.providers.api_keys import missing_key_error

            error = missing_key_error(model)
            why = str(error) if error is not None else f"no API key for {model.provider}"
            raise ToolError(f"Agent {agent.name!r} cannot run on {model.ref}: {why}")
        return model


class _Run:
    """One subagent run (one ``task`` call)."""

    def __init__(self, runner: SubagentRunner, agent: AgentDefinition, model: Model, call_id: str,
                 params: TaskParams, signal: asyncio.Event, on_update: OnUpdate) -> None:
        self.runner = runner
        self.session = runner.session
        self.definition = agent
        self.model = model
        self.call_id = call_id
        self.params = params
        self.signal = signal
        self.on_update = on_update
        self.progress = _Progress(agent.name, model.ref)
        self.held: set[str] = set()
        self.store = self._open_store()
        self.progress.session_id = self.store.session_id
        self.progress.session_file = str(self.store.path) if self.store.path is not None else None

    def _open_store(self) -> SessionStore:
        session = self.session
        parent = session.store
        if not parent.is_persisted or parent.path is None:
            return SessionStore.in_memory(session.cwd)
        folder = Path(session.session_dir) / SUBAGENT_DIR / parent.session_id
        return SessionStore.create(folder, session.cwd, parent_session=str(parent.path))

    async def run(self) -> AgentToolResult[JsonObject]:
        child = self._agent()
        self.store.append_model_change(self.model.provider, self.model.id)
        self.store.append_thinking_level_change(child.thinking)
        unsubscribe = child.subscribe(self._on_event)
        stopper = asyncio.ensure_future(self.signal.wait())
        stopper.add_done_callback(lambda _: child.abort())
        self._report()
        try:
            await child.prompt(self.params.prompt)
        except asyncio.CancelledError:
            with contextlib.suppress(BaseException):  # the parent stopped waiting: let it record
                await asyncio.wait_for(child.wait_idle(), CHILD_ABORT_GRACE)
            raise
        finally:
            stopper.cancel()
            unsubscribe()
            for call_id in self.held:
                self.runner.call_ids.holders.pop(call_id, None)
            self.store.close()
        return self._result(child)

    def _agent(self) -> Agent:
        session = self.session
        depth = self.runner.depth
        can_delegate = depth < session.settings.subagents.max_depth
        names = allowed_tools(self.definition, [t.name for t in session.agent.tools], can_delegate=can_delegate)
        tools = self._tools(names, depth)
        contexts = [ContextFile(p, t) for p, t in zip(session.context_files, session._context_texts, strict=False)]
        prompt = build_system_prompt(
            cwd=session.cwd, tools=names, tool_descriptions={t.name: t.description for t in tools},
            append="\n\n".join(p for p in (self.definition.prompt, SUBAGENT_NOTE) if p), context_files=contexts,
        )
        options = session.agent.stream_options
        from dataclasses import replace

        return Agent(
            model=self.model, tools=tools, system_prompt=prompt,
            thinking=clamp_thinking_level(self.model, session.models.requested_thinking),
            get_api_key=session.models.api_key, before_tool_call=self._before, after_tool_call=self._after,
            stream_options=replace(options, session_id=self.store.session_id, on_retry=None),
            abort_grace=CHILD_ABORT_GRACE,
        )

    def _tools(self, names: list[str], depth: int) -> list[AgentTool]:
        """New tool instances equipped as the session's own are (launcher, pins, environment)."""
        from baton.tools import tools_by_name
        from baton.tools.bash import BashTool

        session = self.session
        theirs = {t.name: t for t in session.agent.tools}
        tools = list(tools_by_name(names, str(session.cwd)))
        for tool in tools:
            mine = theirs.get(tool.name)
            if mine is not None and type(mine) is type(tool):
                for name, value in vars(mine).items():  # whatever the session set up on its own
                    setattr(tool, name, value)
            if isinstance(tool, BashTool):
                tool.environment, tool.slots = session.tool_env, session.process_slots
                tool.command_launcher = session.permissions.launch_command
            if hasattr(tool, "pins"):
                tool.pins = session.permissions.pins
            if isinstance(tool, TaskTool):
                tool.runner = SubagentRunner(session, self.runner.call_ids, depth + 1)
        return tools

    # ------------------------------------------------------------------ gates

    async def _before(self, context: ToolCallContext, signal: asyncio.Event) -> BeforeToolCallResult | None:
        call = context.tool_call
        ids = self.runner.call_ids
        if ids.clash(call.id, call):
            return BeforeToolCallResult(True, clash_text(call.id))
        ids.holders[call.id] = call
        self.held.add(call.id)
        token = _IN_SUBAGENT.set(True)
        try:
            verdict = await self.session.tool_gates.before(context, signal)
        except BaseException:
            self._release(call.id)
            raise
        finally:
            _IN_SUBAGENT.reset(token)
        if verdict is not None and verdict.block:
            self._release(call.id)
        return verdict

    async def _after(self, context: AfterToolCallContext, signal: asyncio.Event) -> AgentToolResult | None:
        token = _IN_SUBAGENT.set(True)
        try:
            return await self.session.tool_gates.after(context, signal)
        finally:
            _IN_SUBAGENT.reset(token)
            self._release(context.tool_call.id)

    def _release(self, call_id: str) -> None:
        self.held.discard(call_id)
        self.runner.call_ids.holders.pop(call_id, None)

    # ------------------------------------------------------------------ events

    async def _on_event(self, event: AgentEvent) -> None:
        progress = self.progress
        changed = False
        if isinstance(event, MessageEndEvent):
            try:
                self.store.append_message(event.message)
            except (OSError, ValueError) as exc:
                logger.warning("subagent session file: %s", exc)
            if isinstance(event.message, AssistantMessage):
                progress.turns += 1
                progress.add(event.message.usage)
                changed = True
        elif isinstance(event, ToolExecutionStartEvent):
            progress.current_tool = event.tool_name
            progress.tool_calls += 1
            changed = True
        elif isinstance(event, ToolExecutionEndEvent):
            progress.current_tool = None
            changed = True
        if not isinstance(event, MessageUpdateEvent):
            await self.session.events.emit(SubagentEvent(self.call_id, self.definition.name, event, self.runner.depth))
        if changed:
            self._report()

    def _report(self) -> None:
        self.on_update(AgentToolResult([TextContent(text=self.progress.line())], self.progress.details()))

    def _result(self, child: Agent) -> AgentToolResult[JsonObject]:
        progress = self.progress
        progress.current_tool = None
        last = next((m for m in reversed(child.messages) if isinstance(m, AssistantMessage)), None)
        text = last.text.strip() if last is not None else ""
        if self.signal.is_set() or (last is not None and last.stop_reason == "aborted"):
            progress.status = "aborted"
            body = f"[subagent {self.definition.name} was aborted]" + (f" Partial answer:\n{text}" if text else "")
            return AgentToolResult([TextContent(text=body)], progress.details(), is_error=True)
        if last is None or last.stop_reason == "error":
            progress.status = "error"
            why = (last.error_message if last is not None else None) or child.error or "no answer"
            return AgentToolResult([TextContent(text=f"Subagent {self.definition.name} failed: {why}")],
                                   progress.details(), is_error=True)
        progress.status = "done"
        return AgentToolResult([TextContent(text=text or "(the subagent gave no answer)")], progress.details())


def attach(session: CodingSession) -> SubagentRunner | None:
    """Give the session's ``task`` tools their runner and register the call-id gate; ``None``
    when subagents are off (``subagents.maxDepth`` 0: the tool refuses every call)."""
    call_ids = CallIds(session)
    session.tool_gates.add_before("subagent-ids", call_ids.parent_gate, first=True)
    if session.settings.subagents.max_depth < 1:
        return None
    runner = SubagentRunner(session, call_ids)
    for tool in session.agent.tools:
        if isinstance(tool, TaskTool):
            tool.runner = runner
    return runner
