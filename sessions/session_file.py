"""Lines of a session file: writing an entry as one JSONL line, reading lines back, and the
file operations the store relies on (an exclusive lock taken without waiting, atomic creation,
complete writes, synced folders).

Reading never trusts the file: a torn last line, a line that is not JSON, nested too deeply or not
valid UTF-8 is reported and skipped (or kept with U+FFFD for bad bytes); a first line that is not
a session header refuses the whole file. Writing never fails on what an entry holds: a value JSON
cannot carry is clamped, and the file stays valid JSONL that loads and resumes.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import stat
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from baton.providers.json_depth import (
    MAX_LINE_DEPTH,
    JsonTooDeepError,
    clamp_depth,
    clamp_object,
    loads_bounded,
    text_depth_exceeds,
)
from baton.providers.json_types import JsonMapping, JsonObject, JsonValue
from baton.providers.surrogates import join_surrogates
from baton.sessions.entries import CURRENT_VERSION, SessionEntry, SessionHeader
from baton.sessions.errors import SessionFileError, SessionLockedError

logger = logging.getLogger(__name__)

FILE_MODE = 0o600
DIR_MODE = 0o700


def session_file_name(timestamp: str, session_id: str) -> str:
    """``<timestamp>_<uuid>.jsonl`` with the timestamp's ``:`` and ``.`` made file-name safe."""
    return f"{timestamp.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"


def dump_line(data: JsonMapping) -> bytes:
    """One JSONL line (compact JSON, UTF-8, newline-terminated).

    Never fails on a string: a lone surrogate (undecodable command-line bytes, half an emoji)
    becomes U+FFFD (split pairs are joined), with one warning per process. ``NaN`` and the
    infinities raise ``ValueError`` (they are not JSON: :func:`entry_line` writes ``null``)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        _warn_replaced()
        return join_surrogates(text).encode("utf-8", "replace")


def entry_line(entry: SessionEntry | SessionHeader) -> bytes:
    """The line for ``entry``; never fails on what the entry holds, and never writes a line
    that loading would refuse.

    An entry that cannot be written as it is (a value nested past what pydantic serialises or
    past :data:`MAX_LINE_DEPTH`, a ``NaN``) is written with its free-form values clamped
    (:func:`clamp_object`): the file stays valid JSONL that loads and resumes, and the problem
    is logged once per entry."""
    try:
        line = dump_line(entry.to_dict())
    except (ValueError, TypeError, RecursionError) as exc:
        problem: Exception = exc
    else:
        if line.count(b"[") + line.count(b"{") <= MAX_LINE_DEPTH or not text_depth_exceeds(
            line.decode("utf-8", "replace"), MAX_LINE_DEPTH
        ):
            return line
        problem = JsonTooDeepError(MAX_LINE_DEPTH)
    logger.warning("session entry %s saved with values cut: %s", getattr(entry, "id", "header"), problem)
    return dump_line(clamp_depth(clamp_object(entry).to_dict(), MAX_LINE_DEPTH))


_replaced_warned = False


def _warn_replaced() -> None:
    global _replaced_warned
    if not _replaced_warned:
        _replaced_warned = True
        logger.warning("text that is not valid Unicode (lone surrogates) was saved as U+FFFD in the session file")


@dataclass(slots=True, frozen=True)
class TailFix:
    """How to repair a file's end before appending: cut a torn line, or terminate a whole one."""

    truncate_to: int | None = None
    add_newline: bool = False


@dataclass(slots=True)
class LoadReport:
    """What loading a file found besides the entries: skipped lines, the original version."""

    warnings: list[str] = field(default_factory=list)
    original_version: int = CURRENT_VERSION
    torn_tail: bool = False

    @property
    def migrated(self) -> bool:
        """True when the file was in pi's v1 or v2 format."""
        return self.original_version < CURRENT_VERSION


class LineReader:
    """Parsed JSON objects from a session file, one line at a time (header first).

    Skipped lines are recorded in :attr:`report`; :attr:`tail` says how to repair the file's
    end before the next append (a torn last line is cut off; a whole last line without its
    newline gets one). Iterating raises :class:`SessionFileError` when the first line is not a
    session header."""

    def __init__(self, handle: BinaryIO, path: Path) -> None:
        self.handle = handle
        self.path = path
        self.report = LoadReport()
        self.tail = TailFix()

    def _lossy(self, raw: bytes, number: int) -> JsonValue:
        """A line that is not valid UTF-8 but otherwise whole JSON, decoded with U+FFFD for the
        bad bytes (as pi does), so one damaged byte does not drop the entry; else ``None``."""
        try:
            value = loads_bounded(raw.decode("utf-8", "replace"), MAX_LINE_DEPTH, allow_nan=True)
        except ValueError:
            return None
        self.report.warnings.append(
            f"{self.path.name}: line {number} holds bytes that are not UTF-8 (kept, shown as \ufffd)"
        )
        return value

    def __iter__(self) -> Iterator[JsonObject]:
        path = self.path
        offset = 0
        seen_header = False
        for number, raw in enumerate(self.handle, start=1):
            start = offset
            offset += len(raw)
            unterminated = not raw.endswith(b"\n")
            if not raw.strip():
                continue
            too_deep = False
            try:
                value = loads_bounded(raw, MAX_LINE_DEPTH, allow_nan=True)
            except JsonTooDeepError:  # json.loads would raise RecursionError, pydantic fail later
                value, too_deep = None, True
            except ValueError:  # includes invalid UTF-8
                value = self._lossy(raw, number)
            if not seen_header:
                if not _is_header(value):
                    raise SessionFileError(
                        f"{path} is not a baton/pi session file (its first line is not a session header)"
                    )
                seen_header = True
            elif not isinstance(value, dict):
                if unterminated:
                    self.report.torn_tail = True
                    self.report.warnings.append(
                        f"{path.name}: the last line is incomplete (torn write) and was skipped"
                    )
                    self.tail = TailFix(truncate_to=start)
                elif too_deep:
                    self.report.warnings.append(
                        f"{path.name}: line {number} is nested more than {MAX_LINE_DEPTH} levels deep and was skipped"
                    )
                else:
                    self.report.warnings.append(f"{path.name}: line {number} is not a JSON object and was skipped")
                continue
            if unterminated:
                self.tail = TailFix(add_newline=True)
            yield value
        if not seen_header:
            raise SessionFileError(f"{path} is not a baton/pi session file (it is empty)")


def require_regular(path: Path) -> None:
    """Refuse a FIFO, device or socket at a session path (opening a FIFO would block)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # missing: a new session; unreadable: opening reports it
    if not stat.S_ISREG(mode):
        raise SessionFileError(f"{path} is not a session file (not a regular file)")


def _is_header(value: object) -> bool:
    return isinstance(value, dict) and value.get("type") == "session" and isinstance(value.get("id"), str)


def header_from(raw: JsonMapping, path: Path) -> SessionHeader:
    try:
        return SessionHeader.model_validate(raw)
    except ValueError as exc:
        raise SessionFileError(f"{path}: unreadable session header: {exc}") from exc


def delete_session_file(path: Path) -> None:
    """Delete a session file that no baton process has open (raises :class:`SessionLockedError`
    when one has, :class:`SessionFileError` when it cannot be opened or removed)."""
    fd = open_locked(path)
    try:
        path.unlink()
    except OSError as exc:
        raise SessionFileError(f"Cannot delete session file {path}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)


def open_locked(path: Path) -> int:
    """Open ``path`` for appending and take its exclusive lock (never waits)."""
    for _ in range(5):
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
        except OSError as exc:
            raise SessionFileError(f"Cannot open session file {path}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionLockedError(
                f"Session file {path} is open in another baton process. Close that session first, "
                "or start a new one (--session new / /new)."
            ) from None
        except OSError:
            os.close(fd)
            raise
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # replaced between open and lock (another writer rewrote it): try again
    raise SessionLockedError(f"Session file {path} keeps being replaced by another process.")


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_new_file(path: Path, content: bytes) -> int:
    """Atomically put ``content`` at ``path``; returns an append descriptor holding its lock."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    fd = os.open(tmp, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        write_all(fd, content)
        os.fsync(fd)
        os.replace(tmp, path)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)
    return fd


def _fsync_dir(directory: Path) -> None:
    try:
        dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
