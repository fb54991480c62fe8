"""Model descriptions (pi's ``Model`` shape) and cost calculation."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias
from urllib.parse import urlparse

from pydantic import Field

from baton.providers.messages import Usage, _Wire

ThinkingLevel: TypeAlias = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
THINKING_LEVELS: tuple[ThinkingLevel, ...] = ("off", "minimal", "low", "medium", "high", "xhigh")
CacheRetention: TypeAlias = Literal["none", "short", "long"]
InputKind: TypeAlias = Literal["text", "image"]
_TEXT_ONLY: list[InputKind] = ["text"]
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})


class ModelCost(_Wire):
    """Prices in US dollars per million tokens."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = Field(default=0.0, alias="cacheRead")
    cache_write: float = Field(default=0.0, alias="cacheWrite")


class Model(_Wire):
    """A model as pi describes it: which wire protocol (``api``) it speaks, who hosts it
    (``provider``), where (``base_url``) and what it can do."""

    id: str
    name: str = ""
    api: str
    provider: str
    base_url: str = Field(default="", alias="baseUrl")
    reasoning: bool = False
    input: list[InputKind] = Field(default_factory=lambda: _TEXT_ONLY.copy())
    cost: ModelCost = Field(default_factory=ModelCost)
    context_window: int = Field(default=128_000, alias="contextWindow")
    max_tokens: int = Field(default=16_384, alias="maxTokens")
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None

    def model_post_init(self, context: Any, /) -> None:
        if not self.name:
            self.name = self.id

    @property
    def ref(self) -> str:
        """``provider/id``, the name the CLI and settings use."""
        return f"{self.provider}/{self.id}"

    @property
    def is_local(self) -> bool:
        """True for a model served on this machine (Ollama, llama.cpp...), which needs no key."""
        try:
            host = urlparse(self.base_url).hostname
        except ValueError:
            return False
        return host in _LOCAL_HOSTS

    @property
    def supports_images(self) -> bool:
        """Whether the model accepts image input."""
        return "image" in self.input

    def same_model(self, provider: str, api: str, model_id: str) -> bool:
        """True when a message from (provider, api, model_id) came from this very model."""
        return self.provider == provider and self.api == api and self.id == model_id


def calculate_cost(model: Model, usage: Usage) -> None:
    """Fill ``usage.cost`` from the model's prices ($/Mtok) and the token counts, in place."""
    cost = usage.cost
    cost.input = model.cost.input * usage.input / 1_000_000
    cost.output = model.cost.output * usage.output / 1_000_000
    cost.cache_read = model.cost.cache_read * usage.cache_read / 1_000_000
    cost.cache_write = model.cost.cache_write * usage.cache_write / 1_000_000
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write


def clamp_thinking_level(model: Model, level: ThinkingLevel) -> ThinkingLevel:
    """The thinking level a model can honour: ``off`` for models without reasoning, and
    ``high`` instead of ``xhigh`` unless the model's compat says it supports ``xhigh``."""
    if not model.reasoning:
        return "off"
    if level == "xhigh" and not (model.compat or {}).get("supportsXhigh", False):
        return "high"
    return level
