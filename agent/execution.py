"""Executing one assistant message's tool calls: validation, hooks, parallel or sequential
runs, steering skips, abort, and the error results the model reads when something fails."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ValidationError

from baton.agent.events import (
    AgentEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
)
from baton.agent.messages import AgentMessage
from baton.agent.redaction import redact_result
from baton.agent.tool import AgentTool, AgentToolResult, ToolError
from baton.providers.messages import AssistantMessage, ImageContent, TextContent, ToolCall, ToolResultMessage

logger = logging.getLogger(__name__)

ToolExecutionMode: TypeAlias = Literal["parallel", "sequential"]

SKIPPED_TEXT = "Skipped due to queued user message."
ABORTED_TEXT = "Aborted"
BLOCKED_TEXT = "Tool execution was blocked"


def not_found_text(name: str) -> str:
    """pi's text for a call to a tool that does not exist."""
    return f"Tool {name} not found"


def truncated_text(name: str) -> str:
    """pi's text for a call cut off by the output token limit (never executed)."""
    return (
        f'Tool call "{name}" was not executed: the response hit the output token limit, so its '
        "arguments may be truncated. Re-issue the tool call with complete arguments."
    )


def validation_error_text(call: ToolCall, error: ValidationError) -> str:
    """What was wrong with the arguments and what the model sent (pi's wording)."""
    lines = []
    for err in error.errors(include_url=False):
        path = ".".join(str(part) for part in err.get("loc", ())) or "root"
        lines.append(f"  - {path}: {err.get('msg', 'invalid value')}")
    problems = "\n".join(lines) or "Unknown validation error"
    try:
        sent = json.dumps(call.arguments, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        sent = repr(call.arguments)
    return f'Validation failed for tool "{call.name}":\n{problems}\n\nReceived arguments:\n{sent}'


# ---------------------------------------------------------------------------------------------
# Hooks


@dataclass(slots=True)
class ToolCallContext:
    """What ``before_tool_call`` sees: the call, the tool it calls (whose traits a gate reads),
    its validated arguments and the history."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    tool: AgentTool
    args: BaseModel
    messages: list[AgentMessage]


@dataclass(slots=True)
class BeforeToolCallResult:
    """Returned by ``before_tool_call``: ``block=True`` answers the call with an error result
    carrying ``reason`` instead of running it."""

    block: bool = False
    reason: str | None = None


@dataclass(slots=True)
class AfterToolCallContext:
    """What ``after_tool_call`` sees: the call, the tool that ran, its arguments and its outcome."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    tool: AgentTool
    args: BaseModel
    result: AgentToolResult
    is_error: bool
    messages: list[AgentMessage]


@dataclass(slots=True)
class AfterToolCallResult:
    """Returned by ``after_tool_call``: each field that is not ``None`` replaces the result's."""

    content: list[TextContent | ImageContent] | None = None
    details: object = None
    is_error: bool | None = None


BeforeToolCall: TypeAlias = Callable[
    [ToolCallContext, asyncio.Event],
    "BeforeToolCallResult | Awaitable[BeforeToolCallResult | None] | None",
]
AfterToolCall: TypeAlias = Callable[
    [AfterToolCallContext, asyncio.Event],
    "AfterToolCallResult | AgentToolResult | Awaitable[AfterToolCallResult | AgentToolResult | None] | None",
]

Emit = Callable[[AgentEvent], Awaitable[None]]
EmitNowait = Callable[[AgentEvent], list[Awaitable[object]]]
Record = Callable[[AgentMessage], Awaitable[None]]
PollSteering = Callable[[], list[AgentMessage]]


# ---------------------------------------------------------------------------------------------
# One batch


@dataclass(slots=True)
class _Outcome:
    result: AgentToolResult
    is_error: bool
    redacted: bool = False


def _redacted(outcome: _Outcome) -> _Outcome:
    """``outcome`` with keys redacted from its result (the second wall: agent/redaction.py)."""
    if outcome.redacted:
        return outcome
    return _Outcome(redact_result(outcome.result), outcome.is_error, True)


@dataclass(slots=True)
class _Prepared:
    call: ToolCall
    tool: AgentTool
    args: BaseModel


def _error(text: str, details: object = None) -> _Outcome:
    return _Outcome(AgentToolResult([TextContent(text=text)], details, True), True)


async def _maybe_await(value: Any) -> Any:
    if value is not None and hasattr(value, "__await__"):
        return await value
    return value


class ToolBatch:
    """Runs the tool calls of one assistant message and records their results in call order.

    Parallel mode starts every call at once (after validating them all) and emits the
    ``tool_execution_end`` events and result messages in call order once the batch is done;
    steering found while the calls are being prepared skips the ones not started yet.
    Sequential mode runs one call at a time and polls the steering queue after each: once a
    message is queued the remaining calls are answered ``Skipped due to queued user message.``.
    On abort, running calls get ``signal`` set, then ``abort_grace`` seconds to stop before
    their tasks are cancelled; every call that did not finish is answered ``Aborted``."""

    def __init__(
        self,
        *,
        assistant_message: AssistantMessage,
        tools: Sequence[AgentTool],
        history: list[AgentMessage],
        signal: asyncio.Event,
        emit: Emit,
        emit_nowait: EmitNowait,
        record: Record,
        poll_steering: PollSteering,
        mode: ToolExecutionMode = "parallel",
        before_tool_call: BeforeToolCall | None = None,
        after_tool_call: AfterToolCall | None = None,
        abort_grace: float = 1.0,
        running: set[str] | None = None,
    ) -> None:
        self.assistant_message = assistant_message
        self.calls = assistant_message.tool_calls
        self.tools = {tool.name: tool for tool in tools}
        self.history = history
        self.signal = signal
        self.emit = emit
        self.emit_nowait = emit_nowait
        self.record = record
        self.poll_steering = poll_steering
        self.mode = mode
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.abort_grace = abort_grace
        self.running = running if running is not None else set()
        self.results: list[ToolResultMessage] = []
        self.steering: list[AgentMessage] = []

    async def run(self) -> tuple[list[ToolResultMessage], list[AgentMessage]]:
        """Execute the batch; returns the result messages and any steering messages taken."""
        if self.mode == "sequential":
            await self._run_sequential()
        else:
            await self._run_parallel()
        return self.results, self.steering

    # --- modes ------------------------------------------------------------------------------
    async def _run_sequential(self) -> None:
        calls = self.calls
        for index, call in enumerate(calls):
            await self._start(call)
            if self.signal.is_set():
                outcome = _error(ABORTED_TEXT)
            else:
                prepared = await self._prepare(call)
                outcome = prepared if isinstance(prepared, _Outcome) else (await self._execute_all([prepared]))[0]
            await self._finish(call, outcome)
            rest = calls[index + 1 :]
            if not rest:
                break
            if self.signal.is_set():
                await self._answer_all(rest, ABORTED_TEXT)
                break
            steering = self.poll_steering()
            if steering:
                self.steering = steering
                await self._answer_all(rest, SKIPPED_TEXT)
                break

    async def _run_parallel(self) -> None:
        calls = self.calls
        outcomes: list[_Outcome | None] = [None] * len(calls)
        prepared: list[tuple[int, _Prepared]] = []
        started = 0
        skip_text: str | None = None
        for index, call in enumerate(calls):
            if self.signal.is_set():
                skip_text = ABORTED_TEXT
                break
            await self._start(call)
            started = index + 1
            item = await self._prepare(call)
            if isinstance(item, _Outcome):
                outcomes[index] = item
            else:
                prepared.append((index, item))
            steering = self.poll_steering() if index + 1 < len(calls) else []
            if steering:
                self.steering = steering
                skip_text = SKIPPED_TEXT
                break
        if skip_text is not None:
            for index, _ in prepared:
                outcomes[index] = _error(skip_text)
            prepared = []
        elif self.signal.is_set():
            for index, _ in prepared:
                outcomes[index] = _error(ABORTED_TEXT)
            prepared = []
        if prepared:
            executed = await self._execute_all([p for _, p in prepared])
            for (index, _), outcome in zip(prepared, executed, strict=True):
                outcomes[index] = outcome
        for index, call in enumerate(calls):
            if index >= started:
                await self._start(call)
            final = outcomes[index]
            if final is None:
                final = _error(skip_text or ABORTED_TEXT)
            await self._finish(call, final)
        if not self.steering and not self.signal.is_set():
            self.steering = self.poll_steering()

    # --- steps ------------------------------------------------------------------------------
    async def _start(self, call: ToolCall) -> None:
        self.running.add(call.id)
        await self.emit(ToolExecutionStartEvent(call.id, call.name, call.arguments))

    async def _finish(self, call: ToolCall, outcome: _Outcome) -> None:
        self.running.discard(call.id)
        outcome = _redacted(outcome)  # every result, error and gate's change passes here
        try:
            message = _result_message(call, outcome)
        except (ValidationError, TypeError) as exc:  # content that is not text/image blocks
            outcome = _error(f"Tool {call.name} returned an invalid result: {exc}")
            message = _result_message(call, outcome)
        await self.emit(ToolExecutionEndEvent(call.id, call.name, outcome.result, outcome.is_error))
        self.results.append(message)
        await self.record(message)

    async def _answer_all(self, calls: Sequence[ToolCall], text: str) -> None:
        for call in calls:
            await self._start(call)
            await self._finish(call, _error(text))

    async def _prepare(self, call: ToolCall) -> _Prepared | _Outcome:
        if call.argument_error is not None:  # refused as they arrived (nested too deeply)
            return _error(call.argument_error)
        tool = self.tools.get(call.name)
        if tool is None:
            return _error(not_found_text(call.name))
        try:
            args = tool.parameters.model_validate(call.arguments)
        except ValidationError as exc:
            return _error(validation_error_text(call, exc))
        except Exception as exc:  # a validator that choked (e.g. JSON inside a string, too deep)
            return _error(f'Validation failed for tool "{call.name}": {_exception_text(exc)}')
        if self.before_tool_call is not None:
            context = ToolCallContext(self.assistant_message, call, tool, args, list(self.history))
            try:
                verdict = await _maybe_await(self.before_tool_call(context, self.signal))
            except Exception as exc:
                return _error(_exception_text(exc))
            if self.signal.is_set():
                return _error(ABORTED_TEXT)
            if isinstance(verdict, BeforeToolCallResult) and verdict.block:
                return _error(verdict.reason or BLOCKED_TEXT)
        if self.signal.is_set():
            return _error(ABORTED_TEXT)
        return _Prepared(call, tool, args)

    async def _execute_all(self, prepared: list[_Prepared]) -> list[_Outcome]:
        """Run the prepared calls concurrently, honouring abort; outcomes in input order."""
        tasks = [asyncio.create_task(self._execute(p), name=f"tool-{p.call.name}") for p in prepared]
        try:
            await self._wait(tasks)
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            raise
        outcomes = []
        for p, task in zip(prepared, tasks, strict=True):
            if not task.done() or task.cancelled():
                outcome = _error(ABORTED_TEXT)
            else:
                exc = task.exception()
                outcome = _error(_exception_text(exc)) if exc is not None else task.result()
                outcome = await self._after(p, _redacted(outcome))  # gates (hooks) see no keys
            outcomes.append(outcome)
        return outcomes

    async def _wait(self, tasks: list[asyncio.Task[_Outcome]]) -> None:
        pending: set[asyncio.Task[object]] = set(tasks)
        signal = self.signal
        if not signal.is_set():
            abort_waiter = asyncio.create_task(signal.wait())
            try:
                while pending and not signal.is_set():
                    _, pending = await asyncio.wait(
                        pending | {abort_waiter}, return_when=asyncio.FIRST_COMPLETED
                    )
                    pending.discard(abort_waiter)
            finally:
                abort_waiter.cancel()
        if not pending:
            return
        # Aborted: the tools saw the signal; give them a moment to stop, then cancel them.
        _, pending = await asyncio.wait(pending, timeout=self.abort_grace)
        for task in pending:
            task.cancel()
        if pending:
            _, stuck = await asyncio.wait(pending, timeout=self.abort_grace)
            for task in stuck:
                logger.warning("tool task %s ignored cancellation after abort", task.get_name())

    async def _execute(self, prepared: _Prepared) -> _Outcome:
        call = prepared.call
        pending_updates: list[Awaitable[object]] = []
        # Async subscribers get each update while the tool runs (a UI shows live output), one
        # update after the other: each delivery task waits for the previous one first.
        delivery: asyncio.Future[None] | None = None
        accepting = True

        def on_update(partial: AgentToolResult) -> None:
            nonlocal delivery
            if accepting:
                partial = redact_result(partial, partial=True)
                event = ToolExecutionUpdateEvent(call.id, call.name, call.arguments, partial)
                awaitables = self.emit_nowait(event)
                if awaitables:
                    pending_updates.extend(awaitables)
                    delivery = asyncio.ensure_future(_deliver_in_order(delivery, awaitables))

        try:
            result = await prepared.tool.execute(call.id, prepared.args, self.signal, on_update)
            if not isinstance(result, AgentToolResult):
                raise TypeError(f"tool {call.name} returned {type(result).__name__}, not AgentToolResult")
            outcome = _Outcome(result, result.is_error)
        except ToolError as exc:
            outcome = _error(_exception_text(exc), exc.details)
        except asyncio.CancelledError:
            accepting = False
            if delivery is not None:
                delivery.cancel()
            _close(pending_updates)
            raise
        except Exception as exc:
            outcome = _error(_exception_text(exc))
        accepting = False
        if delivery is not None:
            await delivery  # every update is delivered before tool_execution_end
        return outcome

    async def _after(self, prepared: _Prepared, outcome: _Outcome) -> _Outcome:
        if self.after_tool_call is None:
            return outcome
        context = AfterToolCallContext(
            self.assistant_message, prepared.call, prepared.tool, prepared.args, outcome.result, outcome.is_error,
            list(self.history),
        )
        try:
            change = await _maybe_await(self.after_tool_call(context, self.signal))
        except Exception as exc:
            return _error(_exception_text(exc))
        if isinstance(change, AgentToolResult):
            return _Outcome(change, change.is_error)
        if isinstance(change, AfterToolCallResult):
            result = outcome.result
            is_error = change.is_error if change.is_error is not None else outcome.is_error
            return _Outcome(
                AgentToolResult(
                    list(change.content) if change.content is not None else result.content,
                    change.details if change.details is not None else result.details,
                    is_error,
                ),
                is_error,
            )
        return outcome


async def fail_truncated_calls(calls: Sequence[ToolCall], emit: Emit, record: Record) -> list[ToolResultMessage]:
    """Answer every call of a length-truncated message with an error result (never executed)."""
    results = []
    for call in calls:
        await emit(ToolExecutionStartEvent(call.id, call.name, call.arguments))
        outcome = _error(truncated_text(call.name))
        await emit(ToolExecutionEndEvent(call.id, call.name, outcome.result, True))
        message = _result_message(call, outcome)
        results.append(message)
        await record(message)
    return results


def _result_message(call: ToolCall, outcome: _Outcome) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=list(outcome.result.content),
        details=outcome.result.details,
        is_error=outcome.is_error,
    )


def _exception_text(exc: BaseException) -> str:
    text = str(exc)
    return text if text else type(exc).__name__


async def _deliver_in_order(previous: asyncio.Future[None] | None, awaitables: list[Awaitable[object]]) -> None:
    """Await one update's subscriber awaitables once the previous update's are done."""
    if previous is not None:
        await previous
    for update in awaitables:
        try:
            await update
        except Exception:
            logger.exception("tool_execution_update subscriber failed")


def _close(awaitables: list[Awaitable[object]]) -> None:
    for item in awaitables:
        close = getattr(item, "close", None)
        if close is not None:
            close()
