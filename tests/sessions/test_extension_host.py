"""The session's extensions — permissions, checkpoints, hooks and MCP — see it only through
``SessionHost``: none of their modules names ``CodingSession`` (not even for type checking), and
none reaches into another object's private attributes (``session._emit``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SESSIONS = Path(__file__).resolve().parents[2] / "sessions"
EXTENSIONS = sorted(
    [*(SESSIONS / "permissions").glob("*.py"), *(SESSIONS / "checkpoints").glob("*.py"),
     *(SESSIONS / "hooks").glob("*.py"), SESSIONS / "extensions.py"]
)
FRONT_END_GLUE = {SESSIONS / "checkpoints" / "rpc.py"}
"""The RPC mode's checkpoint commands: a front end of the session's public API, not an extension."""


def _names(path: Path) -> tuple[set[str], set[str]]:
    """(modules imported, private attributes read on something other than ``self``/``cls``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported: set[str] = set()
    private: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner = node.value
            if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                private.add(f"{ast.unparse(owner)}.{node.attr}")
    return imported, private


@pytest.mark.parametrize("path", [p for p in EXTENSIONS if p not in FRONT_END_GLUE], ids=lambda p: p.name)
def test_an_extension_sees_the_session_only_through_its_host(path: Path) -> None:
    imported, private = _names(path)
    assert "baton.sessions.coding_session" not in imported
    assert not {name for name in private if name.split(".")[0] in ("session", "host")}, private
