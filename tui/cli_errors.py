"""The one exception the CLI turns into a one-line message and an exit code."""

from __future__ import annotations

from baton.tui.cli_args import EXIT_USAGE


class CliError(Exception):
    """A failure to report as ``baton: <message>`` with exit code ``code``."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code
