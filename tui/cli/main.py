"""The ``baton`` command line entry point.

Only the interactive mode imports textual; ``--version``, ``--help``, print and JSON modes stay
light so that they start fast.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import NoReturn

try:  # Ctrl+C while the modules load: one line, no traceback (SIGTERM/SIGHUP: a clean exit)
    from baton.tui.cli.termination import install_early

    install_early()
    from baton.tui.cli.args import EXIT_OK, EXIT_RUN_FAILED, VERSION
except KeyboardInterrupt:
    sys.stderr.write("baton: interrupted\n")
    raise SystemExit(1) from None


def main(argv: list[str] | None = None) -> int:
    """Run baton with ``argv`` (default: the process arguments); returns the exit code."""
    install_early()
    args_list = sys.argv[1:] if argv is None else argv
    from baton.tui.cli import start_up_gc

    if start_up_gc.wants_hold(args_list):
        start_up_gc.hold()  # from here: the imports before the editor's first answers are most of them
    try:
        if args_list in (["--version"], ["-V"]):
            print(f"baton {VERSION}")
            return EXIT_OK
        from baton.tui.cli.launch import run

        return run(args_list)
    except KeyboardInterrupt:  # Ctrl+C while starting up, before a mode took it over
        print("baton: interrupted", file=sys.stderr)
        return EXIT_RUN_FAILED
    except BrokenPipeError:  # the reader stopped early (baton --list-models | head): not an error
        _discard_stdout()
        return EXIT_OK
    finally:
        start_up_gc.release()  # the server releases it once the first session is open; else here


def _discard_stdout() -> None:
    # What is still buffered for the closed pipe would fail again at exit; send it nowhere.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def entry() -> NoReturn:
    """The ``baton`` command: :func:`main`, then :func:`exit_now` with its exit code."""
    exit_now(main())


def exit_now(code: int) -> NoReturn:
    """End the process with ``code`` once the exit handlers ran and the output is flushed.

    Tearing the interpreter down module by module costs 0.1 s of CPU in print mode and 0.3 s
    with Textual loaded, all of it spent after the work is done (and felt as a slow quit). By
    the time :func:`main` returns, the session is closed, the event loop has waited for its
    worker threads and child processes have ended; what is left to run is the ``atexit``
    handlers, run here, and the buffered output, flushed here."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass  # a closed pipe (baton -p ... | head -1) or stream: nothing more can be written
    os._exit(code)


if __name__ == "__main__":
    entry()
