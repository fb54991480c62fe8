"""Finding session files: the per-directory session folder, listing, lookup by id prefix."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from stat import S_ISREG

from baton.providers.json_depth import MAX_LINE_DEPTH, loads_bounded
from baton.providers.json_types import JsonObject, JsonValue
from baton.providers.paths import sessions_dir
from baton.sessions.entries import iso_to_ms
from baton.sessions.errors import SessionNotFoundError

_SEPARATORS = re.compile(r"[/\\:\x00-\x1f\x7f]")
MAX_NAME_BYTES = 255
"""The longest file name common file systems (ext4, xfs, btrfs, APFS) accept."""


def cwd_slug(cwd: Path | str) -> str:
    """pi's folder name for a working directory: ``--`` + the path without its leading
    separator, with ``/``, ``\\`` and ``:`` replaced by ``-``, + ``--``.

    Control characters (a newline in a directory name) become ``-`` too, and a name longer than
    the file system allows (a deep working directory) keeps its start and replaces the tail with
    a hash of the whole path, so it stays unique and under :data:`MAX_NAME_BYTES`."""
    text = str(cwd)
    if text[:1] in ("/", "\\"):
        text = text[1:]
    slug = f"--{_SEPARATORS.sub('-', text)}--"
    raw = os.fsencode(slug)
    if len(raw) <= MAX_NAME_BYTES:
        return slug
    digest = hashlib.sha256(os.fsencode(str(cwd))).hexdigest()[:16]
    keep = raw[: MAX_NAME_BYTES - len(digest) - 3].decode("utf-8", "ignore")
    return f"{keep}-{digest}--"


def default_session_dir(cwd: Path | str) -> Path:
    """``$BATON_HOME/sessions/<cwd-slug>/`` (not created here)."""
    return sessions_dir() / cwd_slug(Path(cwd).absolute())


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A session file as the resume picker shows it."""

    path: Path
    id: str
    cwd: str
    created: datetime
    modified: datetime
    message_count: int
    first_message: str
    name: str | None = None
    parent_session: str | None = None
    model: str | None = None
    """``provider/id`` of the model the session last used."""


def _text(content: JsonValue) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(_block_text(b) for b in content)
    return ""


def _block_text(block: JsonValue) -> str:
    if not isinstance(block, dict) or block.get("type") != "text":
        return ""
    text = block.get("text", "")
    return text if isinstance(text, str) else ""


def _stamp(value: JsonValue) -> str | int | float | None:
    """A timestamp value as written (anything else: none)."""
    return value if isinstance(value, str | int | float) else None


@dataclass
class _Summary:
    """What the listing shows of a session file, gathered line by line."""

    count: int = 0
    first: str = ""
    name: str | None = None
    model: str | None = None
    last_activity: int = 0

    def add(self, line: JsonObject) -> None:
        """Take in one entry (any line after the header)."""
        kind, name, message = line.get("type"), line.get("name"), line.get("message")
        provider, model_id = line.get("provider"), line.get("modelId")
        if kind == "session_info" and isinstance(name, str) and name.strip():
            self.name = name.strip()
        if kind == "model_change" and isinstance(provider, str) and isinstance(model_id, str):
            self.model = f"{provider}/{model_id}"
        if kind == "message" and isinstance(message, dict):
            self._message(message, line.get("timestamp"))

    def _message(self, message: JsonObject, entry_timestamp: JsonValue) -> None:
        self.count += 1
        role = message.get("role")
        if role not in ("user", "assistant"):
            return
        stamp = message.get("timestamp")
        when = stamp if isinstance(stamp, int) else iso_to_ms(_stamp(entry_timestamp))
        self.last_activity = max(self.last_activity, when)
        if not self.first and role == "user":
            self.first = " ".join(_text(message.get("content")).split())

    def info(self, path: Path, header: JsonObject, mtime: float) -> SessionInfo:
        created_ms = iso_to_ms(str(header.get("timestamp") or ""))
        modified = datetime.fromtimestamp(self.last_activity / 1000 if self.last_activity else mtime, UTC)
        parent = header.get("parentSession")
        return SessionInfo(
            path=path,
            id=str(header["id"]),
            cwd=str(header.get("cwd") or ""),
            created=datetime.fromtimestamp(created_ms / 1000, UTC) if created_ms else modified,
            modified=modified,
            message_count=self.count,
            first_message=self.first or "(no messages)",
            name=self.name,
            parent_session=parent if isinstance(parent, str) else None,
            model=self.model,
        )


def _read_regular(path: Path) -> tuple[bytes, float] | None:
    """The bytes of a regular file and its modification time (``None`` for anything else)."""
    try:
        # never block on a FIFO (or read a device) that merely carries a .jsonl name
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        stat = os.fstat(fd)
        if not S_ISREG(stat.st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(), stat.st_mtime
    except OSError:
        return None
    finally:
        os.close(fd)


def read_session_info(path: Path) -> SessionInfo | None:
    """Summary of a session file, or ``None`` when it is not a session file."""
    read = _read_regular(path)
    if read is None:
        return None
    data, mtime = read
    header: JsonObject | None = None
    summary = _Summary()
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            line = loads_bounded(raw, MAX_LINE_DEPTH, allow_nan=True)
        except ValueError:  # not JSON, or nested too deeply to read safely
            if header is None:
                return None
            continue
        if not isinstance(line, dict):
            continue
        if header is not None:
            summary.add(line)
        elif line.get("type") == "session" and isinstance(line.get("id"), str):
            header = line
        else:
            return None
    return summary.info(path, header, mtime) if header is not None else None


def list_sessions(cwd: Path | str, session_dir: Path | None = None) -> list[SessionInfo]:
    """The sessions of a working directory, newest first."""
    directory = session_dir or default_session_dir(cwd)
    if not directory.is_dir():
        return []
    infos = [
        info
        for path in directory.glob("*.jsonl")
        if not path.name.startswith(".") and (info := read_session_info(path)) is not None
    ]
    infos.sort(key=lambda i: i.modified, reverse=True)
    return infos


def list_all_sessions(sessions_root: Path | None = None) -> list[SessionInfo]:
    """The sessions of every working directory under ``$BATON_HOME/sessions``, newest first."""
    from baton.providers.paths import sessions_dir

    root = sessions_root or sessions_dir()
    if not root.is_dir():
        return []
    infos: list[SessionInfo] = []
    for folder in root.iterdir():
        if folder.is_dir() and not folder.is_symlink():
            infos.extend(list_sessions("", folder))
    infos.sort(key=lambda i: i.modified, reverse=True)
    return infos


def most_recent_session(cwd: Path | str, session_dir: Path | None = None) -> Path | None:
    """The newest session file of a working directory (``--continue``), if any."""
    sessions = list_sessions(cwd, session_dir)
    return sessions[0].path if sessions else None


def find_session(path_or_id_prefix: str, cwd: Path | str, session_dir: Path | None = None) -> Path:
    """A session file named by path, or by (a prefix of) its id: first among the working
    directory's sessions, then among all sessions under ``$BATON_HOME/sessions``.

    Raises :class:`SessionNotFoundError` when nothing (or more than one session) matches."""
    text = path_or_id_prefix.strip()
    if not text:
        raise SessionNotFoundError("No session given")
    candidate = Path(text).expanduser()
    if candidate.is_file():
        return candidate.absolute()
    if "/" in text or text.endswith(".jsonl"):
        raise SessionNotFoundError(f"Session file {candidate} does not exist")

    def matches(infos: list[SessionInfo]) -> list[SessionInfo]:
        return [i for i in infos if i.id.startswith(text) or i.path.stem.endswith(text) or i.path.name == text]

    local = matches(list_sessions(cwd, session_dir))
    found = local
    if not local:
        root = sessions_dir()
        found = []
        if root.is_dir():
            for folder in root.iterdir():
                if folder.is_dir():
                    found.extend(matches(list_sessions(cwd, folder)))
    if len(found) == 1:
        return found[0].path
    if not found:
        raise SessionNotFoundError(f"No session matches '{text}'")
    listing = ", ".join(f"{i.id} ({i.path.name})" for i in found[:5])
    raise SessionNotFoundError(f"'{text}' matches {len(found)} sessions: {listing}. Give more of the id.")
