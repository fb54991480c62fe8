"""What checkpoints report: files changed between snapshots, one snapshot, one restore."""

from __future__ import annotations

from dataclasses import dataclass, field

from baton.providers.json_types import JsonObject


@dataclass
class Changes:
    """Files that differ between two snapshots (workspace-relative paths, sorted)."""

    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    @property
    def files(self) -> list[str]:
        """Every changed path, sorted."""
        return sorted({*self.added, *self.modified, *self.deleted})

    def __bool__(self) -> bool:
        return bool(self.added or self.modified or self.deleted)

    def summary(self) -> str:
        """``+3 ~5 -1`` (empty when nothing changed)."""
        parts = [f"{sign}{len(items)}" for sign, items in (("+", self.added), ("~", self.modified), ("-", self.deleted))
                 if items]
        return " ".join(parts)

    def to_json(self) -> JsonObject:
        """``{"added": [...], "modified": [...], "deleted": [...]}``."""
        return {"added": list(self.added), "modified": list(self.modified), "deleted": list(self.deleted)}

    @classmethod
    def from_json(cls, data: object) -> Changes:
        """Read what :meth:`to_json` wrote (anything malformed reads as no changes)."""
        if not isinstance(data, dict):
            return cls()

        def strings(key: str) -> list[str]:
            value = data.get(key)
            return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

        return cls(strings("added"), strings("modified"), strings("deleted"))

    def merged(self, later: Changes) -> Changes:
        """These changes followed by ``later`` (a file added then deleted disappears)."""
        state: dict[str, str] = {}
        for kind, items in (("a", self.added), ("m", self.modified), ("d", self.deleted)):
            for path in items:
                state[path] = kind
        for kind, items in (("a", later.added), ("m", later.modified), ("d", later.deleted)):
            for path in items:
                before = state.get(path)
                if before == "a" and kind == "d":
                    del state[path]
                elif before == "a":
                    continue
                elif before == "d" and kind == "a":
                    state[path] = "m"
                else:
                    state[path] = kind
        return Changes(
            sorted(p for p, k in state.items() if k == "a"),
            sorted(p for p, k in state.items() if k == "m"),
            sorted(p for p, k in state.items() if k == "d"),
        )


@dataclass
class Snapshot:
    """One snapshot: its commit, what changed since ``previous`` and the files left out."""

    commit: str
    changes: Changes
    skipped: list[str] = field(default_factory=list)
    """Files over the size limit (not in the snapshot, never touched by a restore)."""


@dataclass
class RestoreOutcome:
    """What a restore did."""

    restored: list[str] = field(default_factory=list)
    """Files written back (changed or deleted since the checkpoint)."""
    removed: list[str] = field(default_factory=list)
    """Files created after the checkpoint, deleted."""
    kept: list[str] = field(default_factory=list)
    """Files left as they are: the checkpoint had them but they are ignored or too large now, or
    they are not in the checkpoint but may have existed then (ignored by its rules, too large)."""
