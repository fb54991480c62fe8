"""Choosing the model and opening the :class:`CodingSession` the modes drive."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from baton.tui.cli.args import EXIT_RUN_FAILED, EXIT_USAGE, THINKING_CHOICES, CliArgs
from baton.tui.cli.errors import CliError

if TYPE_CHECKING:
    from baton.providers.models import Model, ThinkingLevel
    from baton.sessions import CodingSession, Settings

# Preferred default per provider, in the order providers are tried when no model is configured.
DEFAULT_MODELS: tuple[str, ...] = (
    "anthropic/claude-sonnet-5",
    "openai/gpt-5.6",
    "google/gemini-3.1-pro-preview",
    "openrouter/anthropic/claude-sonnet-5",
    "xai/grok-4.7",
    "groq/openai/gpt-oss-120b",
    "mistral/mistral-large-latest",
    "deepseek/deepseek-v4-pro",
    "cerebras/gpt-oss-120b",
)


def split_thinking_suffix(ref: str) -> tuple[str, ThinkingLevel | None]:
    """``provider/id:level`` -> (``provider/id``, level); other colons stay in the id."""
    base, sep, suffix = ref.rpartition(":")
    if sep and suffix in THINKING_CHOICES:
        return base, suffix  # type: ignore[return-value]
    return ref, None


def ensure_api_key(model: Model, api_key: str | None) -> None:
    """Fail with a one-line error naming the env var when ``model`` has no usable key."""
    from baton.providers.api_keys import env_var_for, has_api_key

    if api_key or model.provider == "demo" or model.is_local or has_api_key(model.provider):
        return
    raise CliError(
        f"no API key for {model.provider}: set {env_var_for(model.provider)} "
        f"(or pass --api-key, or configure it in models.json){_key_command_failure(model.provider)}",
        EXIT_USAGE,
    )


def _key_command_failure(provider: str) -> str:
    """``; models.json: providers.X.apiKey: command ... failed`` when a ``!command`` key failed."""
    from baton.providers.config_values import command_errors

    mark = f"providers.{provider}.apiKey"
    failures = [error for error in command_errors if mark in error]
    return f"; {failures[-1]}" if failures else ""


def lookup_model(ref: str) -> Model:
    """The catalog model for ``ref`` (the demo model included), or a one-line CLI error."""
    from baton.providers.catalog import ModelNotFoundError, get_model
    from baton.providers.demo import DEMO_MODEL_REF, demo_model

    if ref in (DEMO_MODEL_REF, "baton-demo"):
        return demo_model()
    try:
        model = get_model(ref)
    except ModelNotFoundError as exc:
        local = _ollama_model(ref)
        if local is not None:
            return local
        raise CliError(_with_models_json_errors(str(exc)), EXIT_USAGE) from exc
    if model.inferred_from is not None:  # a running Ollama knows its own models better than a guess
        return _ollama_model(ref) or model
    return model


def _ollama_model(ref: str) -> Model | None:
    if not ref.startswith("ollama/"):
        return None
    from baton.providers.ollama import discover_ollama_models

    name = ref.split("/", 1)[1]
    for model in discover_ollama_models():
        if model.id in (name, f"{name}:latest"):
            return model
    return None


def note_inferred_model(model: Model | None, settings: Settings) -> None:
    """Say once (with the settings' other warnings) that ``model`` is not in the catalog."""
    from baton.providers.catalog import inference_notice

    notice = inference_notice(model) if model is not None else None
    if notice and notice not in settings.problems:
        settings.problems.append(notice)


def _with_models_json_errors(message: str) -> str:
    """``message`` plus what is wrong in models.json (the model may be defined there)."""
    from baton.providers.catalog import models_json_errors

    errors = models_json_errors()
    if not errors:
        return message
    return f"{message}; models.json has problems (a model defined there may be missing): " + "; ".join(errors)


def default_model(settings: Settings, api_key: str | None, *, allow_demo: bool = True) -> Model:
    """The model to use when none is given: settings, then the first provider with a key,
    then a locally configured model, then the offline demo model (only with ``allow_demo``:
    print and JSON modes never answer with the demo unless it is named)."""
    from baton.providers.api_keys import has_api_key
    from baton.providers.catalog import list_models
    from baton.providers.demo import demo_model

    if settings.default_model:
        try:
            model = lookup_model(settings.default_model)
        except CliError as exc:  # a bad setting is reported and skipped, as settings.json's others are
            source = settings.path or "settings.json"
            settings.problems.append(f"{source}: defaultModel: {exc}; choosing another model")
        else:
            ensure_api_key(model, api_key)
            return model
    for ref in DEFAULT_MODELS:
        provider = ref.split("/", 1)[0]
        if has_api_key(provider):
            try:
                return lookup_model(ref)
            except CliError:
                continue
    for model in list_models():
        if model.provider != "demo" and (has_api_key(model.provider) or model.is_local):
            return model
    if not allow_demo:
        for problem in settings.problems:  # e.g. the defaultModel that was skipped
            print(f"baton: warning: {problem}", file=sys.stderr)
        raise no_model_error()
    return demo_model()


def no_model_error() -> CliError:
    """Print/JSON mode with no usable model: name the variables to set (exit code 2)."""
    from baton.providers.api_keys import env_var_for
    from baton.providers.config_values import command_errors

    names = ", ".join(env_var_for(ref.split("/", 1)[0]) for ref in DEFAULT_MODELS[:4])
    failures = "".join(f"; {error}" for error in command_errors)  # a failing apiKey "!command"
    return CliError(
        f"no model with an API key: set {names} (or another provider's key), pass --model "
        f"PROVIDER/ID, or --model demo/baton-demo for the offline demo{failures}",
        EXIT_USAGE,
    )


def resolve_model(args: CliArgs, settings: Settings) -> tuple[Model | None, ThinkingLevel | None]:
    """The model and thinking level the command line asks for (``None``: let a resumed
    session keep its own model)."""
    level: ThinkingLevel | None = args.thinking  # type: ignore[assignment]
    if args.model:
        ref, suffix_level = split_thinking_suffix(args.model)
        if args.provider and "/" not in ref:
            ref = f"{args.provider}/{ref}"
        model = lookup_model(ref)
        ensure_api_key(model, args.api_key)
        return model, suffix_level or level
    if args.provider:
        from baton.providers.catalog import list_models

        candidates = [m for m in list_models() if m.provider == args.provider]
        preferred = [ref for ref in DEFAULT_MODELS if ref.startswith(args.provider + "/")]
        if preferred:
            model = lookup_model(preferred[0])
        elif candidates:
            model = candidates[0]
        else:
            raise CliError(f"unknown provider '{args.provider}' (see baton --list-models)")
        ensure_api_key(model, args.api_key)
        return model, level
    if args.continue_session or args.resume or args.session:
        return None, level
    return default_model(settings, args.api_key, allow_demo=not args.print_mode), level


def session_mode(args: CliArgs, cwd: Path) -> str:
    """The ``SessionOptions.session`` value for the flags given."""
    if args.no_session:
        return "none"
    if args.continue_session:
        return "continue"
    if args.session:
        return args.session
    if args.resume:
        return str(pick_session(cwd, args))
    return "new"


def pick_session(cwd: Path, args: CliArgs) -> Path:
    """Ask on the terminal which session of this directory to resume."""
    from baton.sessions import list_sessions

    session_dir = Path(args.session_dir).expanduser() if args.session_dir else None
    infos = list_sessions(cwd, session_dir)
    if not infos:
        raise CliError("no sessions to resume in this directory", EXIT_USAGE)
    if not sys.stdin.isatty():
        raise CliError("--resume needs a terminal to pick from; use --session ID or --continue")
    shown = infos[:20]
    for i, info in enumerate(shown, 1):
        title = info.name or (info.first_message or "").replace("\n", " ")[:70]
        print(f"{i:>3}. {info.modified:%Y-%m-%d %H:%M}  {info.message_count:>4} msgs  {title}", file=sys.stderr)
    answer = input("Resume which session? [1] ").strip() or "1"
    if not answer.isdigit() or not 1 <= int(answer) <= len(shown):
        raise CliError(f"no session numbered {answer!r}")
    return Path(shown[int(answer) - 1].path)


def mcp_config_files(args: CliArgs) -> list[Path]:
    """The ``--mcp-config`` files, each checked to exist (else a usage error)."""
    files = [Path(name).expanduser() for name in args.mcp_config]
    for path in files:
        if not path.is_file():
            raise CliError(f"--mcp-config: no such file: {path}", EXIT_USAGE)
    return files


async def open_session(args: CliArgs) -> CodingSession:
    """Open the coding session the arguments describe, or raise :class:`CliError`."""
    from dataclasses import replace

    from baton.sessions import (
        CodingSession,
        NoModelError,
        SessionFileError,
        SessionLockedError,
        SessionNotFoundError,
        SessionOptions,
        load_settings,
    )

    cwd = Path.cwd()
    settings = load_settings(project_dir=cwd, trust_project=True if args.trust_project else None)
    model, level = resolve_model(args, settings)
    note_inferred_model(model, settings)
    extra_models: list[Model] = []
    if not args.print_mode:
        from baton.providers.ollama import discover_ollama_models

        # A local Ollama server's models are offered by /model and Ctrl+L (quick: a refused
        # connection answers at once).
        extra_models = await asyncio.to_thread(discover_ollama_models)
    tools: list[str] | None = None
    if args.no_tools:
        tools = []
    elif args.tools:
        tools = [name.strip() for name in args.tools.split(",") if name.strip()]
    options = SessionOptions(
        cwd=cwd,
        model=model,
        thinking=level,
        tools=tools,
        session=session_mode(args, cwd),
        session_dir=Path(args.session_dir).expanduser() if args.session_dir else None,
        system_prompt=args.system_prompt,
        append_system_prompt=args.append_system_prompt,
        context_files=not args.no_context_files,
        api_key=args.api_key,
        settings=settings,
        extra_models=extra_models,
        approval=args.approval,
        trust_project=True if args.trust_project else None,
        mcp=not args.no_mcp,
        mcp_config_files=mcp_config_files(args),
        start_mcp=args.print_mode,
        fallback_models=args.fallback or None,
        max_cost_usd=args.max_cost,
    )
    try:
        try:
            session = await CodingSession.open(options)
        except NoModelError:
            if args.print_mode:
                raise no_model_error() from None
            from baton.providers.demo import demo_model

            session = await CodingSession.open(replace(options, model=demo_model()))
    except SessionLockedError as exc:
        raise CliError(str(exc), EXIT_RUN_FAILED) from exc
    except (SessionFileError, SessionNotFoundError, FileNotFoundError, ValueError) as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    if model is None and args.print_mode:
        # A resumed session keeps its own model: check its key now, as for --model, rather than
        # send keyless requests (and store their errors in the session). The interactive mode
        # opens anyway, so that /model can move the conversation to a model that has a key.
        try:
            if session.model.provider == "demo":
                raise CliError("the session uses the offline demo model: pass --model demo/baton-demo "
                               "to continue on it", EXIT_USAGE)
            ensure_api_key(session.model, args.api_key)
        except CliError as exc:
            await session.close()
            raise CliError(f"{exc}; or continue with another model: --model PROVIDER/ID", exc.code) from exc
    return session
