"""The live coding session (agent + session file + model switching + compaction + retry), the
JSONL session store, settings, context files and export.

Public names load lazily (PEP 562), so importing ``sessions`` costs nothing until a name is used.
See ``docs/session-api.md`` for the contract.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    "CodingSession": "sessions.coding_session",
    "SessionOptions": "sessions.options",
    "SessionStats": "sessions.stats",
    "ContextUsage": "sessions.stats",
    "HandoffPreview": "sessions.handoff",
    "CompactionResult": "sessions.compaction",
    "SessionInfo": "sessions.listing",
    "list_sessions": "sessions.listing",
    "find_session": "sessions.listing",
    "most_recent_session": "sessions.listing",
    "default_session_dir": "sessions.listing",
    "cwd_slug": "sessions.listing",
    "Settings": "sessions.settings",
    "load_settings": "sessions.settings",
    "SessionStore": "sessions.store",
    "SessionContext": "sessions.context",
    "TreeNode": "sessions.tree",
    "export_session": "sessions.export",
    "SessionError": "sessions.errors",
    "SessionLockedError": "sessions.errors",
    "SessionFileError": "sessions.errors",
    "SessionNotFoundError": "sessions.errors",
    "SessionBusyError": "sessions.errors",
    "NoModelError": "sessions.errors",
    "CompactionError": "sessions.errors",
    "CompactionAborted": "sessions.compaction",
    # events
    "AnySessionEvent": "sessions.events",
    "SessionEvent": "sessions.events",
    "AutoCompactionStartEvent": "sessions.events",
    "AutoCompactionEndEvent": "sessions.events",
    "AutoRetryStartEvent": "sessions.events",
    "AutoRetryEndEvent": "sessions.events",
    "ModelChangeEvent": "sessions.events",
    "ThinkingLevelChangeEvent": "sessions.events",
    "SessionChangedEvent": "sessions.events",
}

__all__ = [
    "AnySessionEvent",
    "AutoCompactionEndEvent",
    "AutoCompactionStartEvent",
    "AutoRetryEndEvent",
    "AutoRetryStartEvent",
    "CodingSession",
    "CompactionAborted",
    "CompactionError",
    "CompactionResult",
    "ContextUsage",
    "HandoffPreview",
    "ModelChangeEvent",
    "NoModelError",
    "SessionBusyError",
    "SessionChangedEvent",
    "SessionContext",
    "SessionError",
    "SessionEvent",
    "SessionFileError",
    "SessionInfo",
    "SessionLockedError",
    "SessionNotFoundError",
    "SessionOptions",
    "SessionStats",
    "SessionStore",
    "Settings",
    "ThinkingLevelChangeEvent",
    "TreeNode",
    "cwd_slug",
    "default_session_dir",
    "export_session",
    "find_session",
    "list_sessions",
    "load_settings",
    "most_recent_session",
]


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'sessions' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from sessions.coding_session import CodingSession
    from sessions.compaction import CompactionAborted, CompactionResult
    from sessions.context import SessionContext
    from sessions.errors import (
        CompactionError,
        NoModelError,
        SessionBusyError,
        SessionError,
        SessionFileError,
        SessionLockedError,
        SessionNotFoundError,
    )
    from sessions.events import (
        AnySessionEvent,
        AutoCompactionEndEvent,
        AutoCompactionStartEvent,
        AutoRetryEndEvent,
        AutoRetryStartEvent,
        ModelChangeEvent,
        SessionChangedEvent,
        SessionEvent,
        ThinkingLevelChangeEvent,
    )
    from sessions.export import export_session
    from sessions.handoff import HandoffPreview
    from sessions.listing import (
        SessionInfo,
        cwd_slug,
        default_session_dir,
        find_session,
        list_sessions,
        most_recent_session,
    )
    from sessions.options import SessionOptions
    from sessions.settings import Settings, load_settings
    from sessions.stats import ContextUsage, SessionStats
    from sessions.store import SessionStore
    from sessions.tree import TreeNode
