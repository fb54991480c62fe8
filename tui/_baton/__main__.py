"""``python -m baton``: the same as the ``baton`` command."""

from baton.tui.cli.main import entry

entry()
