"""What a coding session is opened with."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

from baton.providers.models import Model, ThinkingLevel
from baton.sessions.settings import Settings


@dataclass
class SessionOptions:
    """How to open a session (see ``docs/session-api.md``)."""

    cwd: Path
    model: Model | None = None
    """``None``: the resumed session's model, else settings' default, else the first model with a key."""
    thinking: ThinkingLevel | None = None
    tools: list[str] | None = None
    """Tool names (default ``read, bash, edit, write, web_fetch``, and ``web_search`` with a search key);
    ``[]`` for no tools."""
    session: str = "new"
    """``new`` | ``continue`` | ``none`` (in memory only) | a file path or session-id prefix."""
    session_dir: Path | None = None
    system_prompt: str | None = None
    """Replaces the default prompt (text, or the path of a file holding it)."""
    append_system_prompt: str | None = None
    """Appended to the prompt (text, or the path of a file holding it)."""
    context_files: bool = True
    prompt_commands: bool = True
    mcp: bool = True
    """Use MCP servers (``--no-mcp``: none)."""
    mcp_config_files: list[Path] = field(default_factory=list)
    """More ``{"mcpServers": ...}`` files (``--mcp-config``), after ``mcp.json`` and ``.mcp.json``."""
    start_mcp: bool = True
    """Start the servers as the session opens; the app starts them after its first paint instead
    (a prompt starts them in any case)."""
    trust_project: bool | None = None
    """The project's hooks and ``.mcp.json`` servers: ``True`` trusted for this run
    (``--trust-project``), ``False`` never, ``None`` as the user answered before (else waiting
    in ``session.extensions.pending_trust``)."""
    """Discover skills and prompt templates (``.baton/skills``, ``.baton/prompts``, ...)."""
    api_key: str | None = None
    """Key for the starting model's provider (overrides the environment / models.json)."""
    settings: Settings | None = None
    preload_tokenizer: bool = False
    """Load tiktoken in the background at once. Off by default: it costs about 40 MB of peak
    RSS, and counts need it only near a decision (the compaction threshold, the window,
    ``/context``), where it loads then; until it is loaded, counts after the provider's last
    reported usage use pi's four-characters-a-token estimate."""
    approval: str | None = None
    """``plan`` | ``ask`` | ``auto`` | ``full``: overrides the ``approval`` setting (``--approval``,
    ``--plan``)."""
    fallback_models: list[str] | None = None
    """``--fallback`` models (replacing the ``fallbackModels`` setting when given)."""
    max_cost_usd: float | None = None
    """``--max-cost``: the most this process may spend on the session, in US dollars."""
    extra_models: list[Model] = field(default_factory=list)
    """Models known beyond the catalog (e.g. test or embedded models): used to restore a
    session's model and offered by ``CodingSession.available_models``."""
    new_session_id: str | None = None
    """The id a ``new`` or ``none`` session gets (``None``: a fresh one). ACP names the session
    in its ``session/new`` answer before the session has opened."""


def read_text_or_file(value: str | None) -> str | None:
    """``value``, or the contents of the file it names."""
    if not value:
        return value
    if "\n" not in value and len(value) < 4096:
        candidate = Path(value).expanduser()
        with contextlib.suppress(OSError, ValueError):
            if candidate.is_file():
                return candidate.read_text(encoding="utf-8")
    return value
