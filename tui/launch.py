"""From parsed arguments to a running mode: model choice, prompt assembly, session, mode."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from baton.providers.errors import BatonError
from baton.providers.messages import ImageContent
from baton.tui.cli_args import EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE, CliArgs, parse_args
from baton.tui.cli_errors import CliError, exit_code, one_line
from baton.tui.prompt_input import build_prompt, read_piped_stdin

if TYPE_CHECKING:
    from baton.sessions import CodingSession


def run(argv: list[str]) -> int:
    """Parse ``argv`` and run the requested mode; returns the exit code."""
    args = parse_args(argv)
    try:
        if args.export:
            return _export(args)
        if args.list_models_requested:
            from baton.tui.list_models import list_models_command

            return list_models_command(args.list_models or "")
        piped = read_piped_stdin(have_prompt=bool(args.prompt_words or args.files))
        if piped is not None:
            args.print_mode = True
        text, images = build_prompt(args.files, args.prompt_words, piped, cwd=Path.cwd())
        if args.print_mode and not text.strip() and not images and not args.resume:
            raise CliError("print mode needs a prompt (arguments or piped stdin)", EXIT_USAGE)
        return asyncio.run(_run_session(args, text, images))
    except BatonError as err:
        print(one_line(err), file=sys.stderr)
        return exit_code(err)
    except KeyboardInterrupt:
        return EXIT_RUN_FAILED


async def _run_session(args: CliArgs, text: str, images: list[ImageContent]) -> int:
    from baton.tui.session_setup import open_session

    session = await open_session(args)
    try:
        if args.print_mode:
            _print_warnings(session)
            if args.mode == "json":
                from baton.tui.json_mode import run_json_mode

                return await run_json_mode(session, text, images)
            from baton.tui.print_mode import run_print_mode

            return await run_print_mode(session, text, images)
        from baton.tui.app import run_interactive_async

        return await run_interactive_async(
            session, initial_prompt=text or None, initial_images=images or None
        )
    finally:
        await session.close()
        if "baton.providers.transport" in sys.modules:
            from baton.providers.transport import aclose_shared_client

            await aclose_shared_client()


def _print_warnings(session: CodingSession) -> None:
    """Problems found while opening (bad settings, skipped session lines, models.json errors)."""
    from baton.providers.catalog import models_json_errors

    for warning in [*session.warnings, *(f"models.json: {e}" for e in models_json_errors())]:
        print(f"baton: warning: {warning}", file=sys.stderr)


def _export(args: CliArgs) -> int:
    """``baton --export SESSION [OUT]``: the format follows OUT's extension (``.md`` ->
    Markdown, else HTML); without OUT (or with a directory) the file is
    ``baton-session-<session file name>.html`` in the current directory (or that directory)."""
    from baton.sessions.errors import SessionError
    from baton.sessions.export import default_export_path, export_session, normalize_format
    from baton.sessions.listing import find_session
    from baton.sessions.store import SessionStore

    try:
        source = find_session(args.export[0], Path.cwd())
        out: Path | None = Path(args.export[1]).expanduser() if len(args.export) > 1 else None
        if out is not None and (out.is_dir() or args.export[1].endswith(("/", os.sep))):
            out = default_export_path(SessionStore.load(source), normalize_format(None, None), out)
        written = export_session(source, out)
    except SessionError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    except OSError as exc:
        raise CliError(f"cannot export {args.export[0]}: {exc.strerror or exc}", EXIT_RUN_FAILED) from exc
    print(written)
    return EXIT_OK
