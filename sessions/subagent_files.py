"""Reading a subagent's transcript back from its child session file (to show it, not to resume it).

A ``task`` result's details name the child file (``sessionFile``) and its session id
(``sessionId``); baton wrote that file at ``<session dir>/subagents/<parent id>/<name>.jsonl``
(``sessions/subagents.py``). The details come from a session file, which is data (DESIGN §10): a
file edited by hand, or a hostile one, may name ``/etc/shadow``, ``~/.ssh/id_rsa``, a FIFO,
``/dev/zero``, or a place reached through a symlink. So only a file in that one shape is read:

- the path, made absolute and normalised, must be ``<root>/subagents/<folder>/<name>.jsonl`` for
  one of the ``roots`` the caller trusts (the session folder, the parent file's folder);
- it is opened from a handle on the root, each step (``subagents``, the folder, the file) with
  ``O_NOFOLLOW``: a symlink anywhere below the root is refused, never followed;
- it must be a regular file (a FIFO is not waited on) of at most :data:`MAX_CHILD_BYTES`;
- its header must carry the session id the details name (a file swapped for another is refused).

Anything else is a :class:`ChildTranscriptError` whose message says what is wrong.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from baton.agent.messages import AgentMessage
from baton.providers.bounded_read import FileRefusedError, FileTooLargeError, format_cap, read_regular
from baton.sessions.errors import SessionError
from baton.sessions.store import SessionStore
from baton.sessions.subagents import SUBAGENT_DIR
from baton.tools.anchored import PathChangedError, open_step

MAX_CHILD_BYTES = 16 * 1024 * 1024
"""Largest child session file read back for display (a subagent's 500 tool calls fit well)."""


class ChildTranscriptError(Exception):
    """The child session file is not read (see the module docstring); the message says why."""


@dataclass(frozen=True, slots=True)
class ChildTranscript:
    """A subagent's messages as its child session file holds them."""

    path: Path
    messages: list[AgentMessage]
    warnings: list[str]


def child_place(session_file: str, roots: Sequence[Path]) -> tuple[Path, str, str]:
    """``(root, folder, name)`` of ``session_file`` when it has the one allowed shape under a
    root, else :class:`ChildTranscriptError`."""
    if not session_file or "\x00" in session_file:
        raise ChildTranscriptError("the task result names no child session file")
    target = os.path.normpath(os.path.abspath(session_file))
    for root in roots:
        base = os.path.normpath(os.path.abspath(root))
        prefix = os.path.join(base, SUBAGENT_DIR) + os.sep
        if not target.startswith(prefix):
            continue
        rest = target[len(prefix):].split(os.sep)
        if len(rest) == 2 and all(part not in ("", ".", "..") for part in rest) and rest[1].endswith(".jsonl"):
            return Path(base), rest[0], rest[1]
    raise ChildTranscriptError(f"{session_file} is not a subagent file of this session's folder; not read")


def read_child_transcript(session_file: str, session_id: str, roots: Sequence[Path]) -> ChildTranscript:
    """The messages of the child file the details name (see the module docstring)."""
    root, folder, name = child_place(session_file, roots)
    path = root / SUBAGENT_DIR / folder / name
    try:
        data = _read_below(root, (SUBAGENT_DIR, folder), name)
    except FileTooLargeError:
        raise ChildTranscriptError(f"{path} is larger than {format_cap(MAX_CHILD_BYTES)}; not read") from None
    except PathChangedError:
        raise ChildTranscriptError(f"{path} goes through a symlink; not read") from None
    except FileRefusedError as exc:
        raise ChildTranscriptError(f"{path}: {exc}; not read") from None
    except OSError as exc:
        if exc.errno == getattr(os, "ELOOP", 40):
            raise ChildTranscriptError(f"{path} is a symlink; not read") from None
        raise ChildTranscriptError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        store = SessionStore.read_stream(io.BytesIO(data), path)
        messages = store.build_context().messages
    except (SessionError, ValueError, TypeError, KeyError, StopIteration) as exc:
        raise ChildTranscriptError(f"{path} is not a readable session file ({exc})") from None
    if not session_id or store.session_id != session_id:
        raise ChildTranscriptError(f"{path} holds another session than the task's; not read")
    return ChildTranscript(path, messages, list(store.warnings))


def _read_below(root: Path, folders: tuple[str, ...], name: str) -> bytes:
    """``root/folders.../name`` read from a handle on ``root``, refusing a symlink at every step."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the user's own folder
    try:
        for folder in folders:
            step = open_step(fd, folder)
            os.close(fd)
            fd = step
        return read_regular(name, MAX_CHILD_BYTES, dir_fd=fd, follow=False)
    finally:
        os.close(fd)
