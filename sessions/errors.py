"""Errors raised by the sessions layer (a branch of the project's tree in ``providers/errors.py``).

Hierarchy::

    SessionError                  anything the sessions layer refuses to do
    ├── SessionFileError          a file that is not a (readable) session file
    ├── SessionSaveError          writing the session file failed (disk full, size limit...)
    ├── SessionLockedError        another process holds the session file's lock
    ├── SessionNotFoundError      no session matches a path or id prefix (or several do)
    ├── NoModelError              no model could be resolved for a new session
    ├── CompactionError           compaction could not run (nothing to compact, no key, ...)
    ├── SessionBusyError          the operation needs an idle session (also AgentBusyError)
    └── PromptRefusedError        a prompt not sent (unknown skill, blocked by a hook, an MCP prompt refused)
"""

from __future__ import annotations

from baton.agent.agent import AgentBusyError
from baton.providers.errors import BatonError, ConfigurationError, SessionStorageError


class SessionError(BatonError):
    """Base class for every error of the sessions layer."""


class SessionFileError(SessionError, SessionStorageError):
    """The file is not a session file (or cannot be read as one)."""


class SessionSaveError(SessionError, SessionStorageError):
    """An entry could not be written to the session file (the run's messages are in memory)."""


class SessionLockedError(SessionError, SessionStorageError):
    """Another process has the session file open for writing."""


class SessionNotFoundError(SessionError, SessionStorageError):
    """No session (or more than one) matches the given path or id prefix."""


class NoModelError(SessionError, ConfigurationError):
    """No model was given and none could be resolved (settings, session, API keys)."""


class CompactionError(SessionError):
    """Compaction could not produce a summary."""


class NothingToCompactError(CompactionError):
    """There is nothing to summarise (an empty session, recent messages that already fit, a
    compaction just made): not a failure."""


class SessionBusyError(SessionError, AgentBusyError):
    """The session is running; wait for it to become idle (or abort) first (also an
    :class:`agent.agent.AgentBusyError`, so either can be caught)."""


class PromptRefusedError(SessionError):
    """A prompt was not sent: an unknown ``/skill:``, a ``UserPromptSubmit`` hook blocked it, or an
    MCP prompt command could not be expanded (a missing argument, the server's error)."""
