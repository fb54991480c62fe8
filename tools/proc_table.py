"""The process table as Linux's ``/proc`` shows it: one small reader for the tools that need to
know which processes exist, who their parents and groups are, and what state they are in."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ProcessRow:
    """One process: pid, parent, process group, state letter (``R``, ``S``, ``T``, ``Z``...) and name."""

    pid: int
    ppid: int
    pgid: int
    state: bytes
    name: str


def process_table() -> list[ProcessRow] | None:
    """Every process readable in ``/proc`` (``None`` where there is no ``/proc``)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    rows: list[ProcessRow] = []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        # The command name is in parentheses and may itself hold ")" or spaces.
        open_paren, close_paren = data.find(b"("), data.rfind(b")")
        fields = data[close_paren + 2 :].split()
        if len(fields) > 2:
            name = data[open_paren + 1 : close_paren].decode("utf-8", "replace")
            rows.append(ProcessRow(int(entry), int(fields[1]), int(fields[2]), fields[0], name))
    return rows
