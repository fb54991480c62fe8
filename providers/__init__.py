"""Provider-neutral messages, models, the handoff transform and the wire-protocol adapters.

Public names are imported lazily (PEP 562) so that ``import providers`` stays cheap: the CLI's
fast paths (``--version``, print mode) never pay for modules they do not use.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, cast

from baton.providers.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from importlib.abc import Loader
    from importlib.machinery import ModuleSpec
    from types import ModuleType

# httpx imports its command-line client (``httpx._main``, which loads click: ~1.5 MB of RSS) when
# click happens to be installed; baton never runs that client. ``None`` in ``sys.modules`` makes
# the import fail, and httpx then goes on as it does without click.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]


class _NoPydanticPlugins:
    """pydantic looks for plugins (``importlib.metadata`` entry points) when it builds its first
    validator, which loads ``importlib.metadata``, ``zipfile``, ``csv`` and ``importlib.resources``
    (~0.8 MB of RSS) and reads the metadata of every installed distribution. baton uses no
    pydantic plugin: this import hook gives pydantic a plugin loader that finds none, when (and
    only when) pydantic asks for it."""

    NAME = "pydantic.plugin._loader"

    @classmethod
    def find_spec(cls, name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        """The spec of pydantic's plugin loader; None (look elsewhere) for every other module."""
        if name != cls.NAME:
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(name, cast("Loader", cls()))

    def create_module(self, spec: ModuleSpec) -> None:
        """The default module."""

    def exec_module(self, module: ModuleType) -> None:
        """The loader's one function, answering that there are no plugins."""
        module.get_plugins = tuple  # type: ignore[attr-defined]


if _NoPydanticPlugins.NAME not in sys.modules and _NoPydanticPlugins not in sys.meta_path:
    sys.meta_path.insert(0, _NoPydanticPlugins)

_EXPORTS: dict[str, str] = {
    # messages
    "Message": "baton.providers.messages",
    "UserMessage": "baton.providers.messages",
    "AssistantMessage": "baton.providers.messages",
    "ToolResultMessage": "baton.providers.messages",
    "TextContent": "baton.providers.messages",
    "ThinkingContent": "baton.providers.messages",
    "ImageContent": "baton.providers.messages",
    "ToolCall": "baton.providers.messages",
    "Usage": "baton.providers.messages",
    "Cost": "baton.providers.messages",
    "StopReason": "baton.providers.messages",
    "Context": "baton.providers.messages",
    "Tool": "baton.providers.messages",
    "message_from_dict": "baton.providers.messages",
    "now_ms": "baton.providers.messages",
    # models
    "Model": "baton.providers.models",
    "ModelCost": "baton.providers.models",
    "ThinkingLevel": "baton.providers.models",
    "THINKING_LEVELS": "baton.providers.models",
    "calculate_cost": "baton.providers.models",
    "clamp_thinking_level": "baton.providers.models",
    # events
    "AssistantMessageEvent": "baton.providers.events",
    "AssistantMessageEventStream": "baton.providers.events",
    "event_to_dict": "baton.providers.events",
    # options and adapter contract
    "StreamOptions": "baton.providers.options",
    "ProviderError": "baton.providers.errors",
    "BatonError": "baton.providers.errors",
    "MessageBuilder": "baton.providers.adapter",
    # handoff
    "transform_messages": "baton.providers.transform",
    "TransformReport": "baton.providers.transform",
    "id_normalizer_for": "baton.providers.dispatch",
    "is_context_overflow": "baton.providers.overflow",
    # streaming JSON
    "parse_streaming_json": "baton.providers.streaming_json",
    "StreamingJsonParser": "baton.providers.streaming_json",
    # streaming entry points
    "stream": "baton.providers.dispatch",
    "stream_request": "baton.providers.dispatch",
    "complete": "baton.providers.dispatch",
    # catalog
    "get_model": "baton.providers.catalog",
    "list_models": "baton.providers.catalog",
    "find_models": "baton.providers.catalog",
    "get_api_key": "baton.providers.api_keys",
    "ModelNotFoundError": "baton.providers.catalog",
    "env_var_for": "baton.providers.api_keys",
    "has_api_key": "baton.providers.api_keys",
    "models_json_errors": "baton.providers.catalog",
    "reload_catalog": "baton.providers.catalog",
    "baton_home": "baton.providers.paths",
    # faux (scripted offline) provider
    "FauxProvider": "baton.providers.faux",
    "FauxResponse": "baton.providers.faux",
    "faux_model": "baton.providers.faux",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_exports(__name__, globals(), _EXPORTS)


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from baton.providers.adapter import MessageBuilder
    from baton.providers.api_keys import env_var_for, get_api_key, has_api_key
    from baton.providers.catalog import (
        ModelNotFoundError,
        find_models,
        get_model,
        list_models,
        models_json_errors,
        reload_catalog,
    )
    from baton.providers.dispatch import complete, id_normalizer_for, stream
    from baton.providers.errors import BatonError, ProviderError
    from baton.providers.events import AssistantMessageEvent, AssistantMessageEventStream, event_to_dict
    from baton.providers.faux import FauxProvider, FauxResponse, faux_model
    from baton.providers.messages import (
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
    from baton.providers.models import (
        THINKING_LEVELS,
        Model,
        ModelCost,
        ThinkingLevel,
        calculate_cost,
        clamp_thinking_level,
    )
    from baton.providers.options import StreamOptions
    from baton.providers.overflow import is_context_overflow
    from baton.providers.paths import baton_home
    from baton.providers.streaming_json import StreamingJsonParser, parse_streaming_json
    from baton.providers.transform import TransformReport, transform_messages
