"""The ``baton`` command line entry point.

Only the interactive mode imports textual; ``--version``, ``--help``, print and JSON modes stay
light so that they start fast.
"""

from __future__ import annotations

import sys

try:  # Ctrl+C while the modules load: one line, no traceback (SIGTERM/SIGHUP: a clean exit)
    from baton.tui.termination import install_early

    install_early()
    from baton.tui.cli_args import EXIT_OK, EXIT_RUN_FAILED, VERSION
except KeyboardInterrupt:
    sys.stderr.write("baton: interrupted\n")
    raise SystemExit(1) from None


def main(argv: list[str] | None = None) -> int:
    """Run baton with ``argv`` (default: the process arguments); returns the exit code."""
    install_early()
    try:
        args_list = sys.argv[1:] if argv is None else argv
        if args_list in (["--version"], ["-V"]):
            print(f"baton {VERSION}")
            return EXIT_OK
        from baton.tui.launch import run

        return run(args_list)
    except KeyboardInterrupt:  # Ctrl+C while starting up, before a mode took it over
        print("baton: interrupted", file=sys.stderr)
        return EXIT_RUN_FAILED


if __name__ == "__main__":
    raise SystemExit(main())
