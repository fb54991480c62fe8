"""How the CLI reports a failure: one line, ``baton: <message>``, and an exit code.

Every :class:`~baton.providers.errors.BatonError` that reaches the CLI is reported this way
(the tree is documented in ``providers/errors.py``); :class:`CliError` is the CLI's own branch.
"""

from __future__ import annotations

from baton.providers.errors import BatonError, ConfigurationError
from baton.providers.redact import redact
from baton.tui.cli.args import EXIT_RUN_FAILED, EXIT_USAGE


class CliError(BatonError):
    """A failure to report as ``baton: <message>`` with exit code ``code``."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


def exit_code(error: BatonError) -> int:
    """The exit code for ``error``: its own for a :class:`CliError`, else usage or run failure."""
    if isinstance(error, CliError):
        return error.code
    return EXIT_USAGE if isinstance(error, ConfigurationError) else EXIT_RUN_FAILED


def one_line(error: BatonError) -> str:
    """The message printed for ``error``: the CLI's own as written, any other folded onto one line."""
    text = str(error) if isinstance(error, CliError) else " ".join(str(error).split())
    return redact(f"baton: {text or type(error).__name__}")
