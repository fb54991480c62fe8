"""What the footer will say, worked out before anything heavy loads, for the first frame: the
working directory and branch, the model, the approval mode and sandbox.

The model comes from the command line, the user's settings, ``models.json`` and the environment's
keys, in the order :func:`baton.tui.cli.session_setup.resolve_model` takes them, but from the raw
files and the bundled catalog's JSON only (no settings model, no catalog of ``Model`` objects). Where
the answer depends on something only the session knows — a project's settings files (trust
decides what applies), a resumed session's own model, a ``!command`` key, a custom provider, an id
not in the bundled catalog as written — the field is left empty rather than guessed: the first
frame never names a model the footer will not name.

Standard library and the cheap provider modules only: this runs before the first paint.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from baton.providers.bounded_read import MAX_CONFIG_BYTES, read_regular
from baton.providers.json_depth import load_config_json
from baton.providers.paths import baton_home
from baton.tui.cli.args import CliArgs

APPROVAL_MODES = ("plan", "ask", "auto", "full")
DEMO_REF = "demo/baton-demo"
PROJECT_SETTINGS = (".claude/settings.json", ".claude/settings.local.json", ".baton/settings.json",
                    ".baton/settings.local.json")
"""A project's settings files (:func:`baton.sessions.settings.project_settings_files`)."""


@dataclass(frozen=True)
class EarlyStatus:
    """The footer's fields as far as they are known before the session opens ("" where not)."""

    cwd: str
    model: str
    demo: bool
    approval: str


def early_status(args: CliArgs, cwd: Path | None = None) -> EarlyStatus:
    """The footer's fields for ``args`` run in ``cwd`` (default: the current directory)."""
    cwd = Path.cwd() if cwd is None else cwd
    user = _read_json(baton_home() / "settings.json")
    project = any((cwd / name).exists() for name in PROJECT_SETTINGS)
    try:
        model = _model(args, user, project)
    except (OSError, ValueError, KeyError, TypeError):
        model = ""
    branch = _git_branch(cwd)
    where = _short_path(cwd) + (f" ({branch})" if branch else "")
    return EarlyStatus(cwd=printable(where), model=printable(model), demo=model == DEMO_REF,
                       approval=_approval(args, user, project))


def printable(text: str) -> str:
    """``text`` without control characters (a path or a branch name may hold escape sequences)."""
    return "".join(char for char in text if char.isprintable())


# -- the model -----------------------------------------------------------------------------------


def _model(args: CliArgs, user: dict[str, object], project: bool) -> str:
    from baton.tui.cli.session_setup import DEFAULT_MODELS, split_thinking_suffix

    if args.model:
        ref, _level = split_thinking_suffix(args.model)
        if args.provider and "/" not in ref:
            ref = f"{args.provider}/{ref}"
        return ref if _known(ref) and (args.api_key or _has_key(ref) is True) else ""
    if args.provider or args.continue_session or args.resume or args.session or project:
        return ""
    default = _default_model(user)
    if default is not None:
        return default if _known(default) and (args.api_key or _has_key(default) is True) else ""
    for ref in DEFAULT_MODELS:
        has = _has_key(ref)
        if has is None:
            return ""
        if has:
            return ref if _known(ref) else ""
    from baton.providers.models_json import read_models_json

    if read_models_json().configs:
        return ""  # a custom or local model may be chosen: the catalog decides
    return DEMO_REF


def _default_model(user: dict[str, object]) -> str | None:
    """The user's ``defaultModel`` (pi's ``defaultProvider`` joined to it)."""
    model = user.get("defaultModel", user.get("default_model"))
    if not isinstance(model, str) or not model:
        return None
    provider = user.get("defaultProvider")
    if isinstance(provider, str) and "/" not in model:
        model = f"{provider}/{model}"
    return model


def _known(ref: str) -> bool:
    """True when ``ref`` is, exactly as written, a model of the bundled catalog (or the demo)
    that ``models.json`` does not touch."""
    from baton.providers.catalog_data import builtin_model_definitions
    from baton.providers.catalog_overlay import overlay_path
    from baton.providers.models_json import read_models_json

    if ref == DEMO_REF:
        return True
    provider, sep, model_id = ref.partition("/")
    if not sep or provider in read_models_json().configs or overlay_path().exists():
        return False
    definitions = builtin_model_definitions().get(provider, [])
    return any(m.get("id") == model_id for m in definitions)


def _has_key(ref: str) -> bool | None:
    """Whether the model's provider has a key (models.json's ``apiKey``, then the environment);
    ``None`` when only running a ``!command`` would tell."""
    from baton.providers.catalog_data import builtin_providers
    from baton.providers.models_json import read_models_json

    provider = ref.split("/", 1)[0]
    if provider == "demo":
        return True
    raw = read_models_json().api_key(provider)
    if raw:
        if raw.startswith("!"):
            return None
        return True  # a variable's name (set) or a literal; an unset name is used as the literal
    entry = builtin_providers().get(provider)
    names = list(entry["envVars"]) if entry else []
    return any(os.environ.get(name, "").strip() for name in names)


# -- approval and sandbox ------------------------------------------------------------------------


def _approval(args: CliArgs, user: dict[str, object], project: bool) -> str:
    """The footer's ``auto · sandbox`` (see ``Permissions.status_line``), or "" when unsure."""
    if args.approval in APPROVAL_MODES:
        mode = args.approval
    elif project or args.continue_session or args.resume or args.session:
        return ""  # a project may make it stricter; a resumed session recorded its own
    else:
        value = user.get("approval", "auto")
        mode = value if isinstance(value, str) and value in APPROVAL_MODES else "auto"
    if mode == "full":
        return "full · no sandbox"
    if mode == "plan":
        return "plan · read-only"
    section = user.get("sandbox")
    if isinstance(section, dict) and section.get("enabled") is False:
        if project:
            return ""  # a project's settings may turn the sandbox on (never off)
        why = "the sandbox is turned off (sandbox.enabled: false)"
    elif not os.path.isdir("/proc") or not sys.platform.startswith("linux"):
        why = "the sandbox needs Linux (bubblewrap)"
    else:
        import shutil

        if shutil.which("bwrap") is not None:
            return f"{mode} · sandbox"  # bubblewrap's own check runs with the session
        why = "bubblewrap (bwrap) is not installed"
    return f"{mode} · no sandbox ({why})" if mode == "auto" else f"{mode} · no sandbox"


# -- where ---------------------------------------------------------------------------------------


def _read_json(path: Path) -> dict[str, object]:
    try:  # a regular file of at most 1 MB: a FIFO or /dev/zero must not stop the first frame
        data = load_config_json(read_regular(path, MAX_CONFIG_BYTES).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _short_path(path: Path) -> str:
    """As the footer writes it (``~`` for the home directory)."""
    text, home = str(path), str(Path.home())
    if home and home != "/" and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home):]
    return text


def _git_branch(cwd: Path) -> str | None:
    """As the footer finds it (:func:`baton.tui.app.widgets.status.git_branch`)."""
    for directory in (cwd, *cwd.parents):
        try:
            text = read_regular(directory / ".git" / "HEAD", 4096, truncate=True).decode("utf-8", "replace").strip()
        except OSError:
            if (directory / ".git").exists():
                return None
            continue
        if text.startswith("ref: refs/heads/"):
            return text[len("ref: refs/heads/"):]
        return text[:8]
    return None
