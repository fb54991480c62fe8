"""The agent: the turn loop (stream a reply, run its tool calls, repeat), its queues, abort,
and the event stream subscribers see.

One run: the prompt is recorded, then each turn streams an assistant message and executes its
tool calls, until the model stops calling tools; steering messages are delivered after the
current tool batch and follow-ups when the run would end. Model, thinking level, tools and
system prompt are read at the start of every model call, so a switch mid-run applies to the
next call. The history is only appended to (and never handed to hooks by reference).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import replace
from types import TracebackType
from typing import Literal, TypeAlias

from baton.agent.events import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from baton.agent.execution import (
    AfterToolCall,
    BeforeToolCall,
    ToolBatch,
    ToolExecutionMode,
    fail_truncated_calls,
)
from baton.agent.listeners import Listeners
from baton.agent.messages import (
    LLM_MESSAGE_TYPES,
    AgentMessage,
    AppMessage,
    LlmMessage,
    coerce_message,
    convert_to_llm,
)
from baton.agent.tool import AgentTool
from baton.providers.errors import BatonError
from baton.providers.events import AssistantMessageEventStream, DoneEvent, ErrorEvent, StartEvent
from baton.providers.messages import (
    ABORTED_MESSAGE,
    AssistantMessage,
    Context,
    ImageContent,
    TextContent,
    ToolResultMessage,
    UserMessage,
)
from baton.providers.messages import Tool as ProviderTool
from baton.providers.models import Model, ThinkingLevel, clamp_thinking_level
from baton.providers.options import USE_DEFAULT_KEY, StreamOptions

logger = logging.getLogger(__name__)


QueueMode: TypeAlias = Literal["all", "one-at-a-time"]
Listener: TypeAlias = Callable[[AgentEvent], "Awaitable[object] | None"]
"""A subscriber: called with every event, in order; may return an awaitable (awaited)."""
GetApiKey: TypeAlias = Callable[[str], "str | Awaitable[str | None] | None"]
TransformContext: TypeAlias = Callable[
    [list[AgentMessage], asyncio.Event], Awaitable[list[AgentMessage]]
]
ConvertToLlm: TypeAlias = Callable[
    [list[AgentMessage]], "list[LlmMessage] | Awaitable[list[LlmMessage]]"
]
StreamFn: TypeAlias = Callable[[Model, Context, StreamOptions], AssistantMessageEventStream]
"""Starts one model request: :func:`providers.stream_request` or a stand-in with its signature."""


class AgentBusyError(BatonError, RuntimeError):
    """``prompt()`` or ``continue_()`` was called while a run is in progress."""


def _default_stream_fn() -> StreamFn:
    from baton.providers.dispatch import stream_request

    return stream_request


class Agent:
    """A stateful agent around the turn loop.

    ``model``, ``thinking``, ``tools`` and ``system_prompt`` may be reassigned at any time; they
    are read at the start of each model call. ``messages`` is the history (append-only during a
    run). Hooks: ``get_api_key(provider)`` per request; ``transform_context(messages, signal)``
    then ``convert_to_llm(messages)`` before every call (neither sees the history list itself);
    ``before_tool_call`` / ``after_tool_call`` around each tool call. ``stream_fn`` has the
    signature of :func:`providers.stream_request`; ``stream_options`` are the options of every
    request (a field may be changed between runs), to which each call adds the API key, the
    abort signal and the thinking level clamped to the model. ``tool_execution`` is
    ``"parallel"`` (results still recorded in call order) or ``"sequential"``.
    ``steering_mode`` / ``follow_up_mode`` decide whether queued messages are delivered all at
    once or one per turn (pi's default). ``abort_grace`` is how long (seconds) an aborted
    provider stream or tool may take to stop by itself before its task is cancelled.
    """

    def __init__(
        self,
        *,
        model: Model,
        tools: Iterable[AgentTool] = (),
        system_prompt: str = "",
        thinking: ThinkingLevel = "off",
        messages: Iterable[AgentMessage] = (),
        get_api_key: GetApiKey | None = None,
        transform_context: TransformContext | None = None,
        convert_to_llm: ConvertToLlm = convert_to_llm,
        before_tool_call: BeforeToolCall | None = None,
        after_tool_call: AfterToolCall | None = None,
        tool_execution: ToolExecutionMode = "parallel",
        stream_fn: StreamFn | None = None,
        stream_options: StreamOptions | None = None,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        abort_grace: float = 1.0,
    ) -> None:
        self.model = model
        self.tools: list[AgentTool] = list(tools)
        self.offers: Callable[[AgentTool], bool] | None = None
        """Which of ``tools`` the model is shown in a request (``None``: all). A call of a tool not
        shown still reaches ``before_tool_call``, which decides (plan mode refuses it there)."""
        self.system_prompt = system_prompt
        self.thinking: ThinkingLevel = thinking
        self.messages: list[AgentMessage] = list(messages)
        self.get_api_key = get_api_key
        self.transform_context = transform_context
        self.convert_to_llm = convert_to_llm
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.tool_execution: ToolExecutionMode = tool_execution
        self.stream_fn: StreamFn = stream_fn or _default_stream_fn()
        self.stream_options: StreamOptions = replace(stream_options) if stream_options else StreamOptions()
        self.web_search: Callable[[], bool] | None = None
        """Asked before each request whether to offer the vendor's own web search (``None``:
        :attr:`stream_options`' ``web_search`` decides)."""
        self.steering_mode: QueueMode = steering_mode
        self.follow_up_mode: QueueMode = follow_up_mode
        self.abort_grace = abort_grace

        self.stream_message: AssistantMessage | None = None
        """The assistant message being streamed right now (a live object), else ``None``."""
        self.pending_tool_calls: set[str] = set()
        """Ids of the tool calls currently executing."""
        self.error: str | None = None
        """The error message of the last run that ended in an error, else ``None``."""

        self._listeners: Listeners[AgentEvent] = Listeners("agent")
        self._steering: deque[AgentMessage] = deque()
        self._follow_up: deque[AgentMessage] = deque()
        self._running = False
        self._run_task: asyncio.Task[None] | None = None
        self._signal: asyncio.Event | None = None
        self._stream: AssistantMessageEventStream | None = None
        self._stream_watchdog: asyncio.TimerHandle | None = None
        self._turn_tools: list[AgentTool] = []

    # --- state ------------------------------------------------------------------------------
    @property
    def is_running(self) -> bool:
        """True from the start of ``prompt()``/``continue_()`` until its run has ended."""
        return self._running

    def replace_messages(self, messages: Iterable[AgentMessage]) -> None:
        """Replace the history (only while idle)."""
        if self._running:
            raise AgentBusyError("Cannot replace messages while the agent is running")
        self.messages = list(messages)

    # --- events -----------------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every event (sync, or async: awaited in order). Returns a
        function that unsubscribes it."""
        return self._listeners.add(listener)

    def events(self, *, until_agent_end: bool = True) -> AgentEventIterator:
        """An async iterator over events (subscribed at once). With ``until_agent_end`` it stops
        after the next ``agent_end``. Use as ``async with agent.events() as events:``."""
        return AgentEventIterator(self, until_agent_end=until_agent_end)

    async def _emit(self, event: AgentEvent) -> None:
        await self._listeners.emit(event)

    def _emit_nowait(self, event: AgentEvent) -> list[Awaitable[object]]:
        """Call the listeners now; the awaitables async listeners returned are for the caller."""
        return self._listeners.emit_nowait(event)

    # --- queues -----------------------------------------------------------------------------
    def steer(self, message: str | AgentMessage) -> None:
        """Queue a message for delivery after the current tool batch (skipping the batch's
        calls that have not started)."""
        self._steering.append(_as_message(message))

    def follow_up(self, message: str | AgentMessage) -> None:
        """Queue a message for delivery when the run would otherwise end."""
        self._follow_up.append(_as_message(message))

    def clear_queues(self) -> list[AgentMessage]:
        """Remove and return the queued steering and follow-up messages."""
        removed = [*self._steering, *self._follow_up]
        self._steering.clear()
        self._follow_up.clear()
        return removed

    @property
    def queued_messages(self) -> list[AgentMessage]:
        """The queued messages: steering first, then follow-ups."""
        return [*self._steering, *self._follow_up]

    @property
    def steering_queue(self) -> list[AgentMessage]:
        """The queued steering messages, in delivery order."""
        return list(self._steering)

    @property
    def follow_up_queue(self) -> list[AgentMessage]:
        """The queued follow-up messages, in delivery order."""
        return list(self._follow_up)

    def _dequeue(self, queue: deque[AgentMessage], mode: QueueMode) -> list[AgentMessage]:
        if not queue:
            return []
        if mode == "one-at-a-time":
            return [queue.popleft()]
        items = list(queue)
        queue.clear()
        return items

    def _poll_steering(self) -> list[AgentMessage]:
        return self._dequeue(self._steering, self.steering_mode)

    # --- running ----------------------------------------------------------------------------
    async def prompt(
        self,
        message: str | AgentMessage | Sequence[AgentMessage],
        images: Sequence[ImageContent] | None = None,
    ) -> None:
        """Run the agent on a new prompt; returns when the run has ended.

        A string becomes a user message (text first, then ``images``). Raises
        :class:`AgentBusyError` while a run is in progress (queue with :meth:`steer` or
        :meth:`follow_up` instead)."""
        if self._running:
            raise AgentBusyError(
                "Agent is already running; use steer() or follow_up() to queue a message"
            )
        if isinstance(message, str):
            content: list[TextContent | ImageContent] = [TextContent(text=message), *(images or ())]
            prompts: list[AgentMessage] = [UserMessage(content=content)]
        elif isinstance(message, UserMessage | AssistantMessage | ToolResultMessage | AppMessage):
            prompts = [message]
        else:
            prompts = [coerce_message(m) for m in message]
        await self._start(prompts)

    async def continue_(self) -> None:
        """Resume from the current history without a new prompt (retries, after compaction).

        The history must end in a message the model reads as ``user`` or ``toolResult``; when
        it ends in an assistant message, queued messages (steering first) are delivered as the
        prompt, otherwise this raises ``ValueError``."""
        if self._running:
            raise AgentBusyError("Agent is already running")
        if not self.messages:
            raise ValueError("No messages to continue from")
        last = self.messages[-1]
        if isinstance(last, AssistantMessage):
            queued = self._poll_steering() or self._dequeue(self._follow_up, self.follow_up_mode)
            if queued:
                await self._start(queued)
                return
            raise ValueError("Cannot continue from message role: assistant")
        if isinstance(last, AppMessage):
            converted = last.to_llm()
            if converted is None or converted.role != "user":
                raise ValueError(f"Cannot continue from message role: {last.role}")
        await self._start([])

    def abort(self) -> None:
        """Abort the run: the provider stream and every running tool are cancelled. Safe to
        call at any time, any number of times."""
        signal = self._signal
        if not self._running or signal is None or signal.is_set():
            return
        signal.set()
        if self._stream is not None:
            self._arm_watchdog(self._stream)

    def _arm_watchdog(self, stream: AssistantMessageEventStream) -> None:
        """End ``stream`` ourselves if the provider has not stopped ``abort_grace`` seconds
        after an abort."""
        if stream.closed or self._stream_watchdog is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # called outside the event loop: the provider must stop by itself
            return
        self._stream_watchdog = loop.call_later(self.abort_grace, self._force_end_stream, stream)

    async def wait_idle(self) -> None:
        """Return once no run is in progress."""
        task = self._run_task
        if task is not None and not task.done():
            await asyncio.wait([task])

    async def _start(self, prompts: list[AgentMessage]) -> None:
        while True:
            self._running = True
            signal = self._signal = asyncio.Event()
            self.error = None
            task = asyncio.create_task(self._run(prompts, signal), name="agent-run")
            self._run_task = task
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                if not task.done():
                    self.abort()
                raise
            # A message queued while the run was ending (agent_end subscribers may await) missed
            # the loop's last look at the queues: deliver it now rather than at the next prompt.
            if signal.is_set():
                return
            prompts = self._poll_steering() or self._dequeue(self._follow_up, self.follow_up_mode)
            if not prompts:
                return

    async def _run(self, prompts: list[AgentMessage], signal: asyncio.Event) -> None:
        added: list[AgentMessage] = []
        try:
            try:
                await self._emit(AgentStartEvent())
                await self._emit(TurnStartEvent())
                for prompt in prompts:
                    await self._record(prompt, added)
                await self._loop(signal, added)
            except Exception as exc:  # a bug in the loop or a hook: end the run cleanly, say why
                logger.exception("agent run failed")
                reply = _failure(self.model, f"Agent error: {exc}", signal)
                self.error = reply.error_message
                await self._record(reply, added)
                await self._emit(TurnEndEvent(reply, []))
            await self._emit(AgentEndEvent(added))
        except asyncio.CancelledError:
            signal.set()
            _close(self._emit_nowait(AgentEndEvent(added)))
            raise
        finally:
            self._cleanup()

    def _cleanup(self) -> None:
        if self._stream_watchdog is not None:
            self._stream_watchdog.cancel()
            self._stream_watchdog = None
        self._stream = None
        self.stream_message = None
        self.pending_tool_calls.clear()
        self._running = False

    async def _loop(self, signal: asyncio.Event, added: list[AgentMessage]) -> None:
        pending = self._poll_steering()
        first_turn = True
        while True:
            more_tool_calls = True
            while more_tool_calls or pending:
                if not first_turn:
                    await self._emit(TurnStartEvent())
                first_turn = False
                for message in pending:
                    await self._record(message, added)
                pending = []

                reply = await self._model_call(signal, added)
                if reply.stop_reason in ("error", "aborted"):
                    self.error = reply.error_message
                    await self._emit(TurnEndEvent(reply, []))
                    return

                results: list[ToolResultMessage] = []
                steering: list[AgentMessage] = []
                calls = reply.tool_calls
                more_tool_calls = bool(calls)
                if calls:
                    record = self._recorder(added)
                    if reply.stop_reason == "length":
                        results = await fail_truncated_calls(calls, self._emit, record)
                    else:
                        batch = ToolBatch(
                            assistant_message=reply,
                            tools=self._turn_tools,
                            history=self.messages,
                            signal=signal,
                            emit=self._emit,
                            emit_nowait=self._emit_nowait,
                            record=record,
                            poll_steering=self._poll_steering,
                            mode=self.tool_execution,
                            before_tool_call=self.before_tool_call,
                            after_tool_call=self.after_tool_call,
                            abort_grace=self.abort_grace,
                            running=self.pending_tool_calls,
                        )
                        results, steering = await batch.run()
                await self._emit(TurnEndEvent(reply, results))
                if signal.is_set():
                    return
                pending = steering or self._poll_steering()
            follow_ups = self._dequeue(self._follow_up, self.follow_up_mode)
            if not follow_ups:
                return
            pending = follow_ups

    async def _record(self, message: AgentMessage, added: list[AgentMessage]) -> None:
        await self._emit(MessageStartEvent(message))
        self.messages.append(message)
        added.append(message)
        await self._emit(MessageEndEvent(message))

    def _recorder(self, added: list[AgentMessage]) -> Callable[[AgentMessage], Awaitable[None]]:
        async def record(message: AgentMessage) -> None:
            await self._record(message, added)

        return record

    # --- one model call ---------------------------------------------------------------------
    async def _model_call(self, signal: asyncio.Event, added: list[AgentMessage]) -> AssistantMessage:
        model = self.model
        thinking = self.thinking
        self._turn_tools = list(self.tools)
        started = False
        try:
            stream = await self._open_stream(model, thinking, signal)
        except Exception as exc:
            reply = _failure(model, str(exc) or type(exc).__name__, signal)
        else:
            reply, started = await self._consume(stream, model, signal)
        if signal.is_set() and reply.stop_reason == "error":
            reply.stop_reason = "aborted"
        self.stream_message = None
        if not started:
            await self._emit(MessageStartEvent(reply))
        self.messages.append(reply)
        added.append(reply)
        await self._emit(MessageEndEvent(reply))
        return reply

    async def _open_stream(
        self, model: Model, thinking: ThinkingLevel, signal: asyncio.Event
    ) -> AssistantMessageEventStream:
        history = list(self.messages)
        if self.transform_context is not None:
            history = list(await self.transform_context(history, signal))
        converted = self.convert_to_llm(history)
        if hasattr(converted, "__await__"):
            converted = await converted
        context = _context(
            self.system_prompt or None,
            list(converted),
            [tool.schema() for tool in self._turn_tools if self.offers is None or self.offers(tool)] or None,
        )
        api_key = self.stream_options.api_key
        if self.get_api_key is not None:
            key = self.get_api_key(model.provider)
            if key is not None and not isinstance(key, str):
                key = await key
            if key:
                api_key = key
            elif api_key is USE_DEFAULT_KEY:
                api_key = None  # the hook is this agent's key lookup: it has none for this provider
        options = replace(
            self.stream_options, api_key=api_key, signal=signal, thinking=clamp_thinking_level(model, thinking)
        )
        if self.web_search is not None:
            options.web_search = self.web_search()
        return self.stream_fn(model, context, options)

    async def _consume(
        self, stream: AssistantMessageEventStream, model: Model, signal: asyncio.Event
    ) -> tuple[AssistantMessage, bool]:
        """Relay the provider events; returns the final message and whether message_start was
        emitted. The hot path: keep the per-event work tiny."""
        self._stream = stream
        if signal.is_set():  # aborted while the request was being prepared
            self._arm_watchdog(stream)
        emit = self._emit
        started = False
        reply: AssistantMessage | None = None
        try:
            async for event in stream:
                match event:
                    case DoneEvent():
                        reply = event.message
                        break
                    case ErrorEvent():
                        reply = event.error
                        break
                    case StartEvent():
                        self.stream_message = event.partial
                        started = True
                        await emit(MessageStartEvent(event.partial))
                    case _:
                        partial = event.partial
                        if not started:
                            self.stream_message = partial
                            started = True
                            await emit(MessageStartEvent(partial))
                        await emit(MessageUpdateEvent(partial, event))
        except Exception as exc:  # a stream must not raise; keep what arrived if it does
            logger.exception("provider stream raised")
            reply = self.stream_message or _failure(model, str(exc), signal)
            reply.stop_reason = "aborted" if signal.is_set() else "error"
            reply.error_message = reply.error_message or str(exc) or type(exc).__name__
        finally:
            self._stream = None
            if self._stream_watchdog is not None:
                self._stream_watchdog.cancel()
                self._stream_watchdog = None
        if reply is None:
            reply = self.stream_message or _failure(model, "Provider stream ended without a result", signal)
            if reply.stop_reason not in ("error", "aborted"):
                reply.stop_reason = "aborted" if signal.is_set() else "error"
                reply.error_message = reply.error_message or "Provider stream ended without a result"
        return reply, started

    def _force_end_stream(self, stream: AssistantMessageEventStream) -> None:
        """The provider did not stop within the grace period after abort: end it ourselves."""
        self._stream_watchdog = None
        if stream.closed:
            return
        model = self.model
        message = self.stream_message or AssistantMessage(
            api=model.api, provider=model.provider, model=model.id
        )
        message.stop_reason = "aborted"
        message.error_message = ABORTED_MESSAGE
        if stream.task is not None and not stream.task.done():
            stream.task.cancel()
        stream.push(ErrorEvent("aborted", message))


class AgentEventIterator:
    """Async iteration over an agent's events (see :meth:`Agent.events`)."""

    def __init__(self, agent: Agent, *, until_agent_end: bool = True) -> None:
        self._queue: asyncio.Queue[AgentEvent] = asyncio.Queue()
        self._until_agent_end = until_agent_end
        self._done = False
        self._unsubscribe: Callable[[], None] | None = agent.subscribe(self._queue.put_nowait)

    def close(self) -> None:
        """Stop receiving events."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def __aiter__(self) -> AsyncIterator[AgentEvent]:
        return self

    async def __anext__(self) -> AgentEvent:
        if self._done:
            raise StopAsyncIteration
        event = await self._queue.get()
        if self._until_agent_end and isinstance(event, AgentEndEvent):
            self._done = True
            self.close()
        return event

    async def __aenter__(self) -> AgentEventIterator:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _as_message(message: str | AgentMessage) -> AgentMessage:
    if isinstance(message, str):
        return UserMessage(content=[TextContent(text=message)])
    return coerce_message(message)


def _context(system_prompt: str | None, messages: list[LlmMessage], tools: list[ProviderTool] | None) -> Context:
    """The request's :class:`Context`. Validating it walks the whole history (0.15 ms a turn at
    300 messages, growing with it) only to hand back the very objects it was given, so when every
    message and tool already is a model object it is built as they are; anything else (a dict a
    ``convert_to_llm`` hook returned, a message of another role) goes through validation and its
    error as before."""
    if (isinstance(system_prompt, str | None)
            and LLM_MESSAGE_TYPES.issuperset(map(type, messages))
            and (tools is None or all(type(tool) is ProviderTool for tool in tools))):
        return Context.model_construct(system_prompt=system_prompt, messages=messages, tools=tools)
    return Context(system_prompt=system_prompt, messages=messages, tools=tools)


def _failure(model: Model, text: str, signal: asyncio.Event) -> AssistantMessage:
    aborted = signal.is_set()
    return AssistantMessage(
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason="aborted" if aborted else "error",
        error_message=ABORTED_MESSAGE if aborted and not text else text,
    )


def _close(awaitables: list[Awaitable[object]]) -> None:
    for item in awaitables:
        close = getattr(item, "close", None)
        if close is not None:
            close()
