"""The bash sandbox (Linux: bubblewrap + seccomp, the engines Codex uses).

A sandboxed command sees the whole file system read-only except the workspace (and its real path
when it is reached through a symlink). Inside the workspace the repository's control files stay
read-only: ``.git`` as a whole (and, for a worktree or submodule, the folders its ``.git`` file
points to; also the ``.git`` of each folder directly in the workspace, for a workspace holding
several repositories), ``.baton/``, ``.claude/`` and ``.mcp.json``. ``$BATON_HOME`` and the credential stores
of :mod:`baton.tools.hidden_paths` are covered by empty mounts. It gets:

* its own PID namespace and session: no other process is visible (``/proc/<pid>/root`` of a host
  process led straight to the host's writable root), and no terminal to push keystrokes into;
* a private ``/tmp`` (also as ``$TMPDIR``), ``/dev`` and IPC namespace, no socket-carrying
  variables (``SSH_AUTH_SOCK``, ``DBUS_SESSION_BUS_ADDRESS``, ``TMUX``, ``DISPLAY``...), no
  ``/run/user/<uid>``, and a seccomp filter (:mod:`baton.tools.seccomp`) that refuses Unix
  sockets, so no local service (tmux, D-Bus, docker, an SSH agent) can be asked to run anything;
* no network unless allowed, no capability beyond file ownership (even when baton runs as root),
  and it dies with baton.

Inside the namespace, bwrap's own init is pid 1 and the command pid 2, both in a new session
whose process group (the init's pid outside) is the command's group: :meth:`Sandbox.start`
reports that as the command's pid, so timeout, abort and the stopped-process watch reach
everything the command started. A fresh sandbox ends with its command (background jobs
included); the session's long-lived one (:mod:`baton.tools.sandbox_host`) keeps them until it
closes.

:func:`probe` checks once whether bwrap can start here (it needs user namespaces, or root);
:func:`looks_like_denial` recognises output that suggests the sandbox got in the way.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import itertools
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from baton.tools import seccomp
from baton.tools.hidden_paths import HiddenPaths, hidden_paths
from baton.tools.path_facts import PathFacts, RecordedFacts
from baton.tools.shell import StartedCommand

READ_ONLY_INSIDE = (".git", ".baton", ".claude", ".mcp.json")
"""Inside the writable workspace, these stay read-only: a repository's control files (a hook or
``core.fsmonitor`` runs on the user's next ``git commit``) and the settings baton and Claude
Code read."""
ROOT_FILE_CAPABILITIES = ("CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID")
"""What a root command keeps in the sandbox: working on files it does not own (a repository
mounted into a container belongs to the host's user). Nothing that mounts, traces or reads
files by handle."""
SOCKET_VARIABLES = frozenset({
    "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS",
    "DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "XAUTHORITY", "XDG_RUNTIME_DIR", "TMUX", "TMUX_PANE", "STY",
    "DOCKER_HOST", "CONTAINER_HOST", "PODMAN_HOST", "PULSE_SERVER", "KITTY_LISTEN_ON", "NVIM",
    "NVIM_LISTEN_ADDRESS", "VSCODE_IPC_HOOK", "VSCODE_IPC_HOOK_CLI", "VSCODE_GIT_IPC_HANDLE", "NOTIFY_SOCKET",
    "SWAYSOCK", "I3SOCK", "HYPRLAND_INSTANCE_SIGNATURE", "WEZTERM_UNIX_SOCKET", "ALACRITTY_SOCKET",
})
"""Variables that name a local service's socket: dropped from a sandboxed command's environment
(so is any ``*_SOCK``/``*_SOCKET``); the sandbox could not reach them anyway."""
TEMP_VARIABLES = ("TMPDIR", "TMP", "TEMP", "TEMPDIR")
SOCKET_PLACES = (
    "/run/user/{uid}", "/tmp/.X11-unix", "/tmp/.ICE-unix", "/tmp/tmux-{uid}", "/run/docker.sock",
    "/run/podman/podman.sock", "/run/containerd/containerd.sock", "/run/dbus/system_bus_socket",
    "/run/systemd/private",
)
"""Host sockets covered by empty mounts too, in case the seccomp filter is missing (an
architecture it does not know)."""
_SUBMODULE_LIMIT = 64

_DENIAL = re.compile(
    r"Read-only file system|Network is unreachable|Could not resolve host|"
    r"Temporary failure in name resolution|Name or service not known|"
    r"Connection refused|Couldn't connect to server|Operation not permitted|"
    r"\[Errno 101\]|\[Errno 30\]|\[Errno 1\]",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """Whether the sandbox can be used, and if not, why (one line for the user); ``warning``:
    what it cannot do here (e.g. block Unix sockets on an architecture the filter does not know)."""

    available: bool
    reason: str = ""
    bwrap: str | None = None
    socket_filter: bool = False
    warning: str = ""


@dataclass
class Sandbox:
    """How to wrap commands for one workspace."""

    workspace: str
    network: bool = False
    extra_writable: list[str] = field(default_factory=list)
    read_only: list[str] = field(default_factory=list)
    """More places kept read-only even when they lie in a writable root."""
    hidden: HiddenPaths | None = None
    """What the command must not see (None: the defaults and ``$BATON_HOME``)."""
    bwrap: str = "bwrap"
    socket_filter: bool = True
    """Install the seccomp filter (where :mod:`baton.tools.seccomp` knows the architecture)."""
    _worked_out: tuple[tuple[object, ...], RecordedFacts, tuple[str, ...]] | None = field(
        default=None, init=False, repr=False, compare=False)
    """The last arguments, what they were worked out from (settings, environment) and the file
    system answers they were worked out from."""

    def __post_init__(self) -> None:
        if self.hidden is None:
            self.hidden = hidden_paths()

    def writable_roots(self, facts: PathFacts | None = None) -> list[str]:
        """The workspace (given and real path) and any extra ones (existing only)."""
        facts = facts or PathFacts()
        out: list[str] = []
        for root in [self.workspace, facts.realpath(self.workspace), *self.extra_writable]:
            absolute = os.path.abspath(root)
            if facts.is_dir(absolute) and absolute not in out:
                out.append(absolute)
        return out

    def bwrap_args(self) -> list[str]:
        """bwrap and its options (what the file system looks like now decides the read-only
        binds: only paths that exist can be bound), without a working directory or command,
        and without the seccomp filter (a file descriptor, see :meth:`start`).

        Asked before every command: the arguments are worked out again only when the sandbox's
        settings, the environment they depend on, or the answer to one of the file system
        questions they were worked out from has changed (every question is asked again each
        time, see :mod:`baton.tools.path_facts`)."""
        inputs = self._inputs()
        last = self._worked_out
        if last is not None and last[0] == inputs and last[1].unchanged():
            return list(last[2])
        facts = RecordedFacts()
        args = self._bwrap_args(facts)
        self._worked_out = (inputs, facts, tuple(args))
        return args

    def _inputs(self) -> tuple[object, ...]:
        """Everything besides the file system that :meth:`_bwrap_args` depends on."""
        return (
            self.bwrap, os.path.abspath(self.workspace), self.network, self.hidden,
            tuple(os.path.abspath(p) for p in self.extra_writable), tuple(os.path.abspath(p) for p in self.read_only),
            os.geteuid(), os.getuid(), tempfile.gettempdir(),
            *(os.environ.get(name) for name in ("HOME", "TMPDIR", "XDG_RUNTIME_DIR")),
        )

    def _bwrap_args(self, facts: PathFacts) -> list[str]:
        args = [self.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        temp_dirs = _private_temp_dirs(self.workspace, facts)
        for temp in temp_dirs:
            args += ["--tmpfs", temp]
        roots = self.writable_roots(facts)
        for root in roots:
            args += ["--bind", root, root]
        for path in self._read_only_paths(roots, ["/tmp", *temp_dirs], facts):
            args += ["--ro-bind", path, path]
        args += self._hiding_args(facts)
        args += ["--unshare-pid", "--unshare-ipc", "--new-session"]
        if not self.network:
            args.append("--unshare-net")
        if os.geteuid() == 0:
            # bwrap run by root keeps root's capabilities: the command could remount / read-write
            # or read any process's memory. Unprivileged bwrap gives none outside its namespace.
            args += ["--cap-drop", "ALL"]
            for cap in ROOT_FILE_CAPABILITIES:
                args += ["--cap-add", cap]
        args.append("--die-with-parent")
        return args

    def filter_fd(self) -> int | None:
        """A pipe's read end holding the seccomp filter, for one bwrap's ``--seccomp`` (bwrap reads
        and closes its copy; the caller closes this one once bwrap has started), or None when
        there is no filter to install."""
        if not self.socket_filter:
            return None
        return filter_pipe()

    async def start(self, argv: list[str], cwd: str, env: Mapping[str, str], output_fd: int) -> StartedCommand:
        """Start ``argv`` in a fresh sandbox, in ``cwd``, stdout and stderr on ``output_fd``; the
        result's pid is the command's process group as baton sees it (see the module docstring)."""
        info_read, info_write = os.pipe()
        filter_fd = self.filter_fd()
        fds = [info_write, *([] if filter_fd is None else [filter_fd])]
        options = ["--info-fd", str(info_write), *([] if filter_fd is None else ["--seccomp", str(filter_fd)])]
        try:
            process = await asyncio.create_subprocess_exec(
                *self.bwrap_args(), *options, "--chdir", cwd, "--", *argv,
                stdin=subprocess.DEVNULL, stdout=output_fd, stderr=subprocess.STDOUT, cwd=cwd,
                env=sandbox_environment(env), start_new_session=True, pass_fds=fds,
            )
        except BaseException:
            os.close(info_read)
            raise
        finally:
            for fd in fds:
                os.close(fd)
        info = await read_bwrap_info(info_read)
        return FreshSandboxCommand(process, info.get("child-pid", process.pid))

    def detached_argv(self, argv: list[str], cwd: str) -> list[str]:
        """An argv that runs ``argv`` in a fresh sandbox when started by a process baton does not
        start itself (an editor's terminal, ACP): no descriptor can be handed over, so the seccomp
        filter is read from a private file of this process by a shell that then becomes bwrap.
        Give it :func:`sandbox_environment`'s variables."""
        options = ["--chdir", cwd, "--", *argv]
        program = _filter_program() if self.socket_filter else None
        if program is None:
            return [*self.bwrap_args(), *options]
        return ["/bin/sh", "-c", 'exec "$@" 3<"$0"', _filter_file(program), *self.bwrap_args(),
                "--seccomp", "3", *options]

    # ------------------------------------------------------------------ internals

    def _read_only_paths(self, roots: list[str], private: list[str], facts: PathFacts) -> list[str]:
        """Control files inside a writable root (kept read-only), and the git folders they point
        to when those lie in a writable root or in a private temp dir (bound read-only, so git
        still works)."""
        bases = list(dict.fromkeys((self.workspace, facts.realpath(self.workspace))))
        candidates: list[str] = []
        for base in bases:
            candidates += [os.path.join(base, name) for name in READ_ONLY_INSIDE if name != ".git"]
            candidates += git_control_paths(base, facts=facts)
            for folder in facts.subfolders(base):  # a workspace holding several repositories
                candidates += git_control_paths(folder, submodules=False, facts=facts)
        for ancestor in _ancestors(self.workspace, facts):  # the repository a workspace folder belongs to
            candidates += git_control_paths(ancestor, submodules=False, facts=facts)
        candidates += self.read_only
        out: list[str] = []
        for path in dict.fromkeys(candidates):
            if not facts.lexists(path):
                continue
            if any(_within(path, r) for r in roots) or any(_within(facts.realpath(path), p) for p in private):
                out.append(path)
        return out

    def _hiding_args(self, facts: PathFacts) -> list[str]:
        assert self.hidden is not None
        workspace = [os.path.abspath(self.workspace), facts.realpath(self.workspace)]
        folders: list[str] = []
        args: list[str] = []
        places = self.hidden.existing(facts) + _socket_places(workspace, facts)
        for path, is_dir in dict(places).items():
            if any(_within(w, path) for w in workspace):
                continue  # hiding it would hide the workspace
            if is_dir:
                args += ["--tmpfs", path]
                folders.append(path)
            else:
                args += ["--ro-bind", "/dev/null", path]
        for shown in dict.fromkeys(self.hidden.revealed):
            if any(_within(shown, f) for f in folders) and facts.is_dir(shown):
                args += ["--ro-bind", shown, shown]
        for folder in folders:
            args += ["--remount-ro", folder]
        return args


class FreshSandboxCommand:
    """A command in a sandbox of its own: bwrap's process, with the command's process group."""

    def __init__(self, process: asyncio.subprocess.Process, group: int) -> None:
        self._process = process
        self.pid: int | None = group

    @property
    def returncode(self) -> int | None:
        """bwrap's exit status: the command's (128 + N when a signal N ended it)."""
        return self._process.returncode

    async def wait(self) -> int | None:
        """Wait for the command to end."""
        return await self._process.wait()


def sandbox_environment(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` for a sandboxed command: no variable naming a local socket, temp dirs at ``/tmp``."""
    out = {k: v for k, v in env.items() if not _names_socket(k)}
    for name in TEMP_VARIABLES:
        if name in out:
            out[name] = "/tmp"
    out["TMPDIR"] = "/tmp"
    return out


@lru_cache(maxsize=1024)
def _names_socket(variable: str) -> bool:
    return variable in SOCKET_VARIABLES or variable.upper().endswith(("_SOCK", "_SOCKET"))


def filter_pipe() -> int | None:
    """A pipe's read end holding this machine's seccomp filter (None: no filter for this
    architecture)."""
    program = _filter_program()
    if program is None:
        return None
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, program)  # a few hundred bytes: fits the pipe's buffer
    finally:
        os.close(write_fd)
    return read_fd


@lru_cache(maxsize=1)
def _filter_program() -> bytes | None:
    return seccomp.program()


_filter_files: dict[bytes, str] = {}


def _filter_file(program: bytes) -> str:
    """A file holding ``program``, private to this user (made again if something removed it),
    removed when baton exits."""
    path = _filter_files.get(program)
    if path is not None and os.path.isfile(path):
        return path
    fd, path = tempfile.mkstemp(prefix="baton-seccomp-", suffix=".bpf")
    try:
        os.write(fd, program)
    finally:
        os.close(fd)
    if not _filter_files:
        atexit.register(_remove_filter_files)
    _filter_files[program] = path
    return path


def _remove_filter_files() -> None:
    for path in _filter_files.values():
        with contextlib.suppress(OSError):
            os.unlink(path)


def git_control_paths(base: str, *, submodules: bool = True, facts: PathFacts | None = None) -> list[str]:
    """``base/.git`` and what it points to (a worktree's or submodule's ``gitdir:``, its
    ``commondir``), and the same for the submodules ``base/.gitmodules`` names."""
    facts = facts or PathFacts()
    out: list[str] = []
    pending = [(base, 0)]
    while pending and len(out) < _SUBMODULE_LIMIT:
        folder, depth = pending.pop()
        dot_git = os.path.join(folder, ".git")
        if not facts.lexists(dot_git):
            continue
        out.append(dot_git)
        pointer = facts.pointer_text(dot_git)
        if pointer is not None and pointer.startswith("gitdir:"):
            gitdir = facts.realpath(os.path.join(folder, pointer[len("gitdir:"):].strip()))
            out.append(gitdir)
            common = facts.pointer_text(os.path.join(gitdir, "commondir"))
            if common:
                out.append(facts.realpath(os.path.join(gitdir, common.strip())))
        if submodules and depth < 3:
            pending += [(os.path.join(folder, sub), depth + 1) for sub in _submodule_paths(folder, facts)]
    return list(dict.fromkeys(out))


def bound_paths_identity(bwrap_args: list[str]) -> tuple[tuple[str, int, int], ...]:
    """Device and inode of every path ``bwrap_args`` binds: a long-lived sandbox still shows
    what was there when it started, so a path replaced since (``.git`` recreated) needs a new one."""
    identity: list[tuple[str, int, int]] = []
    for flag, source in itertools.pairwise(bwrap_args):
        if flag in ("--bind", "--ro-bind"):
            try:
                info = os.lstat(source)
            except OSError:
                identity.append((source, -1, -1))
            else:
                identity.append((source, info.st_dev, info.st_ino))
    return tuple(identity)


def find_bwrap() -> str | None:
    """The bwrap executable, if installed."""
    return shutil.which("bwrap")


@lru_cache(maxsize=1)
def probe() -> SandboxStatus:
    """Whether bubblewrap works here, and whether it can install the socket filter (cached for
    the process)."""
    if not os.path.isdir("/proc") or os.uname().sysname != "Linux":
        return SandboxStatus(False, "the sandbox needs Linux (bubblewrap)")
    path = find_bwrap()
    if path is None:
        return SandboxStatus(False, "bubblewrap (bwrap) is not installed")
    sandbox = Sandbox(tempfile.gettempdir(), bwrap=path, hidden=HiddenPaths(()))
    failure = _try_start(sandbox, with_filter=True)
    if failure is None:
        if _filter_program() is not None:
            return SandboxStatus(True, "", path, socket_filter=True)
        warning = (f"the sandbox cannot block Unix sockets on {seccomp.machine()} (no seccomp filter for it): "
                   "a sandboxed command can reach local services such as an SSH agent or docker.sock")
        return SandboxStatus(True, "", path, warning=warning)
    if _filter_program() is not None and _try_start(sandbox, with_filter=False) is None:
        warning = (f"the sandbox cannot block Unix sockets here (bwrap could not install the seccomp filter: "
                   f"{failure}): a sandboxed command can reach local services such as an SSH agent")
        return SandboxStatus(True, "", path, warning=warning)
    return SandboxStatus(False, f"bwrap failed to start ({failure})")


def _try_start(sandbox: Sandbox, *, with_filter: bool) -> str | None:
    """None when a trivial command runs in ``sandbox``, else why not."""
    filter_fd = sandbox.filter_fd() if with_filter else None
    options = ["--seccomp", str(filter_fd)] if filter_fd is not None else []
    argv = [*sandbox.bwrap_args(), *options, "--", "/bin/sh", "-c", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False,
                              pass_fds=() if filter_fd is None else (filter_fd,))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    finally:
        if filter_fd is not None:
            os.close(filter_fd)
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return detail[-1] if detail else f"exit status {done.returncode}"
    return None


def looks_like_denial(output: str) -> bool:
    """Whether a failed command's output suggests the sandbox blocked it."""
    return _DENIAL.search(output) is not None


# ---------------------------------------------------------------------------------------------


def _private_temp_dirs(workspace: str, facts: PathFacts) -> list[str]:
    """The host's temp dirs other than ``/tmp`` (``$TMPDIR``) that get a private tmpfs: not one
    holding the home folder, nor one inside the workspace."""
    home = facts.realpath(os.path.expanduser("~"))
    real_ws = facts.realpath(workspace)
    out: list[str] = []
    for candidate in (tempfile.gettempdir(), os.environ.get("TMPDIR") or ""):
        if not candidate or not facts.is_dir(candidate):
            continue
        real = facts.realpath(candidate)
        if real in ("/", "/tmp") or _within(home, real) or _within(real, real_ws) or _within(real, "/tmp"):
            continue
        if real not in out:
            out.append(real)
    return out


def _socket_places(workspace: list[str], facts: PathFacts) -> list[tuple[str, bool]]:
    uid = os.getuid()
    places = [p.format(uid=uid) for p in SOCKET_PLACES]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        places.append(runtime)
    out: list[tuple[str, bool]] = []
    for place in places:
        if _within(place, "/tmp") and not any(_within(place, w) for w in workspace):
            continue  # the private /tmp does not show it
        mode = facts.stat_mode(place)
        if mode is not None:
            out.append((facts.realpath(place), stat.S_ISDIR(mode)))
    return out


def _ancestors(path: str, facts: PathFacts) -> list[str]:
    """The folders above ``path`` (real path), nearest first."""
    out: list[str] = []
    current = os.path.dirname(facts.realpath(path))
    while True:
        out.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            return out
        current = parent


def _submodule_paths(folder: str, facts: PathFacts) -> list[str]:
    text = facts.gitmodules_text(os.path.join(folder, ".gitmodules"))
    if not text:
        return []
    out: list[str] = []
    for line in text.splitlines():
        key, _, value = line.strip().partition("=")
        if key.strip() == "path" and value.strip():
            relative = os.path.normpath(value.strip())
            if not os.path.isabs(relative) and not relative.startswith(".."):
                out.append(relative)
    return out[:_SUBMODULE_LIMIT]


async def read_bwrap_info(fd: int) -> dict[str, int]:
    """What bwrap wrote on ``--info-fd`` (``child-pid``: its child outside the sandbox, the
    namespace's init; ``pid-namespace``...), once it closed it; closes ``fd``."""
    data = await _read_to_end(fd)
    try:
        info = json.loads(data.decode("utf-8", "replace") or "{}")
    except ValueError:
        return {}
    if not isinstance(info, dict):
        return {}
    return {k: v for k, v in info.items() if isinstance(k, str) and isinstance(v, int) and v > 1}


async def wait_ready(fd: int, *, write: bool = False) -> None:
    """Wait until ``fd`` (non-blocking) can be read, or written."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    if write:
        loop.add_writer(fd, wake)
    else:
        loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        if write:
            loop.remove_writer(fd)
        else:
            loop.remove_reader(fd)


async def _read_to_end(fd: int, limit: int = 65536) -> bytes:
    """What a pipe holds until its writers close it (at most ``limit`` bytes); closes ``fd``."""
    chunks: list[bytes] = []
    size = 0
    try:
        os.set_blocking(fd, False)
        while size < limit:
            try:
                chunk = os.read(fd, 4096)
            except BlockingIOError:
                await wait_ready(fd)
                continue
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
