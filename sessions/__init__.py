"""The live coding session (agent + session file + model switching + compaction + retry), the
JSONL session store, settings, context files and export.

Public names load lazily (PEP 562), so importing ``sessions`` costs nothing until a name is used.
See ``docs/session-api.md`` for the contract.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.providers.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "CodingSession": "baton.sessions.coding_session",
    "SessionOptions": "baton.sessions.options",
    "SessionStats": "baton.sessions.stats",
    "ContextUsage": "baton.sessions.stats",
    "HandoffPreview": "baton.sessions.handoff",
    "CompactionResult": "baton.sessions.compaction",
    "SessionInfo": "baton.sessions.listing",
    "list_sessions": "baton.sessions.listing",
    "find_session": "baton.sessions.listing",
    "most_recent_session": "baton.sessions.listing",
    "default_session_dir": "baton.sessions.listing",
    "cwd_slug": "baton.sessions.listing",
    "Settings": "baton.sessions.settings",
    "load_settings": "baton.sessions.settings",
    "SessionStore": "baton.sessions.store",
    "SessionContext": "baton.sessions.context",
    "TreeNode": "baton.sessions.tree",
    "export_session": "baton.sessions.export",
    "SessionError": "baton.sessions.errors",
    "SessionLockedError": "baton.sessions.errors",
    "SessionFileError": "baton.sessions.errors",
    "SessionSaveError": "baton.sessions.errors",
    "SessionNotFoundError": "baton.sessions.errors",
    "SessionBusyError": "baton.sessions.errors",
    "NoModelError": "baton.sessions.errors",
    "CompactionError": "baton.sessions.errors",
    "CompactionAborted": "baton.sessions.compaction",
    # events
    "AnySessionEvent": "baton.sessions.events",
    "SessionEvent": "baton.sessions.events",
    "AutoCompactionStartEvent": "baton.sessions.events",
    "AutoCompactionEndEvent": "baton.sessions.events",
    "AutoRetryStartEvent": "baton.sessions.events",
    "AutoRetryEndEvent": "baton.sessions.events",
    "ModelChangeEvent": "baton.sessions.events",
    "ThinkingLevelChangeEvent": "baton.sessions.events",
    "SessionChangedEvent": "baton.sessions.events",
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
    "SessionSaveError",
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


__getattr__ = lazy_exports(__name__, globals(), _EXPORTS)


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from baton.sessions.coding_session import CodingSession
    from baton.sessions.compaction import CompactionAborted, CompactionResult
    from baton.sessions.context import SessionContext
    from baton.sessions.errors import (
        CompactionError,
        NoModelError,
        SessionBusyError,
        SessionError,
        SessionFileError,
        SessionLockedError,
        SessionNotFoundError,
        SessionSaveError,
    )
    from baton.sessions.events import (
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
    from baton.sessions.export import export_session
    from baton.sessions.handoff import HandoffPreview
    from baton.sessions.listing import (
        SessionInfo,
        cwd_slug,
        default_session_dir,
        find_session,
        list_sessions,
        most_recent_session,
    )
    from baton.sessions.options import SessionOptions
    from baton.sessions.settings import Settings, load_settings
    from baton.sessions.stats import ContextUsage, SessionStats
    from baton.sessions.store import SessionStore
    from baton.sessions.tree import TreeNode
