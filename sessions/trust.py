"""Trusting a project: what its settings would loosen and what its hooks and servers would run.

A project's ``.baton/settings.json`` settings that widen anything (:mod:`.setting_trust`), the
hooks among them, its ``.mcp.json`` servers, and the content of every workspace file those hooks
and servers run (:mod:`.command_files`) apply only once the user trusts them. The decision is
remembered per project directory in ``$BATON_HOME/trusted-projects.json`` as one digest over
exactly those parts (and each part's own digest, so a change can be named): a changed part asks
again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from baton.providers.bounded_read import MAX_CONFIG_BYTES, read_regular
from baton.providers.json_depth import load_config_json
from baton.providers.json_types import JsonMapping, JsonObject
from baton.providers.paths import baton_home
from baton.sessions.setting_trust import describe_held, one_line
from baton.sessions.template_dirs import project_template_dirs
from baton.tools.project_files import ProjectFiles, describe_refusal

if TYPE_CHECKING:
    # Imported where a project has hooks, command files or an .mcp.json: most have none, and
    # settings are read (this module runs) before an editor's session/new is answered.
    from baton.tools.file_pins import FilePin
    from baton.tools.mcp.config import McpServerConfig

TRUST_FILE = "trusted-projects.json"
PROJECT_MCP_FILE = ".mcp.json"
SETTINGS_PART = "settings"
_FILE_PREFIX = "file:"
COMMAND_PREFIX = "command:"
"""A trust part: a project command file's body (with the ``!`cmd` `` lines it runs)."""
"""A ``.mcp.json`` larger than this is not read (it is judged by its size alone)."""


@dataclass(frozen=True, slots=True)
class ProjectTrust:
    """What trusting a project would turn on, and the digest the answer is remembered by."""

    project: Path
    digest: str
    what: list[str]
    """Short items: ``["settings (permissions.allow, bash.passEnv)", "hooks (PreToolUse)",
    ".mcp.json (2 servers: db, search)"]``."""
    allows: list[str] = field(default_factory=list)
    """One line per waiting setting: ``permissions.allow: bash (these calls run without asking)``."""
    runs: list[str] = field(default_factory=list)
    """One line per command: ``PreToolUse hook: ./scripts/lint.sh``, ``MCP server db: python srv.py``."""
    files: list[str] = field(default_factory=list)
    """The workspace files those commands run, as the user reads them (``scripts/lint.sh``)."""
    parts: dict[str, str] = field(default_factory=dict)
    """Part name (``settings``, ``.mcp.json``, ``file:<path>``) → its digest."""
    changed: list[str] = field(default_factory=list)
    """What changed since the user last trusted this project (empty when never trusted)."""
    hook_pins: dict[str, tuple[FilePin, ...]] = field(default_factory=dict)
    """Hook command → the files it runs, as trusted."""
    servers: tuple[McpServerConfig, ...] = ()
    """The ``.mcp.json`` servers, read from the bytes this digest covers, each pinned to the files
    it runs as trusted."""
    mcp_problems: tuple[str, ...] = ()
    """What was wrong with ``.mcp.json`` (one line per bad entry)."""

    def pinned_paths(self) -> list[str]:
        """Every workspace file a trusted hook or server runs (as named, then its real path): the
        sandbox keeps them read-only and a file tool's write to one always asks, so the model
        cannot rewrite a script between its pin check and its start outside the sandbox."""
        pins = [p for pins in (*self.hook_pins.values(), *(s.pins for s in self.servers)) for p in pins]
        named = [os.path.abspath(os.path.join(self.project, pin.path)) for pin in pins]
        return list(dict.fromkeys(path for name in named for path in (name, os.path.realpath(name))))

    def waiting(self, *, servers: bool = True) -> list[str]:
        """The :attr:`what` items; ``servers=False`` (MCP is off, ``--no-mcp``: the project's
        servers would not start even if trusted) leaves out the ``.mcp.json`` item."""
        return list(self.what) if servers else [w for w in self.what if not w.startswith(f"{PROJECT_MCP_FILE} (")]

    def describe(self) -> str:
        """One line naming what needs trust."""
        return f"{self.project}: {' and '.join(self.what)}"

    def changed_text(self) -> str:
        """``scripts/lint.sh changed since you trusted this project`` (empty when nothing did)."""
        if not self.changed:
            return ""
        return f"{', '.join(self.changed)} changed since you trusted this project"

    def question(self) -> str:
        """The body of the trust question: what it would allow, what would run, which files."""
        lines: list[str] = []
        if self.changed:
            lines.append(f"Asked again: {self.changed_text()}.")
        if self.allows:
            lines.append("Its settings would:")
            lines += _bullets(self.allows)
        if self.runs:
            lines.append("It would run, outside the sandbox:")
            lines += _bullets(self.runs)
        if self.files:
            lines.append(f"Workspace files those commands run (a change asks again): {', '.join(self.files)}")
        return "\n".join(lines)


def _bullets(items: list[str], limit: int = 12) -> list[str]:
    lines = [f"  • {item}" for item in items[:limit]]
    return lines + ([f"  • … and {len(items) - limit} more"] if len(items) > limit else [])


def project_trust(project: Path, held: JsonMapping, files: ProjectFiles | None = None) -> ProjectTrust | None:
    """What trusting ``project`` would turn on (``held``: its settings waiting for trust); ``None``
    when nothing waits (no such settings, no ``.mcp.json``). ``files``: the project's read policy
    (``ProjectFiles.for_dir(project)``) when the caller has it already."""
    files = ProjectFiles.for_dir(project) if files is None else files
    parts: dict[str, str] = {}
    what: list[str] = []
    runs: list[str] = []
    hook_pins: dict[str, tuple[FilePin, ...]] = {}
    servers: list[McpServerConfig] = []
    mcp_problems: list[str] = []
    allows = describe_held(held)
    hooks_raw = held.get("hooks")
    if held:
        parts[SETTINGS_PART] = _sha(json.dumps(held, sort_keys=True, ensure_ascii=False, default=str).encode())
        names = _setting_names(held)
        if names:
            what.append(f"settings ({', '.join(one_line(n, 40) for n in names)})")
    if isinstance(hooks_raw, dict) and hooks_raw:
        from baton.sessions.command_files import shell_command_pins
        from baton.sessions.hooks.config import parse_hooks

        what.append(f"hooks ({', '.join(one_line(str(k), 40) for k in hooks_raw)})")
        for hook in parse_hooks(hooks_raw, "project", []):
            runs.append(f"{hook.event} hook: {one_line(hook.command)}")
            hook_pins[hook.command] = shell_command_pins(hook.command, project)
    for name, digest, commands in command_file_commands(project, files):
        parts[COMMAND_PREFIX + name] = digest
        allows += [f"/{name} runs !`{one_line(command, 120)}` (in the sandbox, when an allow rule matches it)"
                   for command in commands]
    commanding = [name for name in parts if name.startswith(COMMAND_PREFIX)]
    if commanding:
        what.append(f"commands ({', '.join('/' + one_line(n.removeprefix(COMMAND_PREFIX), 40) for n in commanding)})")
    mcp_bytes = _read_mcp(project, mcp_problems, files)
    if mcp_bytes.strip():
        from baton.sessions.command_files import argv_pins

        parts[PROJECT_MCP_FILE] = _sha(mcp_bytes)
        what.append(f"{PROJECT_MCP_FILE} ({_server_names(mcp_bytes)})")
        for server in _servers(project, mcp_bytes, mcp_problems):
            runs.append(f"MCP server {server.name}: {one_line(server.describe())}")
            if server.transport == "stdio":
                pins = argv_pins([server.command, *server.args], project, _server_cwd(project, server))
                server = replace(server, pins=pins)
            servers.append(server)
    if not parts:
        return None
    pinned: dict[str, str] = {}
    for pin in [p for pins in (*hook_pins.values(), *(s.pins for s in servers)) for p in pins]:
        pinned[pin.shown] = pin.digest
        parts[_FILE_PREFIX + pin.shown] = pin.digest
    digest = _sha("".join(f"{name}={value}\n" for name, value in sorted(parts.items())).encode())
    shown_files = _shown_files(pinned) if pinned else []
    changed = _changed_since(project, digest, parts)
    return ProjectTrust(project, digest, what, allows, runs, [one_line(f, 200) for f in shown_files], parts,
                        changed, hook_pins, tuple(servers), tuple(mcp_problems))


def command_file_commands(project: Path, files: ProjectFiles | None = None) -> list[tuple[str, str, list[str]]]:
    """The project's command files that run commands (``!`cmd` ``): ``(name, digest of the body,
    the commands)`` each. ``files``: the project's read policy, when the caller has it."""
    if not any(os.path.isdir(folder) for folder in project_template_dirs(project)):
        return []  # what load_templates finds where no folder is (most projects): nothing
    from baton.sessions.prompt_templates import bang_commands, load_templates

    policy = ProjectFiles.for_dir(project) if files is None else files
    out: list[tuple[str, str, list[str]]] = []
    for template in load_templates(project_template_dirs(project), [], policy):
        commands = bang_commands(template.body)
        if commands:
            out.append((template.name, body_digest(template.body), commands))
    return out


def _shown_files(pinned: dict[str, str]) -> list[str]:
    from baton.tools.file_pins import ABSENT  # pinned files: the pinning module is loaded already

    return [f"{name} (does not exist yet)" if value == ABSENT else name for name, value in pinned.items()]


def body_digest(body: str) -> str:
    """The digest a command file's body is trusted by."""
    return _sha(body.encode("utf-8"))


def _setting_names(held: JsonMapping) -> list[str]:
    names: list[str] = []
    for key, value in held.items():
        if key == "hooks" and isinstance(value, dict) and value:
            continue  # listed as the commands it runs
        if isinstance(value, dict) and value and key not in ("defaultModel", "default_model"):
            names += [f"{key}.{sub}" for sub in value]
        else:
            names.append(key)
    return names


def _read_mcp(project: Path, problems: list[str], files: ProjectFiles | None = None) -> bytes:
    path = project / PROJECT_MCP_FILE
    try:
        return (ProjectFiles.for_dir(project) if files is None else files).read(path, MAX_CONFIG_BYTES)
    except FileNotFoundError:
        return b""
    except OSError as exc:  # refused: a FIFO, a device, too large, or it leads out of the project
        problems.append(f"{path}: not read: {describe_refusal(exc)}; its MCP servers are skipped")
        return b""


def unreadable_mcp_file(project: Path) -> list[str]:
    """The one-line problem of a project ``.mcp.json`` that exists but is refused (for a project
    with nothing else to trust, whose :func:`project_trust` is ``None``)."""
    problems: list[str] = []
    _read_mcp(project, problems)
    return problems


def _servers(project: Path, data: bytes, problems: list[str]) -> list[McpServerConfig]:
    from baton.tools.mcp.config import parse_servers

    origin = str(project / PROJECT_MCP_FILE)
    try:
        loaded = load_config_json(data.decode("utf-8", "replace"))
    except ValueError as exc:
        problems.append(f"{origin}: not valid JSON ({exc}); its MCP servers are skipped")
        return []
    return parse_servers(loaded, "project", origin, problems)


def _server_cwd(project: Path, server: McpServerConfig) -> Path:
    if not server.cwd:
        return project
    cwd = Path(server.cwd).expanduser()
    return cwd if cwd.is_absolute() else project / cwd


def _server_names(data: bytes) -> str:
    try:
        servers = load_config_json(data.decode("utf-8", "replace")).get("mcpServers", {})
        names = list(servers) if isinstance(servers, dict) else []
    except (ValueError, AttributeError):
        return "not valid JSON"
    shown = ", ".join(one_line(str(n), 40) for n in names[:6])
    return f"{len(names)} server{'s' if len(names) != 1 else ''}: {shown}" if names else "no servers"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def trust_file() -> Path:
    """``$BATON_HOME/trusted-projects.json``."""
    return baton_home() / TRUST_FILE


def is_trusted(trust: ProjectTrust) -> bool:
    """Whether the user trusted exactly this before."""
    record = _load().get(str(trust.project))
    return record is not None and record.get("digest") == trust.digest


def remember_trust(trust: ProjectTrust) -> None:
    """Remember that the user trusts this (atomic write)."""
    remember_parts(trust.project, trust.parts)


def remember_parts(project: Path, parts: dict[str, str]) -> None:
    """Remember ``parts`` (name → digest) as what the user trusts in ``project``."""
    data: JsonObject = {**_load()}
    digest = _sha("".join(f"{name}={value}\n" for name, value in sorted(parts.items())).encode())
    data[str(project)] = {"digest": digest, "parts": dict(parts)}
    target = trust_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".trusted-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=True)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def trusted_parts(project: Path) -> dict[str, str] | None:
    """The parts the user last trusted in ``project`` (``None``: never, or in an older format)."""
    record = _load().get(str(project))
    parts = record.get("parts") if record is not None else None
    return {str(k): str(v) for k, v in parts.items()} if isinstance(parts, dict) else None


def _changed_since(project: Path, digest: str, parts: dict[str, str]) -> list[str]:
    record = _load().get(str(project))
    if record is None or record.get("digest") == digest:
        return []
    before = record.get("parts")
    if not isinstance(before, dict):
        return ["the project's commands"]
    names = sorted(set(before) | set(parts))
    changed = [name for name in names if before.get(name) != parts.get(name)]
    return [_part_label(name) for name in changed]


def _part_label(name: str) -> str:
    if name == SETTINGS_PART:
        return "the project's settings"
    if name.startswith(COMMAND_PREFIX):
        return f"the /{name.removeprefix(COMMAND_PREFIX)} command"
    return name.removeprefix(_FILE_PREFIX)


def _load() -> dict[str, JsonObject]:
    try:
        data = load_config_json(read_regular(trust_file(), MAX_CONFIG_BYTES).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, JsonObject] = {}
    for key, value in data.items():
        if isinstance(value, str):  # the first format: the digest alone
            out[str(key)] = {"digest": value}
        elif isinstance(value, dict):
            out[str(key)] = value
    return out


def ignored_summary(pending: ProjectTrust | None, refused: list[str], project: Path, how_to_trust: str,
                    *, servers: bool = True) -> str | None:
    """One line saying exactly what of ``project`` is ignored (``None``: nothing is):
    what waits for trust (``how_to_trust`` says how to give it), and what only the user's own
    settings may set. ``servers=False``: MCP is off, so ``.mcp.json`` is not named (trust would
    not start its servers either)."""
    parts: list[str] = []
    waiting = pending.waiting(servers=servers) if pending is not None else []
    if pending is not None and waiting:
        changed = f"; {pending.changed_text()}" if pending.changed else ""
        parts.append(f"ignoring the untrusted {', '.join(waiting)} of {project}{changed} ({how_to_trust})")
    if refused:
        parts.append(f"ignoring {', '.join(refused)} from the settings of {project} "
                     "(only your own settings can loosen these)")
    return "; ".join(parts) or None
