"""Errors of the checkpoint store."""

from __future__ import annotations

from baton.sessions.errors import SessionError


class CheckpointError(SessionError):
    """A checkpoint could not be taken, read or restored (git failed, the lock timed out,
    the commit is gone)."""
