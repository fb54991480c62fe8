"""The providers' own web search (Anthropic's web search server tool, OpenAI Responses' web search
tool, Gemini's Google Search grounding), offered when :attr:`StreamOptions.web_search` is set, and
kept in the transcript the same way whoever searched.

A search and its results, and the sources an answer cites, become plain text blocks of the
assistant message (:func:`search_text`, :func:`sources_text`) — never a vendor's own block — so
the transcript stays readable after a switch to another model, and a request to any vendor stays
valid (no server-tool block, result or encrypted content is sent back). How many searches a reply
made is kept in its usage (``webSearches``, an extra field pi ignores) and priced per search
(:data:`SEARCH_PRICES`) into ``cost.total``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from baton.providers.messages import Usage

SEARCH_PRICES: dict[str, float] = {
    "anthropic-messages": 10.0 / 1000,
    "openai-responses": 10.0 / 1000,
    "google-generative-ai": 14.0 / 1000,
}
"""US dollars per search, by wire protocol (the vendors' list prices: Anthropic $10 per 1,000
searches, OpenAI's web search tool $10 per 1,000 calls, Gemini $14 per 1,000 search queries).
A model's ``compat.webSearchCost`` overrides it."""
NATIVE_SEARCH_APIS = frozenset(SEARCH_PRICES)
"""The wire protocols whose vendor searches the web itself."""
SEARCH_MARK = "[web search]"
SOURCES_MARK = "Sources:"
_USAGE_FIELD = "webSearches"


@dataclass(frozen=True, slots=True)
class Source:
    """One web page a search found or an answer cited."""

    url: str
    title: str = ""


@dataclass(slots=True)
class Citations:
    """The pages an answer cited, in first-cited order, each once."""

    sources: list[Source] = field(default_factory=list)

    def add(self, url: object, title: object = "") -> None:
        """Record a cited page (anything but a non-empty string URL is ignored)."""
        if isinstance(url, str) and url and all(s.url != url for s in self.sources):
            self.sources.append(Source(url, title if isinstance(title, str) else ""))


def search_text(query: str, results: list[Source] | None, error: str | None = None) -> str:
    """A search as the transcript keeps it: the query and the pages found (``None``: the vendor
    did not say which), or why it failed."""
    head = f'{SEARCH_MARK} "{query}"' if query else SEARCH_MARK
    if error:
        return f"{head}: failed ({error})"
    if results is None:
        return head
    if not results:
        return f"{head}: no results"
    lines = [f"{head}:"] + [f"{n}. {_link(source)}" for n, source in enumerate(results, 1)]
    return "\n".join(lines)


def sources_text(sources: list[Source]) -> str:
    """The pages an answer cited, as a closing list."""
    return "\n".join([SOURCES_MARK] + [f"- {_link(source)}" for source in sources])


def _link(source: Source) -> str:
    title = " ".join(source.title.split()).replace("[", "(").replace("]", ")")
    if not source.url:
        return f"{title} (a data source of the vendor)"
    return f"[{title}]({source.url})" if title else source.url


def add_searches(usage: Usage, count: int) -> None:
    """Count ``count`` more searches in ``usage``."""
    if count > 0:
        setattr(usage, _USAGE_FIELD, searches_of(usage) + count)


def set_searches(usage: Usage, count: int) -> None:
    """Set the number of searches of ``usage`` (a vendor's cumulative count)."""
    if count > 0:
        setattr(usage, _USAGE_FIELD, count)


def searches_of(usage: Usage) -> int:
    """How many web searches the reply with ``usage`` made."""
    value = (usage.model_extra or {}).get(_USAGE_FIELD, 0)
    return value if isinstance(value, int) and value > 0 else 0


def offers_search(api: str, base_url: str | None, official_host: str, compat: dict[str, object] | None,
                  wanted: bool) -> bool:
    """Whether a request offers the vendor's search: asked for (``wanted``), and the endpoint is
    the vendor's own (``official_host`` in its base URL) unless the model's ``compat.webSearch``
    says otherwise (``true`` for a compatible server that has it, ``false`` to never offer it)."""
    if not wanted or api not in NATIVE_SEARCH_APIS:
        return False
    flag = (compat or {}).get("webSearch")
    if isinstance(flag, bool):
        return flag
    return not base_url or official_host in base_url


def search_price(api: str, compat: dict[str, object] | None) -> float:
    """Dollars per search for a model of ``api`` (its ``compat.webSearchCost`` first)."""
    override = (compat or {}).get("webSearchCost")
    if isinstance(override, int | float) and not isinstance(override, bool) and override >= 0:
        return float(override)
    return SEARCH_PRICES.get(api, 0.0)
