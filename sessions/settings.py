"""User settings: ``$BATON_HOME/settings.json``, and a project's settings files over them.

A project's settings are, in this order (later files over earlier ones): Claude Code's
``.claude/settings.json`` and ``.claude/settings.local.json`` (only their ``permissions`` rules,
``permissions.defaultMode`` as ``approval`` and ``hooks``: the rest is Claude Code's own), then
``.baton/settings.json`` and the personal, uncommitted ``.baton/settings.local.json`` (where
"allow always" rules are saved). They are one project as far as trust goes: all of them are data
until the user trusts the project.

Keys may be written snake_case (``default_model``) or in pi's camelCase (``defaultModel``), so
a pi ``settings.json`` works as is (pi's separate ``defaultProvider`` + ``defaultModel`` pair is
understood too). A file that cannot be read or has invalid values never stops baton: each bad
value is reported in :attr:`Settings.problems` and its default is used instead.

Project settings are merged over the global ones: objects key by key, the lists of
``permissions``, ``hooks``, ``bash`` and ``sandbox`` joined (global first), other values replaced —
but only what :mod:`.setting_trust` lets apply: a repository's settings are data until the user
trusts the project (:mod:`.trust`). What waits is kept in :attr:`Settings.held`, and
:meth:`Settings.with_trust` gives the settings with it merged in.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator
from pydantic.alias_generators import to_camel, to_snake

from baton.providers.bounded_read import MAX_CONFIG_BYTES, FileRefusedError, read_regular_text
from baton.providers.json_depth import load_config_json
from baton.providers.json_types import JsonMapping, JsonObject, JsonValue
from baton.providers.models import ThinkingLevel
from baton.providers.paths import baton_home
from baton.tools.project_files import ProjectFiles, read_bounded

if TYPE_CHECKING:
    from baton.sessions.trust import ProjectTrust

SETTINGS_FILE = "settings.json"
LOCAL_SETTINGS_FILE = "settings.local.json"
PROJECT_DIR = ".baton"
CLAUDE_DIR = ".claude"
_CLAUDE_RULE_KINDS = ("allow", "deny", "ask")
_CLAUDE_MODES = {"default": "ask", "dontAsk": "ask", "acceptEdits": "auto", "bypassPermissions": "full", "plan": "plan"}
"""Claude Code's ``permissions.defaultMode`` as baton's ``approval`` (which a project may only make
stricter: ``bypassPermissions`` is ignored, with a notice)."""
_JOINED_LISTS = ("permissions", "hooks", "bash", "sandbox")


class _Section(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class CompactionSettings(_Section):
    """When and how much to compact (pi's defaults)."""

    enabled: bool = True
    reserve_tokens: int = Field(default=16_384, ge=0)
    """Compact once the context exceeds the model's window minus this many tokens."""
    keep_recent_tokens: int = Field(default=20_000, ge=0)
    """Roughly how many of the most recent tokens survive a compaction verbatim."""
    model: str | None = None
    """Who summarises: a role (``fast``…), ``provider/id`` or an alias; used when it can be
    called and can read what is summarised, else the usual choice (the current model, or one that
    held the conversation)."""


class RetrySettings(_Section):
    """Automatic retry of transient provider errors (pi's defaults)."""

    enabled: bool = True
    max_retries: int = Field(default=3, ge=0, le=100)
    base_delay_ms: int = Field(default=2_000, ge=0)
    """The first wait; each further attempt doubles it."""
    max_delay_ms: int = Field(default=60_000, ge=0)
    """The longest wait: a server asking (``Retry-After``) for more fails at once instead."""
    idle_timeout_ms: int = Field(default=120_000, gt=0)
    """A stream that delivers no event for this long ends as a (retryable) error; keep-alive
    comments do not count."""
    request_timeout_ms: int = Field(default=600_000, ge=0)
    """The most one request may take in all, its own retries included (0: no limit). A stream
    still going then ends as an error that is not retried, its partial answer kept."""


class BashSettings(_Section):
    """The bash tool (and ``!cmd``)."""

    pass_env: list[str] = Field(default_factory=list)
    """Variables commands keep although they look like credentials (``*_API_KEY``, ``*_TOKEN``,
    provider key variables), e.g. ``["GITHUB_TOKEN"]``."""


class PermissionSettings(_Section):
    """Permission rules in Claude Code's syntax (``bash(npm run test:*)``, ``edit(src/**)``)."""

    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)


class SandboxSettings(_Section):
    """The bash sandbox (bubblewrap)."""

    enabled: bool = True
    network: bool = False
    hidden_paths: list[str] = Field(default_factory=list)
    """More places a sandboxed command never sees and file tools never read unasked (``~/...``),
    added to baton's list of credential stores; in the user's own settings, ``"!~/.npmrc"``
    takes one of those away (a project may only add)."""


class CheckpointSettings(_Section):
    """Snapshots of the workspace before the agent changes it (``/rewind``)."""

    enabled: bool = True
    max_file_bytes: int = Field(default=10 * 1024 * 1024, ge=0)
    """Files larger than this are left out of snapshots (and reported)."""
    keep_days: float = Field(default=30, ge=0)
    """Snapshots older than this are pruned at start-up, in the background (0: keep all)."""


class McpSettings(_Section):
    """MCP client limits (``mcp`` in settings.json)."""

    tool_timeout_ms: int = Field(default=120_000, gt=0)
    """A tool call that has not answered by then fails (and the server is told to stop)."""
    startup_timeout_ms: int = Field(default=10_000, ge=0)
    """How long a prompt waits for servers still starting before it goes on without them."""


class ToolsSettings(_Section):
    """Limits on the tools."""

    max_processes: int = Field(default=8, ge=1, le=1024)
    """At most this many tool processes (bash commands) run at once; further calls wait."""
    max_background: int = Field(default=8, ge=1, le=64)
    """At most this many background commands (``run_in_background``, ``!&``) run at once;
    further starts are refused."""


NOTIFY_METHODS = ("auto", "bell", "osc", "off")
"""The built-in ways to notify; any other ``notify.method`` is a command (the user's own settings only)."""


class NotifySettings(_Section):
    """How the app tells the user that a run ended or an approval waits, when the terminal is not
    focused or the run took long. ``notify: "bell"`` is short for ``notify: {"method": "bell"}``."""

    method: str = "auto"
    """``auto`` (OSC 9 / OSC 777 where the terminal is known to show them, the bell otherwise),
    ``bell``, ``osc``, ``off``, or a shell command run with the message as ``$1`` (and in
    ``BATON_NOTIFY_MESSAGE``). A command is code: only the user's own settings may set one."""
    after_seconds: float = Field(default=10, ge=0)
    """Notify for a run that took at least this long even when the terminal has the focus."""

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: object) -> object:
        return {"method": data} if isinstance(data, str) else data


class ModelRoleSettings(_Section):
    """Models by role (``models`` in settings.json): ``provider/id`` of any provider, or a Claude
    Code alias (``opus``, ``sonnet``, ``haiku``). :mod:`sessions.roles` resolves them."""

    default: str | None = None
    """The session's default model for roles left unset (falls back to ``default_model``)."""
    fast: str | None = None
    """A fast, cheap model: the ``explore`` subagent, ``model: fast`` in an agent definition."""
    smart: str | None = None
    """The strongest model, for ``model: smart``."""
    advisor: str | None = None
    """The model asked for a second opinion (none unless set)."""


class SubagentSettings(_Section):
    """Subagents started by the ``task`` tool."""

    max_parallel: int = Field(default=4, ge=1, le=64)
    """At most this many subagents run at once (further ``task`` calls wait)."""
    max_depth: int = Field(default=1, ge=0, le=4)
    """How deep subagents may nest: 1 lets the main agent start subagents that cannot start any
    themselves; 0 turns the ``task`` tool off."""
class FallbackSettings(_Section):
    """Failing over to ``fallbackModels`` (see the README's "Passing the baton")."""

    return_after: Literal["prompt", "never"] = "prompt"
    """When the primary model is tried again after a failover: at the next prompt, or never in
    this session."""


class BudgetSettings(_Section):
    """Spending limits (``budget`` in settings.json)."""

    session_usd: float | None = Field(default=None, gt=0)
    """A session stops before a request that would start once its cost (all its requests, as the
    catalog prices them, cache reads and writes included) has reached this many US dollars."""


class Settings(_Section):
    """Everything ``settings.json`` may hold."""

    default_model: str | None = None
    """``provider/id`` of the model new sessions start with."""
    default_thinking_level: ThinkingLevel | None = None
    favorite_models: list[str] = Field(default_factory=list)
    """``provider/id`` list that Ctrl+P cycles through (all available models when empty)."""
    fallback_models: list[str] = Field(default_factory=list)
    """``provider/id`` list, in order: a turn that still fails on the current model after its
    retries (overloaded, 5xx, rate limited, connection lost, idle) goes on on the next one."""
    fallback: FallbackSettings = Field(default_factory=FallbackSettings)
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    bash: BashSettings = Field(default_factory=BashSettings)
    checkpoints: CheckpointSettings = Field(default_factory=CheckpointSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    models: ModelRoleSettings = Field(default_factory=ModelRoleSettings)
    subagents: SubagentSettings = Field(default_factory=SubagentSettings)
    notify: NotifySettings = Field(default_factory=NotifySettings)
    thinking_handoff: Literal["text", "drop"] = "text"
    """What another model's thinking becomes when the conversation moves: text (pi) or nothing."""
    theme: str | None = None
    approval: Literal["plan", "ask", "auto", "full"] = "auto"
    """What runs unasked: see the README's Permissions section."""
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    display: Literal["fullscreen", "inline"] = "fullscreen"
    """``inline`` runs the interactive app in the terminal's normal screen (as ``--inline``)."""
    models_update_url: str | None = None
    """Where ``baton --update-models`` downloads models.dev's data (default
    ``https://models.dev/api.json``; a mirror). Read from the user's settings only: a project's
    ``.baton/settings.json`` cannot choose where model data comes from."""

    _problems: list[str] = PrivateAttr(default_factory=list)
    _path: Path | None = PrivateAttr(default=None)
    _project_path: Path | None = PrivateAttr(default=None)
    _project_data: JsonObject = PrivateAttr(default_factory=dict)
    _global_data: JsonObject = PrivateAttr(default_factory=dict)
    _applied_data: JsonObject = PrivateAttr(default_factory=dict)
    _held: JsonObject = PrivateAttr(default_factory=dict)
    _refused: list[str] = PrivateAttr(default_factory=list)
    _trust: ProjectTrust | None = PrivateAttr(default=None)
    _trusted: bool = PrivateAttr(default=True)
    _base_problems: list[str] = PrivateAttr(default_factory=list)

    @property
    def problems(self) -> list[str]:
        """What was wrong with the file (each bad value was replaced by its default)."""
        return self._problems

    @property
    def path(self) -> Path | None:
        """The file these settings were loaded from, if any."""
        return self._path

    @property
    def project_path(self) -> Path | None:
        """The project's ``.baton/settings.json`` when one was merged in."""
        return self._project_path

    @property
    def project_data(self) -> JsonObject:
        """The raw object the project's settings file held (empty without one)."""
        return self._project_data

    @property
    def global_data(self) -> JsonObject:
        """The raw object the global settings file held."""
        return self._global_data

    @property
    def held(self) -> JsonObject:
        """The project's settings that apply only in a trusted project (as the file spells them)."""
        return self._held

    @property
    def refused(self) -> list[str]:
        """Project values only the user's own settings may set, ignored (``approval: "full"``)."""
        return self._refused

    @property
    def project_trust(self) -> ProjectTrust | None:
        """What trusting the project turns on (``None``: nothing needs trust)."""
        return self._trust

    @property
    def project_trusted(self) -> bool:
        """Whether the project's waiting settings, hooks and servers are in use."""
        return self._trusted

    @property
    def pending_trust(self) -> ProjectTrust | None:
        """What waits for the user's trust (``None`` when nothing does)."""
        return None if self._trusted else self._trust

    def with_trust(self, trusted: bool = True) -> Settings:
        """These settings with the project's waiting settings merged in (``trusted=False``:
        without them)."""
        if trusted == self._trusted or self._trust is None:  # nothing to trust (settings built in code)
            return self
        problems = list(self._base_problems)
        data = merge_settings(self._applied_data, self._held) if trusted and self._held else self._applied_data
        settings = validate_settings(data, problems, source=str(self._path or "settings"))
        for name in ("_path", "_project_path", "_project_data", "_global_data", "_applied_data", "_held",
                     "_refused", "_trust", "_base_problems"):
            setattr(settings, name, getattr(self, name))
        settings._trusted = trusted
        return settings


def project_settings_path(project_dir: Path) -> Path:
    """``<project>/.baton/settings.json``."""
    return project_dir / PROJECT_DIR / SETTINGS_FILE


def project_local_settings_path(project_dir: Path) -> Path:
    """``<project>/.baton/settings.local.json`` (personal, kept out of git)."""
    return project_dir / PROJECT_DIR / LOCAL_SETTINGS_FILE


def project_settings_files(project_dir: Path) -> tuple[Path, ...]:
    """The project's settings files, in merge order (later over earlier)."""
    claude = project_dir / CLAUDE_DIR
    return (claude / SETTINGS_FILE, claude / LOCAL_SETTINGS_FILE, project_settings_path(project_dir),
            project_local_settings_path(project_dir))


def settings_path(home: Path | None = None) -> Path:
    """``$BATON_HOME/settings.json``."""
    return (home or baton_home()) / SETTINGS_FILE


def load_settings(path: Path | None = None, *, project_dir: Path | None = None,
                  trust_project: bool | None = None) -> Settings:
    """Read settings (default: ``$BATON_HOME/settings.json``), with what may apply of
    ``project_dir``'s ``.baton/settings.json`` merged over them when given; never raises.

    ``trust_project``: ``True`` trusts the project for this call, ``False`` never, ``None`` as
    the user answered before (:mod:`.trust`). A missing file gives the defaults. An unreadable
    file or invalid JSON gives the defaults and one problem; invalid values are dropped one by
    one (each reported) and the rest is kept."""
    from baton.sessions.setting_trust import split_project_settings
    from baton.sessions.trust import is_trusted, project_trust

    target = path or settings_path()
    problems: list[str] = []
    global_data = _read_object(target, problems)
    project_data: JsonObject = {}
    project_file: Path | None = None
    # one read policy for the whole call (its real paths are costly): the project's settings
    # files and what its trust covers are read as it allows
    files: ProjectFiles | None = None
    if project_dir is not None:
        files = ProjectFiles.for_dir(project_dir)
        project_data, project_file = _read_project(project_dir, target, problems, files)
    data = _from_pi(global_data)
    held: JsonObject = {}
    refused: list[str] = []
    if project_data:
        user = validate_settings(data, [], source=str(target))
        split = split_project_settings(_from_pi(project_data), lambda parts: _value_at(user, parts))
        data, held, refused = merge_settings(data, split.applied), split.held, split.refused
    trust = project_trust(project_dir, held, files) if project_dir is not None else None
    trusted = trust is None or trust_project is True or (trust_project is None and is_trusted(trust))
    base_problems = list(problems)
    merged = merge_settings(data, held) if trusted and held else data
    settings = validate_settings(merged, problems, source=str(target))
    settings._path = target
    settings._project_path = project_file
    settings._project_data = project_data
    settings._global_data = global_data
    settings._applied_data = data
    settings._held = held
    settings._refused = refused
    settings._trust = trust
    settings._trusted = trusted
    settings._base_problems = base_problems
    return settings


def _read_project(project_dir: Path, target: Path, problems: list[str],
                  files: ProjectFiles) -> tuple[JsonObject, Path | None]:
    """The project's settings files merged (see the module docstring), read as ``files`` (the
    project's read policy) allows, and the path of its ``.baton/settings.json`` when it exists
    (``None`` otherwise)."""
    merged: JsonObject = {}
    main = project_settings_path(project_dir)
    main_file: Path | None = None
    for candidate in project_settings_files(project_dir):
        if candidate.resolve() == target.resolve():
            continue  # the project is $BATON_HOME's parent and this is the user's own file
        if candidate.parent.name == CLAUDE_DIR and files.is_users(candidate):
            continue  # the working directory is the home directory: ~/.claude is the user's own
        data = _read_object(candidate, problems, files)
        if candidate.parent.name == CLAUDE_DIR:
            data = _claude_part(data)
        if data:
            merged = merge_settings(merged, data)
        if candidate == main and (data or candidate.is_file()):
            main_file = candidate
    return merged, main_file


def _claude_part(data: JsonMapping) -> JsonObject:
    """What baton takes from a Claude Code settings object: its permission rules and hooks."""
    out: JsonObject = {}
    permissions = data.get("permissions")
    if isinstance(permissions, dict):
        rules: JsonObject = {k: v for k, v in permissions.items() if k in _CLAUDE_RULE_KINDS}
        if rules:
            out["permissions"] = rules
        mode = permissions.get("defaultMode")
        if isinstance(mode, str) and mode in _CLAUDE_MODES:
            out["approval"] = _CLAUDE_MODES[mode]
    if "hooks" in data:
        out["hooks"] = data["hooks"]
    return out


def _value_at(settings: Settings, parts: tuple[str, ...]) -> object:
    """The value of a setting path (snake_case parts) in validated settings, ``None`` if unknown."""
    node: object = settings
    for part in parts:
        if isinstance(node, BaseModel):
            extra = node.model_extra or {}
            node = getattr(node, part) if part in type(node).model_fields else extra.get(part)
        else:
            return None
    return node


def merge_settings(base: JsonMapping, over: JsonMapping) -> JsonObject:
    """``over`` merged onto ``base`` (see the module docstring for the rules)."""
    out = dict(base)
    for key, value in over.items():
        current = out.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            out[key] = _merge_section(current, value, join_lists=key in _JOINED_LISTS)
        else:
            out[key] = value
    return out


def _merge_section(base: JsonMapping, over: JsonMapping, *, join_lists: bool) -> JsonObject:
    out = dict(base)
    for key, value in over.items():
        current = out.get(key)
        if join_lists and isinstance(current, list) and isinstance(value, list):
            out[key] = [*current, *value]
        elif isinstance(current, dict) and isinstance(value, dict):
            out[key] = _merge_section(current, value, join_lists=join_lists)
        else:
            out[key] = value
    return out


def _read_object(target: Path, problems: list[str], files: ProjectFiles | None = None) -> JsonObject:
    """The JSON object in ``target`` ({} when missing; problems noted when unreadable or invalid).
    Only a regular file of at most 1 MB is read, and a project's file only as ``files`` allows."""
    data: JsonObject = {}
    try:
        text = read_bounded(target, MAX_CONFIG_BYTES, files).decode("utf-8")
    except FileNotFoundError:
        text = ""
    except FileRefusedError as exc:
        text = ""
        problems.append(f"{target}: not read: {exc}; using default settings")
    except (OSError, UnicodeDecodeError) as exc:
        text = ""
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        problems.append(f"{target}: cannot be read ({why}); using default settings")
    if text.strip():
        try:
            loaded = load_config_json(text)
        except ValueError as exc:
            problems.append(f"{target}: not valid JSON ({exc}); using default settings")
            loaded = {}
        if isinstance(loaded, dict):
            data = loaded
        else:
            problems.append(f"{target}: must hold a JSON object; using default settings")
    return data


def validate_settings(data: JsonMapping, problems: list[str] | None = None, *, source: str = "settings") -> Settings:
    """Validate a settings dict, dropping (and reporting) each invalid value."""
    found = problems if problems is not None else []
    current = _copy_object(data)
    for _ in range(64):
        try:
            settings = Settings.model_validate(current)
            break
        except ValidationError as exc:
            for error in exc.errors():
                loc = [str(p) for p in error.get("loc", ())]
                found.append(f"{source}: {'.'.join(loc) or 'value'}: {error.get('msg')}; using the default")
                _drop(current, loc)
    else:  # pragma: no cover - every round drops at least one key
        settings = Settings()
    settings._problems = found
    return settings


def _from_pi(data: JsonMapping) -> JsonObject:
    """pi keeps the provider apart (``defaultProvider`` + ``defaultModel``); join them."""
    out = dict(data)
    provider = out.pop("defaultProvider", None)
    model = out.get("defaultModel", out.get("default_model"))
    if isinstance(provider, str) and isinstance(model, str) and "/" not in model:
        key = "defaultModel" if "defaultModel" in out else "default_model"
        out[key] = f"{provider}/{model}"
    return out


def _drop(data: JsonObject, loc: list[str]) -> None:
    """Remove the value at ``loc`` (keys may be spelled snake_case or camelCase)."""
    node: JsonValue = data
    for depth, key in enumerate(loc):
        last = depth == len(loc) - 1
        if isinstance(node, dict):
            actual = next((k for k in (key, to_camel(key), to_snake(key)) if k in node), None)
            if actual is None:
                break
            if last:
                del node[actual]
                return
            node = node[actual]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            if last:
                del node[int(key)]
                return
            node = node[int(key)]
        else:
            break
    if loc:  # could not follow the path: drop the whole top-level key
        for k in (loc[0], to_camel(loc[0]), to_snake(loc[0])):
            data.pop(k, None)


def _copy_object(data: JsonMapping) -> JsonObject:
    return {k: _deep_copy(v) for k, v in data.items()}


def _deep_copy(value: JsonValue) -> JsonValue:
    if isinstance(value, dict):
        return _copy_object(value)
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value


def save_setting(key: str, value: JsonValue, path: Path | None = None) -> Path:
    """Set one top-level ``key`` in a settings file (default: ``$BATON_HOME/settings.json``),
    keeping everything else in it; written atomically. Raises OSError, or ValueError when the
    file exists but does not hold a JSON object (it is then left alone)."""
    from baton.tools.fs_atomic import atomic_write

    target = path or settings_path()
    data: JsonObject = {}
    try:
        text = read_regular_text(target, MAX_CONFIG_BYTES)
    except FileNotFoundError:
        text = ""
    if text.strip():
        loaded = load_config_json(text)
        if not isinstance(loaded, dict):
            raise ValueError(f"{target} does not hold a JSON object")
        data = loaded
    data[key] = value
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(str(target), (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return target
