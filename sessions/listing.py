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


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def read_session_info(path: Path) -> SessionInfo | None:
    """Summary of a session file, or ``None`` when it is not a session file."""
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
            data = handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)
    header: dict[str, object] | None = None
    count = 0
    first = ""
    name: str | None = None
    model: str | None = None
    last_activity = 0
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
        if header is None:
            if line.get("type") != "session" or not isinstance(line.get("id"), str):
                return None
            header = line
            continue
        kind = line.get("type")
        if kind == "session_info" and isinstance(line.get("name"), str) and line["name"].strip():
            name = line["name"].strip()
        if kind == "model_change" and isinstance(line.get("provider"), str) and isinstance(line.get("modelId"), str):
            model = f"{line['provider']}/{line['modelId']}"
        if kind != "message" or not isinstance(line.get("message"), dict):
            continue
        count += 1
        message = line["message"]
        role = message.get("role")
        if role in ("user", "assistant"):
            stamp = message.get("timestamp")
            last_activity = max(last_activity, stamp if isinstance(stamp, int) else iso_to_ms(line.get("timestamp")))
            if not first and role == "user":
                first = " ".join(_text(message.get("content")).split())
    if header is None:
        return None
    created_ms = iso_to_ms(str(header.get("timestamp") or ""))
    modified = (
        datetime.fromtimestamp(last_activity / 1000, UTC)
        if last_activity
        else datetime.fromtimestamp(stat.st_mtime, UTC)
    )
    parent = header.get("parentSession")
    return SessionInfo(
        path=path,
        id=str(header["id"]),
        cwd=str(header.get("cwd") or ""),
        created=datetime.fromtimestamp(created_ms / 1000, UTC) if created_ms else modified,
        modified=modified,
        message_count=count,
        first_message=first or "(no messages)",
        name=name,
        parent_session=parent if isinstance(parent, str) else None,
        model=model,
    )


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
