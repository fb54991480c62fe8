"""The entry points: :func:`stream` and :func:`complete`, dispatching on ``model.api``.

Every request goes through the same steps: project the stored transcript for the target model
(:func:`providers.transform.transform_messages` with the target's tool-call id normaliser), then
hand the projected context to the adapter. Wire adapters (HTTP + SSE) run under the shared
driver in :mod:`providers.transport`; in-process stream functions (the faux provider) are
called directly.

The wire protocols are registered by name in :mod:`providers.wire_protocols`
(:data:`WIRE_PROTOCOLS`: each built-in protocol's module, loaded here on first use), whose
``ADAPTER`` owns its API name and its tool-call id normaliser; the list of known APIs
(:func:`known_apis`, what models.json may name) derives from it. Adding a protocol:
docs/architecture.md, "Adding a wire protocol".
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from typing import Any, cast

from baton.providers.adapter import WireAdapter
from baton.providers.events import AssistantMessageEventStream, ErrorEvent
from baton.providers.messages import AssistantMessage, Context
from baton.providers.models import Model
from baton.providers.options import StreamOptions
from baton.providers.tool_ids import IdNormalizer
from baton.providers.wire_protocols import IN_PROCESS_PROTOCOLS, WIRE_PROTOCOLS
from baton.providers.wire_protocols import known_apis as known_apis  # the registry's names, asked here too

StreamFunction = Callable[[Model, Context, StreamOptions], AssistantMessageEventStream]
"""An in-process provider: gets the already transformed context, returns a started stream."""

_adapters: dict[str, WireAdapter] = {}
_functions: dict[str, StreamFunction] = {}


def register_adapter(adapter: WireAdapter) -> None:
    """Register a wire adapter under ``adapter.api`` (replacing any previous one)."""
    _adapters[adapter.api] = adapter
    _functions.pop(adapter.api, None)


def register_stream_function(api: str, function: StreamFunction) -> None:
    """Register an in-process stream function under ``api`` (replacing any previous one)."""
    _functions[api] = function
    _adapters.pop(api, None)


def unregister(api: str) -> None:
    """Forget whatever is registered under ``api``."""
    _adapters.pop(api, None)
    _functions.pop(api, None)


def resolve(api: str) -> WireAdapter | StreamFunction | None:
    """The adapter or stream function for ``api``; built-in ones load on first use."""
    if api in _functions:
        return _functions[api]
    if api in IN_PROCESS_PROTOCOLS:
        importlib.import_module(IN_PROCESS_PROTOCOLS[api]).register()
        return _functions.get(api)
    return wire_adapter(api)


def wire_adapter(api: str) -> WireAdapter | None:
    """The wire adapter registered for ``api`` (a built-in one is imported on first use)."""
    if api not in _adapters and api in WIRE_PROTOCOLS:
        register_adapter(_builtin_adapter(api))
    return _adapters.get(api)


def _builtin_adapter(api: str) -> WireAdapter:
    adapter: WireAdapter = importlib.import_module(WIRE_PROTOCOLS[api]).ADAPTER
    if adapter.api != api:
        raise RuntimeError(f"{WIRE_PROTOCOLS[api]}.ADAPTER speaks {adapter.api!r}, registered as {api!r}")
    return adapter


def id_normalizer_for(model: Model) -> IdNormalizer | None:
    """The tool-call id normaliser of ``model``'s wire protocol, or ``None`` when the protocol
    accepts any id (``faux``). The rules belong to the protocol: an in-process provider standing
    in for a built-in protocol (a test's faux ``anthropic-messages``) keeps them. Pure."""
    adapter = _adapters.get(model.api)
    if adapter is None and model.api in WIRE_PROTOCOLS:
        adapter = _builtin_adapter(model.api)
    return adapter.tool_call_id_normalizer(model) if adapter is not None else None


def prepare_context(model: Model, context: Context, options: StreamOptions) -> Context:
    """The context as the target model will receive it (the handoff transform applied, each
    unchanged message's projection reused from the previous request: :mod:`providers.wire_cache`)."""
    from baton.providers.wire_cache import transform_cached

    messages, slots, memo = transform_cached(
        context.messages, model, id_normalizer_for(model), options.thinking_handoff == "drop"
    )
    # Built without validation: the messages are the transform's (validated ones, or its copies).
    prepared = Context.model_construct(system_prompt=context.system_prompt, messages=messages, tools=context.tools)
    prepared._wire_slots = slots
    prepared._wire_memo = memo
    return prepared


def stream(model: Model, context: Context, **options: Any) -> AssistantMessageEventStream:
    """Start streaming one assistant message from ``model``.

    Keyword options are the fields of :class:`StreamOptions` (``api_key``, ``signal``,
    ``max_tokens``, ``temperature``, ``thinking``, ``tool_choice``, ``cache_retention``,
    ``session_id``, ``headers``, ``on_payload``, timeouts and retry limits). Must be called with
    a running event loop. Never raises once started: failures end the stream with an ``error``
    event; an unknown option name raises ``TypeError`` at once.
    """
    return stream_request(model, context, StreamOptions(**options))


def stream_request(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
    """:func:`stream` with its options already gathered in a :class:`StreamOptions`."""
    handler = resolve(model.api)
    if handler is None:
        return failed_stream(model, f"No provider adapter for api '{model.api}' (model {model.ref}).")
    try:
        prepared = prepare_context(model, context, options)
    except Exception as exc:  # transform never raises on valid input; guard the contract anyway
        return failed_stream(model, f"Could not prepare the request: {exc}")
    if model.api in _adapters:
        from baton.providers.transport import run_wire_adapter

        return run_wire_adapter(cast(WireAdapter, handler), model, prepared, options)
    return cast(StreamFunction, handler)(model, prepared, options)


async def complete(model: Model, context: Context, **options: Any) -> AssistantMessage:
    """Run :func:`stream` to the end and return the final message."""
    return await stream(model, context, **options).result()


def failed_stream(model: Model, message: str) -> AssistantMessageEventStream:
    """A stream that has already ended with an ``error`` event carrying ``message``."""
    out = AssistantMessageEventStream()
    error = AssistantMessage(
        api=model.api, provider=model.provider, model=model.id, stop_reason="error", error_message=message
    )
    out.push(ErrorEvent("error", error))
    return out


def abort_requested(signal: asyncio.Event | None) -> bool:
    """True when ``signal`` is set."""
    return signal is not None and signal.is_set()
