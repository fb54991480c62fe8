"""In-memory migration of pi's older session formats to v3.

- v1 → v2: entries had no ``id``/``parentId``; they get short ids chained in file order, and a
  compaction's ``firstKeptEntryIndex`` (an index into the file's lines, header included) becomes
  ``firstKeptEntryId``.
- v2 → v3: the ``hookMessage`` message role was renamed ``custom``.
"""

from __future__ import annotations

from baton.providers.json_types import JsonMapping, JsonObject
from baton.sessions.entries import CURRENT_VERSION, new_entry_id


def file_version(header: JsonMapping) -> int:
    """The format version a header declares (pi v1 headers have none)."""
    version = header.get("version")
    return version if isinstance(version, int) else 1


def migrate(lines: list[JsonObject]) -> int:
    """Bring ``lines`` (header first, then entries, as parsed JSON) to v3 in place.

    Returns the version the lines were in (``CURRENT_VERSION`` when nothing changed)."""
    header = lines[0]
    version = file_version(header)
    if version >= CURRENT_VERSION:
        return version
    if version < 2:
        _v1_to_v2(lines)
    if version < 3:
        _v2_to_v3(lines)
    header["version"] = CURRENT_VERSION
    return version


def _v1_to_v2(lines: list[JsonObject]) -> None:
    taken: set[str] = set()
    previous: str | None = None
    for line in lines[1:]:
        entry_id = line.get("id")
        if not isinstance(entry_id, str) or entry_id in taken:
            entry_id = new_entry_id(taken)
        taken.add(entry_id)
        line["id"] = entry_id
        line["parentId"] = previous
        previous = entry_id
    for line in lines[1:]:
        if line.get("type") != "compaction":
            continue
        index = line.pop("firstKeptEntryIndex", None)
        if isinstance(index, int) and 0 < index < len(lines) and "firstKeptEntryId" not in line:
            line["firstKeptEntryId"] = lines[index]["id"]


def _v2_to_v3(lines: list[JsonObject]) -> None:
    for line in lines[1:]:
        message = line.get("message")
        if line.get("type") == "message" and isinstance(message, dict) and message.get("role") == "hookMessage":
            message["role"] = "custom"
