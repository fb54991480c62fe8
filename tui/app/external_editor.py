"""Ctrl+G: write the prompt in ``$VISUAL`` / ``$EDITOR`` (``vi`` without either).

The app suspends (the editor gets the terminal), the prompt goes to a private temporary file,
and what the editor saved comes back into the prompt editor; the file is removed either way.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from baton.tui.app.render import one_line

if TYPE_CHECKING:
    from baton.tui.app.baton_app import BatonApp


def edit_prompt_externally(app: BatonApp) -> None:
    """Edit the prompt in the user's editor (see the module docstring)."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    fd, name = tempfile.mkstemp(prefix="baton-prompt-", suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(app.editor.text)
        failure, returncode = _run_suspended(app, editor, path)
        if failure is not None:
            reason = one_line(str(failure) or type(failure).__name__, 200)
            app.notice(f"Cannot open $EDITOR ({one_line(editor, 60)}): {reason}", "warning")
            return
        if returncode != 0:
            app.notice(f"The editor exited with status {returncode}; the prompt is unchanged.", "warning")
            return
        app.editor.set_text(path.read_text(encoding="utf-8", errors="replace").rstrip("\n"))
    finally:
        path.unlink(missing_ok=True)


def _run_suspended(app: BatonApp, editor: str, path: Path) -> tuple[Exception | None, int]:
    """Run ``editor`` on ``path`` with the app suspended: (why it could not run, or None; its
    exit status)."""
    failure: Exception | None = None
    returncode = 0
    try:
        with app.suspend():
            # Nothing may escape this block: Textual only resumes the app when it ends
            # normally (an editor that cannot start would leave a dead, blank screen).
            try:
                returncode = subprocess.run([*shlex.split(editor), str(path)], check=False).returncode
            except (OSError, ValueError, subprocess.SubprocessError) as exc:
                failure = exc
    except Exception as exc:  # SuspendNotSupported and the like
        failure = exc
    return failure, returncode
