"""Model descriptions (pi's ``Model`` shape), cost calculation, and thinking: the levels a model
honours (:func:`clamp_thinking_level`, :func:`thinking_levels`) and the effort a level is sent as
(:func:`effort_for_level`: the catalog's accepted efforts, else the adapter's family rule)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias
from urllib.parse import urlparse

from pydantic import Field

from baton.providers.web_search import search_price, searches_of
from baton.providers.wire_model import _Wire

if TYPE_CHECKING:
    from baton.providers.messages import Usage

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
    release_date: str | None = Field(default=None, alias="releaseDate")
    """``YYYY-MM-DD`` (or ``YYYY-MM``) when the model came out, where the catalog knows it."""
    knowledge: str | None = None
    """The training data's cut-off (``YYYY-MM`` or ``YYYY-MM-DD``), where known."""
    inferred_from: str | None = Field(default=None, alias="inferredFrom")
    """Set on a model the catalog does not list: the ``provider/id`` whose window, thinking and
    image support it was given (its prices are unknown: zero)."""

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
    searches = searches_of(usage)
    if searches:
        cost.total += searches * search_price(model.api, model.compat)


# ---------------------------------------------------------------------------------------------
# Thinking: the one place that decides which level a model honours and which effort a level is

_EFFORT_ORDER = ("minimal", "low", "medium", "high", "xhigh", "max")


def clamp_thinking_level(model: Model, level: ThinkingLevel) -> ThinkingLevel:
    """The thinking level a model can honour: ``off`` for models without reasoning, and
    ``high`` instead of ``xhigh`` unless the model's compat says it supports ``xhigh``."""
    if not model.reasoning:
        return "off"
    if level == "xhigh" and not (model.compat or {}).get("supportsXhigh", False):
        return "high"
    return level


def thinking_levels(model: Model) -> list[ThinkingLevel]:
    """The thinking levels ``model`` honours, in cycling order (those :func:`clamp_thinking_level`
    keeps as they are)."""
    return [level for level in THINKING_LEVELS if clamp_thinking_level(model, level) == level]


def accepted_efforts(model: Model) -> list[str] | None:
    """The reasoning effort values the model accepts (``compat.reasoningEfforts``, from the
    catalog), or ``None`` when the catalog does not say (the adapter's family rules decide)."""
    efforts = (model.compat or {}).get("reasoningEfforts")
    if isinstance(efforts, list) and efforts and all(isinstance(e, str) for e in efforts):
        return efforts
    return None


def nearest_effort(efforts: Sequence[str], level: ThinkingLevel) -> str | None:
    """The effort among ``efforts`` for a thinking level other than ``off``: the level itself
    when accepted, else the nearest stronger effort (``xhigh`` becomes ``max`` where there is no
    ``xhigh``; ``medium`` becomes ``high`` where only high and max exist), else the strongest;
    ``default`` where that is all there is."""
    if level == "off":
        return None
    positive = [effort for effort in _EFFORT_ORDER if effort in efforts]
    if not positive:
        return "default" if "default" in efforts else None
    wanted = _EFFORT_ORDER.index(level)
    for effort in positive:
        if _EFFORT_ORDER.index(effort) >= wanted:
            return effort
    return positive[-1]


def least_effort(efforts: Sequence[str]) -> str | None:
    """The least reasoning among ``efforts`` (``none`` when reasoning can be turned off)."""
    return next((effort for effort in ("none", *_EFFORT_ORDER) if effort in efforts), None)


def effort_for_level(model: Model, level: ThinkingLevel) -> str | None:
    """:func:`nearest_effort` among the efforts the catalog says the model accepts; ``None``
    when the catalog does not say (the adapter's family rule decides, through
    :func:`nearest_effort` too)."""
    efforts = accepted_efforts(model)
    return nearest_effort(efforts, level) if efforts is not None else None


def lowest_effort(model: Model) -> str | None:
    """The least reasoning the model accepts (``none`` when it can turn reasoning off), for the
    ``off`` level; ``None`` when the catalog does not say."""
    efforts = accepted_efforts(model)
    return least_effort(efforts) if efforts is not None else None


def supports_temperature(model: Model) -> bool:
    """False for models that refuse a ``temperature`` (``compat.supportsTemperature: false``,
    from the catalog: Claude Opus 4.7 and later, OpenAI's reasoning models...)."""
    return (model.compat or {}).get("supportsTemperature") is not False
