"""``python -m baton``: the same as the ``baton`` command."""

from baton.tui.cli import entry

entry()
