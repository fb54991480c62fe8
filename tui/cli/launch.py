"""From parsed arguments to a running mode: model choice, prompt assembly, session, mode."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from baton.providers.errors import BatonError
from baton.tui.cli.args import EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE, VERSION, CliArgs, parse_args
from baton.tui.cli.errors import CliError, exit_code, one_line

if TYPE_CHECKING:
    from baton.providers.messages import ImageContent
    from baton.sessions import CodingSession
    from baton.tui.app.instant_frame import InstantFrame
    from baton.tui.app.widgets.session_picker import SessionPicker


def run(argv: list[str]) -> int:
    """Parse ``argv`` and run the requested mode; returns the exit code."""
    from baton.tui.cli.output_redaction import install as redact_outputs

    redact_outputs()  # tracebacks and last-resort log records: no keys
    args = parse_args(argv)
    if args.mode != "acp":
        from baton.tui.cli.start_up_gc import release

        release()  # the command line only looked like ACP mode (an argument's value, say)
    frame: InstantFrame | None = None
    try:
        from baton.tui.cli.api_key_input import resolve_api_key_args

        key_from_stdin = resolve_api_key_args(args)
        code = _run_without_session(args)
        if code is not None:
            return code
        text, images = _prompt(args, key_from_stdin)
        frame = _instant_frame(args)
        return asyncio.run(_run_session(args, text, images, frame))
    except BatonError as err:
        _close_frame(frame)
        print(one_line(err), file=sys.stderr)
        return exit_code(err)
    except KeyboardInterrupt:
        frame = frame or _started_frame()  # interrupted as the frame started
        _close_frame(frame)
        print("baton: interrupted", file=sys.stderr)
        return EXIT_RUN_FAILED
    finally:
        _close_frame(frame or _started_frame())
        _cleanup_processes()


def _run_without_session(args: CliArgs) -> int | None:
    """The commands that run and exit (export, listings) and the protocol modes (which open
    their sessions themselves); ``None`` for the modes that take a prompt."""
    if args.export:
        return _export(args)
    if args.checkpoints is not None:
        from baton.tui.cli.checkpoints import checkpoints_command

        return checkpoints_command(args)
    if args.update_models:
        from baton.tui.cli.list_models import update_models_command

        return update_models_command()
    if args.list_models_requested:
        from baton.tui.cli.list_models import list_models_command

        return list_models_command(args.list_models or "")
    if args.list_mcp:
        return asyncio.run(_list_mcp(args))
    if args.mode in ("rpc", "acp"):
        return asyncio.run(_run_protocol(args))  # stdin is the protocol, never a prompt
    return None


def _prompt(args: CliArgs, key_from_stdin: bool) -> tuple[str, list[ImageContent]]:
    """The prompt from the arguments, the files named and piped stdin (which means print mode)."""
    from baton.tui.cli.prompt_input import build_prompt, read_piped_stdin  # not for the protocol modes

    piped = None if key_from_stdin else read_piped_stdin(have_prompt=bool(args.prompt_words or args.files))
    if piped is not None:
        args.print_mode = True
    text, images = build_prompt(args.files, args.prompt_words, piped, cwd=Path.cwd())
    if args.print_mode and not text.strip() and not images and not args.resume:
        raise CliError("print mode needs a prompt (arguments or piped stdin)", EXIT_USAGE)
    return text, images


def _instant_frame(args: CliArgs) -> InstantFrame | None:
    """The first frame of the app, painted before Textual loads (the app takes it over)."""
    if args.print_mode or args.resume or args.inline or _display_setting() == "inline":
        return None
    from baton.tui.app.instant_frame import InstantFrame
    from baton.tui.cli.early_status import early_status

    try:
        status = early_status(args)
    except Exception:  # the footer's guess must never stop the first frame
        status = None
    return InstantFrame.start(f"{VERSION} · a terminal coding agent", status)


def _started_frame() -> InstantFrame | None:
    """The instant frame painted, should :func:`_instant_frame` not have returned it."""
    module = sys.modules.get("baton.tui.app.instant_frame")
    started: InstantFrame | None = None if module is None else module.InstantFrame.started
    return started


def _close_frame(frame: InstantFrame | None) -> None:
    """Give the terminal back when start-up ends before the app took the instant frame over."""
    if frame is not None:
        frame.close()


def _cleanup_processes() -> None:
    """End every process baton started and remove this session's temporary files."""
    if "baton.tools.processes" in sys.modules:
        from baton.tools.processes import kill_all

        kill_all()
    if "baton.tools.temp_files" in sys.modules:
        from baton.tools.temp_files import remove_own_files

        remove_own_files()


async def _run_session(args: CliArgs, text: str, images: list[ImageContent], frame: InstantFrame | None = None) -> int:
    from baton.tools.processes import become_subreaper, keep_memory_private
    from baton.tools.temp_files import remove_stale_files

    keep_memory_private()  # before any command runs: none may read the keys from /proc
    become_subreaper()
    remove_stale_files()
    if not args.print_mode:
        return await _run_interactive(args, text, images, frame)
    from baton.sessions.errors import PromptRefusedError
    from baton.tui.cli.session_setup import open_session
    from baton.tui.cli.termination import TerminationGuard

    session = await open_session(args)
    guard = TerminationGuard(session.abort)
    guard.install()
    try:
        return guard.finish(await _run_print_modes(args, session, text, images))
    except PromptRefusedError as exc:
        print(f"baton: {exc}", file=sys.stderr)
        return guard.finish(EXIT_RUN_FAILED)
    except OSError:
        if guard.exit_code is None:
            raise  # after SIGHUP the terminal is gone: writing to it may fail
        return guard.finish(EXIT_RUN_FAILED)
    finally:
        await session.close()
        await _close_transport()
        guard.uninstall()


async def _run_print_modes(args: CliArgs, session: CodingSession, text: str, images: list[ImageContent]) -> int:
    """Print or JSON mode on an open session; the exit code."""
    _print_warnings(session)
    if args.mode == "json":
        from baton.tui.modes.json_mode import run_json_mode

        return await run_json_mode(session, text, images)
    from baton.tui.modes.print_mode import run_print_mode

    return await run_print_mode(session, text, images)


async def _run_interactive(args: CliArgs, text: str, images: list[ImageContent],
                           frame: InstantFrame | None = None) -> int:
    """The app paints and takes keys first; the session opens behind it (see tui/app/baton_app.py)."""
    from baton.tui.app.baton_app import SessionOpenError, run_interactive_async
    from baton.tui.app.exit_summary import exit_summary

    opened: list[CodingSession] = []

    async def opener(picked: Path | None) -> CodingSession:
        from baton.tui.cli.session_setup import open_session

        if picked is not None:
            args.session, args.resume = str(picked), False
        session = await open_session(args)
        opened.append(session)
        return session

    pick = None
    if args.resume:
        if not sys.stdin.isatty():
            raise CliError("--resume needs a terminal to pick from; use --session ID or --continue", EXIT_USAGE)
        pick = _session_picker_factory(args)

    inline = args.inline or _display_setting() == "inline"
    from baton.tui.cli.termination import TerminationGuard

    def abort_all() -> None:
        for session in opened:
            session.abort()

    guard = TerminationGuard(abort_all)
    guard.install()
    started = time.monotonic()
    try:
        code = await run_interactive_async(
            initial_prompt=text or None, initial_images=images or None, inline=inline, opener=opener,
            pick_session=pick, instant_frame=frame,
        )
    except SessionOpenError as exc:
        if isinstance(exc.original, CliError):
            raise exc.original from None
        raise
    finally:
        for session in opened:
            await session.close()
        await _close_transport()
        guard.uninstall()
    if guard.signum is not None:
        return guard.finish(code)
    if opened:
        session = opened[0]
        summary = exit_summary(session, session_file=session.session_file, session_id=session.session_id,
                               duration=time.monotonic() - started)
        if summary:
            print(summary, flush=True)
    return code


def _session_picker_factory(args: CliArgs) -> Callable[[], SessionPicker]:
    """What ``baton -r`` shows first: the session picker over this directory (Tab: all)."""

    def make() -> SessionPicker:
        from baton.sessions.listing import list_all_sessions, list_sessions
        from baton.tui.app.widgets.session_picker import SessionPicker

        session_dir = Path(args.session_dir).expanduser() if args.session_dir else None
        return SessionPicker(lambda: list_sessions(Path.cwd(), session_dir), list_all_sessions)

    return make


def _display_setting() -> str:
    """The ``display`` setting, read without the settings model (it decides the very first
    frame; the session validates the files properly later). Project over global."""
    from baton.providers.bounded_read import MAX_CONFIG_BYTES, read_regular
    from baton.providers.json_depth import load_config_json
    from baton.providers.paths import baton_home

    value = "fullscreen"
    for path in (baton_home() / "settings.json", Path.cwd() / ".baton" / "settings.json"):
        try:  # a regular file of at most 1 MB: a FIFO or /dev/zero must not stop the first frame
            data = load_config_json(read_regular(path, MAX_CONFIG_BYTES).decode("utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("display") in ("fullscreen", "inline"):
            value = data["display"]
    return value


async def _close_transport() -> None:
    if "baton.providers.transport" in sys.modules:
        from baton.providers.transport import aclose_shared_client

        await aclose_shared_client()


async def _run_protocol(args: CliArgs) -> int:
    """``--mode rpc`` (one session, opened now) or ``--mode acp`` (sessions opened on request)."""
    from baton.tools.processes import keep_memory_private

    keep_memory_private()
    try:
        if args.mode == "acp":
            from baton.tui.modes.acp.server import run_acp_mode

            return await run_acp_mode(args)
        from baton.tui.cli.session_setup import open_session
        from baton.tui.cli.termination import TerminationGuard

        args.print_mode = True  # set up as for scripts: no demo model unless named, keys checked
        session = await open_session(args)
        guard = TerminationGuard(session.abort)
        guard.install()
        try:
            _print_warnings(session)
            from baton.tui.modes.rpc_mode import run_rpc_mode

            return guard.finish(await run_rpc_mode(session))
        finally:
            guard.uninstall()
            await session.close()
    finally:
        if "baton.providers.transport" in sys.modules:
            from baton.providers.transport import aclose_shared_client

            await aclose_shared_client()


def _print_warnings(session: CodingSession) -> None:
    """Problems found while opening (bad settings, skipped session lines, models.json errors)."""
    from baton.providers.catalog import models_json_errors

    for warning in [*session.warnings, *(f"models.json: {e}" for e in models_json_errors())]:
        print(f"baton: warning: {warning}", file=sys.stderr)
    from baton.tui.modes.session_features import ignored_project_notice

    ignored = ignored_project_notice(session)
    if ignored is not None:
        print(f"baton: {ignored['text']}", file=sys.stderr)
    session.subscribe(_print_extension_notice)


def _print_extension_notice(event: object) -> None:
    """Hook and MCP problems during a print/JSON run: one stderr line each."""
    if getattr(event, "type", None) != "extension_notice":  # every event passes: no import per event
        return
    from baton.sessions.events import ExtensionNoticeEvent

    if isinstance(event, ExtensionNoticeEvent):
        print(f"baton: {event.source}: {event.text}", file=sys.stderr)


async def _list_mcp(args: CliArgs) -> int:
    """``baton --list-mcp``: start the configured servers, print each one's state and tools."""
    from baton.sessions import SessionOptions, load_settings
    from baton.sessions.extensions import SessionExtensions
    from baton.tools.mcp.listing import status_lines
    from baton.tui.cli.session_setup import mcp_config_files

    cwd = Path.cwd()
    settings = load_settings(project_dir=cwd, trust_project=True if args.trust_project else None)
    options = SessionOptions(cwd=cwd, mcp=not args.no_mcp, mcp_config_files=mcp_config_files(args))
    extensions = SessionExtensions.create(cwd, settings, options=options)
    for problem in extensions.problems:
        print(f"baton: warning: {problem}", file=sys.stderr)
    manager = extensions.mcp
    try:
        await manager.wait_startup()
        for line in status_lines(manager.statuses(), with_tools=True):
            print(line)
        pending = extensions.pending_trust
        if pending is not None:
            changed = f" ({pending.changed_text()})" if pending.changed else ""
            print(f"Not trusted (skipped): {pending.describe()}{changed} — pass --trust-project to include them")
    finally:
        await manager.close()
    return EXIT_OK


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
