"""What the fast paths load: the first frame is painted before pydantic, textual or httpx load,
and opening a session (ACP's ``session/new``, the app's start) loads no HTTP client before a
request needs one. Each runs in a fresh interpreter, as the program starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FIRST_FRAME = """
import sys
from baton.tui.cli.launch import _display_setting
from baton.tui.cli.args import parse_args
from baton.tui.cli.early_status import early_status
import baton.tui.app.instant_frame
_display_setting()
early_status(parse_args([]))
early_status(parse_args(["--model", "demo/baton-demo", "--approval", "ask"]))
print(sorted(m for m in ("pydantic", "textual", "httpx") if m in sys.modules))
"""

SESSION = """
import sys
import baton.sessions.coding_session, baton.sessions.opening, baton.tui.modes.acp.server
print("httpx" in sys.modules)
"""


def _run(script: str, home: Path) -> str:
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            env={"BATON_HOME": str(home), "HOME": str(home), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_first_frame_is_worked_out_without_the_heavy_libraries(home: Path) -> None:
    assert _run(FIRST_FRAME, home) == "[]"


def test_opening_a_session_loads_no_http_client(home: Path) -> None:
    assert _run(SESSION, home) == "False"


A_TURN_WITH_A_TOOL = """
import atexit, sys
WATCH = ("importlib.metadata", "zipfile", "csv", "baton.tools.mcp.connection", "baton.tools.mcp.tool", "pydantic")
atexit.register(lambda: print(sorted(m for m in WATCH if m in sys.modules)))
sys.argv = ["baton", "-p", "--model", "demo/baton-demo", "list the files here"]
from baton.tui.cli.main import entry
entry()
"""


def test_a_turn_loads_no_package_metadata_reader_and_no_mcp_client(home: Path, tmp_path: Path) -> None:
    """pydantic's plugin lookup (``importlib.metadata``, ``zipfile``, ``csv``: ~0.8 MB) stays out
    of a whole turn of the real program, validation included: baton runs no pydantic plugin. So
    does the MCP client (~0.6 MB) when no server is configured."""
    work = tmp_path / "work"
    work.mkdir()
    result = subprocess.run([sys.executable, "-c", A_TURN_WITH_A_TOOL], capture_output=True, text=True,
                            timeout=120, cwd=work,
                            env={"BATON_HOME": str(home), "HOME": str(home), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert "real tool call" in result.stdout, result.stdout
    assert result.stdout.strip().splitlines()[-1] == "['pydantic']"
