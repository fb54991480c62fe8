"""``--api-key-file PATH`` and ``--api-key -``: a key that never shows in the process list.

``--api-key KEY`` puts the key on the command line, where every user of the machine can read it
(``ps``, ``/proc/<pid>/cmdline``). Reading it from a file (``--api-key-file``) or from standard
input (``--api-key -``) keeps it out of there.
"""

from __future__ import annotations

import sys
from pathlib import Path

from baton.providers.redact import register_secret
from baton.tui.cli.args import EXIT_USAGE, CliArgs
from baton.tui.cli.errors import CliError

MAX_KEY_BYTES = 64 * 1024


def resolve_api_key_args(args: CliArgs) -> bool:
    """Replace ``--api-key -`` / ``--api-key-file`` with the key itself in ``args.api_key``;
    returns True when the key was read from standard input (which then holds no prompt).
    The key is redacted from every output from then on (:mod:`providers.redact`)."""
    from_stdin = _resolve(args)
    register_secret(args.api_key)
    return from_stdin


def _resolve(args: CliArgs) -> bool:
    if args.api_key_file is not None:
        if args.api_key is not None:
            raise CliError("use either --api-key or --api-key-file, not both", EXIT_USAGE)
        args.api_key = _read_key_file(Path(args.api_key_file).expanduser())
        return False
    if args.api_key == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise CliError("--api-key - reads the key from standard input: pipe it in", EXIT_USAGE)
        args.api_key = _clean(sys.stdin.read(MAX_KEY_BYTES), "standard input")
        return True
    return False


def _read_key_file(path: Path) -> str:
    try:
        if not path.is_file():
            raise CliError(f"--api-key-file {path}: not a regular file", EXIT_USAGE)
        with path.open("r", encoding="utf-8") as handle:
            text = handle.read(MAX_KEY_BYTES)
    except OSError as exc:
        raise CliError(f"--api-key-file {path}: {exc.strerror or exc}", EXIT_USAGE) from exc
    except UnicodeDecodeError as exc:
        raise CliError(f"--api-key-file {path}: not UTF-8 text", EXIT_USAGE) from exc
    return _clean(text, str(path))


def _clean(text: str, source: str) -> str:
    """The first non-empty line, stripped (a trailing newline is normal in a key file)."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    raise CliError(f"no API key found in {source}", EXIT_USAGE)
