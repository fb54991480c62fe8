"""The ``baton`` command line entry point.

Only the interactive mode imports textual; ``--version``, ``--help``, print and JSON modes stay
light so that they start fast.
"""

from __future__ import annotations

import sys

from baton.tui.termination import install_early

install_early()  # before anything slow: a signal during start-up exits cleanly

from baton.tui.cli_args import EXIT_OK, EXIT_RUN_FAILED, VERSION  # noqa: E402


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
