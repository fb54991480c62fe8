"""Checkpoints: snapshots of the workspace in a shadow git repository, and rewinds of code and
conversation (``/rewind``). See :mod:`.store` for the repository and :mod:`.tracker` for the
session integration."""

from baton.sessions.checkpoints.changes import Changes, RestoreOutcome, Snapshot
from baton.sessions.checkpoints.errors import CheckpointError
from baton.sessions.checkpoints.records import Checkpoint, list_checkpoints
from baton.sessions.checkpoints.store import CheckpointStore
from baton.sessions.checkpoints.tracker import RestoreMode, RewindResult, SessionCheckpoints

__all__ = [
    "Changes",
    "Checkpoint",
    "CheckpointError",
    "CheckpointStore",
    "RestoreMode",
    "RestoreOutcome",
    "RewindResult",
    "SessionCheckpoints",
    "Snapshot",
    "list_checkpoints",
]
