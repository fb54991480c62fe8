"""Provider-neutral messages, models, the handoff transform and the wire-protocol adapters.

Public names are imported lazily (PEP 562) so that ``import providers`` stays cheap: the CLI's
fast paths (``--version``, print mode) never pay for modules they do not use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    # messages
    "Message": "providers.messages",
    "UserMessage": "providers.messages",
    "AssistantMessage": "providers.messages",
    "ToolResultMessage": "providers.messages",
    "TextContent": "providers.messages",
    "ThinkingContent": "providers.messages",
    "ImageContent": "providers.messages",
    "ToolCall": "providers.messages",
    "Usage": "providers.messages",
    "Cost": "providers.messages",
    "StopReason": "providers.messages",
    "Context": "providers.messages",
    "Tool": "providers.messages",
    "message_from_dict": "providers.messages",
    "now_ms": "providers.messages",
    # models
    "Model": "providers.models",
    "ModelCost": "providers.models",
    "ThinkingLevel": "providers.models",
    "THINKING_LEVELS": "providers.models",
    "calculate_cost": "providers.models",
    "clamp_thinking_level": "providers.models",
    # events
    "AssistantMessageEvent": "providers.events",
    "AssistantMessageEventStream": "providers.events",
    "event_to_dict": "providers.events",
    # options and adapter contract
    "StreamOptions": "providers.options",
    "ProviderError": "providers.adapter",
    "MessageBuilder": "providers.adapter",
    # handoff
    "transform_messages": "providers.transform",
    "TransformReport": "providers.transform",
    "id_normalizer_for": "providers.tool_ids",
    "is_context_overflow": "providers.overflow",
    # streaming JSON
    "parse_streaming_json": "providers.streaming_json",
    "StreamingJsonParser": "providers.streaming_json",
    # streaming entry points
    "stream": "providers.dispatch",
    "complete": "providers.dispatch",
    # catalog
    "get_model": "providers.catalog",
    "list_models": "providers.catalog",
    "find_models": "providers.catalog",
    "get_api_key": "providers.catalog",
    "ModelNotFoundError": "providers.catalog",
    "env_var_for": "providers.catalog",
    "has_api_key": "providers.catalog",
    "models_json_errors": "providers.catalog",
    "reload_catalog": "providers.catalog",
    "baton_home": "providers.paths",
    # faux (scripted offline) provider
    "FauxProvider": "providers.faux",
    "FauxResponse": "providers.faux",
    "faux_model": "providers.faux",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'providers' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from providers.adapter import MessageBuilder, ProviderError
    from providers.catalog import (
        ModelNotFoundError,
        env_var_for,
        find_models,
        get_api_key,
        get_model,
        has_api_key,
        list_models,
        models_json_errors,
        reload_catalog,
    )
    from providers.dispatch import complete, stream
    from providers.events import AssistantMessageEvent, AssistantMessageEventStream, event_to_dict
    from providers.faux import FauxProvider, FauxResponse, faux_model
    from providers.messages import (
        AssistantMessage,
        Context,
        Cost,
        ImageContent,
        Message,
        StopReason,
        TextContent,
        ThinkingContent,
        Tool,
        ToolCall,
        ToolResultMessage,
        Usage,
        UserMessage,
        message_from_dict,
        now_ms,
    )
    from providers.models import (
        THINKING_LEVELS,
        Model,
        ModelCost,
        ThinkingLevel,
        calculate_cost,
        clamp_thinking_level,
    )
    from providers.options import StreamOptions
    from providers.overflow import is_context_overflow
    from providers.paths import baton_home
    from providers.streaming_json import StreamingJsonParser, parse_streaming_json
    from providers.tool_ids import id_normalizer_for
    from providers.transform import TransformReport, transform_messages
