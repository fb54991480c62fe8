"""Opening a session: which file, which model, and repairing a session that crashed mid-tool."""

from __future__ import annotations

from pathlib import Path

from baton.agent.messages import AgentMessage
from baton.providers.messages import AssistantMessage, TextContent, ToolResultMessage
from baton.providers.models import Model
from baton.sessions.errors import NoModelError, SessionNotFoundError
from baton.sessions.listing import find_session, most_recent_session
from baton.sessions.models import find_model, first_model_with_key
from baton.sessions.settings import Settings
from baton.sessions.store import SessionStore

INTERRUPTED_TOOL_TEXT = (
    "Tool execution was interrupted: the session ended (baton was closed or crashed) before this "
    "call finished. Its effects, if any, are unknown; check before relying on them."
)


def open_store(spec: str, cwd: Path, session_dir: Path, new_id: str | None = None) -> SessionStore:
    """The store for ``--session``-style ``spec``: ``new``, ``none``, ``continue``, a path or an
    id prefix (a path that does not exist becomes a new session there, as in pi). ``new_id``: the
    id a ``new`` or ``none`` session gets (chosen beforehand, e.g. ACP's answer named it)."""
    value = (spec or "new").strip()
    if value == "new":
        return SessionStore.create(session_dir, cwd, session_id=new_id)
    if value == "none":
        return SessionStore.in_memory(cwd, new_id)
    if value == "continue":
        recent = most_recent_session(cwd, session_dir)
        return SessionStore.open(recent, cwd=cwd) if recent else SessionStore.create(session_dir, cwd)
    try:
        path = find_session(value, cwd, session_dir)
    except SessionNotFoundError:
        looks_like_path = "/" in value or value.endswith(".jsonl")
        if not looks_like_path:
            raise
        path = Path(value).expanduser().absolute()
    return SessionStore.open(path, cwd=cwd)


def resolve_model(stored: tuple[str, str] | None, settings: Settings, extra: list[Model]) -> Model:
    """The model to start with when none is given: the session's, the settings' default, the
    first extra model, the first catalog model with a key — else :class:`NoModelError`."""
    if stored is not None:
        model = find_model(f"{stored[0]}/{stored[1]}", extra)
        if model is not None:
            return model
    if settings.default_model:
        model = find_model(settings.default_model, extra)
        if model is not None:
            return model
    if extra:
        return extra[0]
    model = first_model_with_key()
    if model is not None:
        return model
    raise NoModelError(
        "No model available: pass a model, set default_model in settings.json, or set an API key "
        "(e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY)."
    )


def interrupted_tool_results(messages: list[AgentMessage]) -> list[ToolResultMessage]:
    """Error results for the tool calls a branch ends with but never answered (a crash
    mid-tool); empty when the branch ends cleanly."""
    index = next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AssistantMessage)), -1)
    if index < 0:
        return []
    last = messages[index]
    assert isinstance(last, AssistantMessage)
    after = messages[index + 1 :]
    if last.stop_reason in ("error", "aborted") or not all(isinstance(m, ToolResultMessage) for m in after):
        return []
    answered = {m.tool_call_id for m in after if isinstance(m, ToolResultMessage)}
    return [
        ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=[TextContent(text=INTERRUPTED_TOOL_TEXT)],
            details={"interrupted": True},
            is_error=True,
        )
        for call in last.tool_calls
        if call.id not in answered
    ]
