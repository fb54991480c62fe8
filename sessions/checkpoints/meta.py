"""What a snapshot commit knows beyond git's tree: exact permission bits, empty folders, files
left out for their size and files the agent's tools were about to create where ignore rules hide
them.

Git keeps only "executable or not" and no empty directories, so a restore from the tree alone
turns a ``0600`` secret into ``0644`` and loses empty folders. This record is kept in the
snapshot commit's message (baton writes every commit of its shadow repository, so it is as
trustworthy as the tree): ``baton checkpoint``, a blank line, then one JSON object::

    {"v": 1, "modes": {"secrets.env": 384}, "dirs": {"logs": 448},
     "skipped": ["big.bin"], "absent": ["build/out.txt"]}

``modes`` lists only files whose permission bits are not git's plain ``0644``/``0755``;
``dirs`` the empty directories (leaves) with their bits; ``skipped`` files that existed but were
over the size limit; ``absent`` paths that did not exist when a tool was about to write them.
A commit without the object (made by an older baton) reads as ``None``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from baton.sessions.checkpoints.git import END, Git

HEADLINE = "baton checkpoint"
VERSION = 1
PLAIN_BITS = {"100644": 0o644, "100755": 0o755}
"""The permission bits git's file modes stand for (what a file without a ``modes`` entry has)."""


@dataclass
class SnapshotMeta:
    """The record of one snapshot (see the module docstring)."""

    modes: dict[str, int] = field(default_factory=dict)
    dirs: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)

    def copy(self) -> SnapshotMeta:
        """An independent copy."""
        return SnapshotMeta(dict(self.modes), dict(self.dirs), list(self.skipped), list(self.absent))

    def bits(self, path: str, git_mode: str) -> int:
        """The permission bits ``path`` had (git's mode ``100644``/``100755`` when not listed)."""
        return self.modes.get(path, PLAIN_BITS.get(git_mode, 0o644))

    def note_mode(self, path: str, bits: int, executable: bool) -> None:
        """Remember ``path``'s bits (only when they are not what git's mode says)."""
        if bits == (0o755 if executable else 0o644):
            self.modes.pop(path, None)
        else:
            self.modes[path] = bits

    def forget(self, path: str) -> None:
        """``path`` is gone."""
        self.modes.pop(path, None)

    def message(self) -> bytes:
        """The commit message carrying this record."""
        body = {"v": VERSION, "modes": dict(sorted(self.modes.items())), "dirs": dict(sorted(self.dirs.items())),
                "skipped": sorted(set(self.skipped)), "absent": sorted(set(self.absent))}
        return f"{HEADLINE}\n\n{json.dumps(body, separators=(',', ':'))}\n".encode()


def parse_message(message: bytes) -> SnapshotMeta | None:
    """The record in a commit message, or ``None`` (an older commit, or anything malformed)."""
    _, _, body = message.partition(b"\n\n")
    try:
        data = json.loads(body.decode("utf-8", "strict"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("v") != VERSION:
        return None

    def table(key: str) -> dict[str, int]:
        value = data.get(key)
        if not isinstance(value, dict):
            return {}
        return {k: v & 0o777 for k, v in value.items() if isinstance(k, str) and isinstance(v, int)}

    def names(key: str) -> list[str]:
        value = data.get(key)
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    return SnapshotMeta(table("modes"), table("dirs"), names("skipped"), names("absent"))


def read_meta(git: Git, commit: str) -> SnapshotMeta | None:
    """The record of snapshot ``commit`` (a checked object id)."""
    raw = git.run("cat-file", "commit", END, commit)
    _, _, message = raw.partition(b"\n\n")  # the headers end at the first blank line
    return parse_message(message)
