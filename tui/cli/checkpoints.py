"""``baton --checkpoints [SESSION]``: print a session's checkpoints as JSON and exit.

The list is the one ``/rewind`` shows and the RPC ``get_checkpoints`` command returns: each
prompt of the session's current branch (and each state saved before a rewind), newest first,
with its entry id, text, time, model, the snapshot commit a code rewind restores and the files
the agent changed after it.
"""

from __future__ import annotations

import json
from pathlib import Path

from baton.tui.cli.args import EXIT_OK, EXIT_USAGE, CliArgs
from baton.tui.cli.errors import CliError


def checkpoints_command(args: CliArgs) -> int:
    """Print ``{"session": path, "checkpoints": [...]}``; the most recent session of the
    current directory unless SESSION (a path or id prefix) is given."""
    from baton.sessions.checkpoints.records import list_checkpoints
    from baton.sessions.errors import SessionError
    from baton.sessions.listing import find_session, most_recent_session
    from baton.sessions.store import SessionStore

    cwd = Path.cwd()
    session_dir = Path(args.session_dir).expanduser() if args.session_dir else None
    try:
        if args.checkpoints:
            path = find_session(args.checkpoints, cwd, session_dir)
        else:
            found = most_recent_session(cwd, session_dir)
            if found is None:
                raise CliError(f"no session in {cwd} (name one: baton --checkpoints SESSION)", EXIT_USAGE)
            path = found
        store = SessionStore.load(path)
    except SessionError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    points = [p.to_json() for p in list_checkpoints(store)]
    print(json.dumps({"session": str(path), "checkpoints": points}, indent=2, ensure_ascii=False))
    return EXIT_OK
