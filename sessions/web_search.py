"""Web search in a session: the vendor's own where the model has one, else the ``web_search``
tool (Brave Search, with ``BRAVE_API_KEY``), else none — and a line saying which (``/tools``).

The vendor's search runs on the vendor's side, between two events of a stream, so nobody can be
asked before it runs: it is offered only when the permission policy allows ``web_search`` without
asking (an allow rule ``web_search`` / ``WebSearch``, or the ``full`` mode) and no rule denies it.
Its searches and sources land in the transcript as text (:mod:`baton.providers.web_search`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.providers.web_search import NATIVE_SEARCH_APIS
from baton.tools import DEFAULT_TOOL_NAMES
from baton.tools.web_search import KEY_VARIABLE, search_key

if TYPE_CHECKING:
    from baton.sessions.coding_session import CodingSession

SEARCH_TOOL = "web_search"
_VENDOR = {"anthropic-messages": "Anthropic's web search", "openai-responses": "OpenAI's web search",
           "google-generative-ai": "Google Search grounding"}


def default_tool_names() -> list[str]:
    """A new session's tools: the defaults, and ``web_search`` when a search API key is set."""
    return [*DEFAULT_TOOL_NAMES, *([SEARCH_TOOL] if search_key() else [])]


def native_search_on(session: CodingSession) -> bool:
    """Whether the next request offers the vendor's own search (see the module docstring)."""
    if session.model.api not in NATIVE_SEARCH_APIS:
        return False
    if any(tool.name == SEARCH_TOOL for tool in session.agent.tools):
        return False
    return session.permissions.policy.decide(SEARCH_TOOL, {}).action == "allow"


def search_status(session: CodingSession) -> str:
    """One line for ``/tools``: which web search the model has now, or why none."""
    if any(tool.name == SEARCH_TOOL for tool in session.agent.tools):
        return "web search: the web_search tool (Brave Search API)"
    api = session.model.api
    if api in NATIVE_SEARCH_APIS:
        if native_search_on(session):
            return f"web search: {_VENDOR[api]}, run by the model's vendor (counted in the cost)"
        return (f"web search: off — {_VENDOR[api]} is available; allow it with the rule \"web_search\" in "
                "permissions.allow (it runs on the vendor's side, so it cannot ask first)")
    return (f"web search: none — {session.model.provider}/{session.model.id} has no search of its own; set "
            f"{KEY_VARIABLE} (Brave Search API) for the web_search tool")


def install_web_search(session: CodingSession) -> None:
    """Ask before each request whether to offer the vendor's search."""
    session.agent.web_search = lambda: native_search_on(session)
