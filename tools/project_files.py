"""Which files a project may make baton read, and reading them.

A repository is data until trusted, and that includes its symlinks: ``AGENTS.md`` pointing at
``~/.ssh/id_rsa`` or ``.baton/APPEND_SYSTEM.md`` at ``$BATON_HOME/models.json`` would send those
files to the provider in the system prompt. So a file baton reads from a project (context files,
``.baton/SYSTEM.md`` and ``APPEND_SYSTEM.md``, skills, prompt templates, agents and command files,
``.baton/settings.json``, ``.mcp.json``) is read only when its real path

- lies inside the project (the git work tree holding the working directory, else the working
  directory itself; a file found in a folder above the project, such as ``~/AGENTS.md``, must
  stay inside the folder it was found in), and
- lies outside ``$BATON_HOME`` and the credential stores (``~/.ssh``, ``~/.aws``, ...).

A refused file is not read at all; the caller reports one warning naming it. Files found in the
user's own places (``$BATON_HOME``, ``~/.agents``, ``~/.claude``) are the user's and are read
wherever they point. Every file is read as :mod:`baton.providers.bounded_read` reads: a regular
file (never a FIFO or device), at most a cap of bytes; a project file through folder handles along
its real path (:mod:`tools.anchored`), so what was checked is what is read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from baton.providers.bounded_read import FileRefusedError, read_regular
from baton.providers.paths import baton_home
from baton.tools.anchored import anchor
from baton.tools.hidden_paths import hidden_paths

USER_DIRS = (".agents", ".claude")
"""Relative to the home directory (besides ``$BATON_HOME``): the user's own skills and commands."""


class ProjectFileRefusedError(FileRefusedError):
    """A project's file whose real path leads outside the project or into a protected place."""


def _real(path: str | Path) -> str:
    return os.path.realpath(os.path.abspath(path))


def _within(path: str, root: str) -> bool:
    if root == "/":
        return True
    return path == root or path.startswith(root.rstrip("/") + "/")


def project_root(cwd: str | Path) -> str:
    """The project holding ``cwd`` (absolute, not resolved): the nearest folder at or above it
    with a ``.git``, else ``cwd`` itself."""
    start = os.path.abspath(cwd)
    current = start
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return start
        current = parent


@dataclass(frozen=True, slots=True)
class ProjectFiles:
    """The read policy for one working directory (see the module docstring)."""

    roots: tuple[str, ...]
    """The project, as reached from the working directory and as its real path."""
    user_dirs: tuple[str, ...]
    """Folders whose files are the user's (as given and as real paths)."""
    hidden: tuple[str, ...]
    """Real paths a project file may never lead into (``$BATON_HOME``, credential stores)."""

    @classmethod
    def for_dir(
        cls,
        cwd: str | Path,
        *,
        home: str | Path | None = None,
        baton_dir: str | Path | None = None,
        hidden: tuple[str, ...] = (),
    ) -> ProjectFiles:
        """The policy for ``cwd`` (``home``: the user's home, default ``~``; ``baton_dir``:
        default ``$BATON_HOME``; ``hidden``: more places no project file may lead into)."""
        user_home = str(home or Path.home())
        batons = str(baton_dir or baton_home())
        mine = [batons, *(os.path.join(user_home, name) for name in USER_DIRS)]
        # the sandbox's hidden places (credential stores, histories): one list for both walls
        protected = [batons, *hidden_paths(home=batons, user_home=user_home).places, *hidden]
        user_dirs = tuple(dict.fromkeys([os.path.abspath(p) for p in mine] + [_real(p) for p in mine]))
        root = project_root(cwd)
        roots = tuple(dict.fromkeys((root, _real(root))))
        return cls(roots, user_dirs, tuple(dict.fromkeys(_real(p) for p in protected)))

    @property
    def root(self) -> str:
        """The real path of the project."""
        return self.roots[-1]

    def is_users(self, path: str | Path) -> bool:
        """Whether ``path`` (as found, before symlinks) lies in one of the user's own folders."""
        lexical = os.path.abspath(path)
        return any(_within(lexical, place) for place in self.user_dirs)

    def refusal(self, path: str | Path) -> str | None:
        """Why the project file ``path`` must not be read (None: it may be)."""
        if self.is_users(path):
            return None
        lexical = os.path.abspath(path)
        real = _real(lexical)
        inside = any(_within(lexical, root) for root in self.roots)
        bound = self.root if inside else _real(os.path.dirname(lexical))
        if not _within(real, bound):
            where = "the project" if inside else "its folder"
            return f"it leads outside {where} (to {real})"
        place = next((p for p in self.hidden if _within(real, p)), None)
        if place is not None:
            return f"it leads into {place}, which a project may not read"
        return None

    def read(self, path: str | Path, limit: int, *, truncate: bool = False) -> bytes:
        """The bytes of ``path`` under this policy (see the module docstring). Raises
        ``FileNotFoundError``, :class:`ProjectFileRefusedError`, ``FileRefusedError`` (not a
        regular file, over ``limit`` without ``truncate``) and other ``OSError``s."""
        if self.is_users(path):
            return read_regular(path, limit, truncate=truncate)
        why = self.refusal(path)
        if why is not None:
            if not os.path.exists(path):
                raise FileNotFoundError(2, "No such file or directory", str(path))
            raise ProjectFileRefusedError(why)
        with anchor(_real(path)) as place:
            return read_regular(place.name, limit, dir_fd=place.dir_fd, follow=False, truncate=truncate)


def read_bounded(path: str | Path, limit: int, files: ProjectFiles | None, *, truncate: bool = False) -> bytes:
    """``files.read(...)`` when there is a policy, else a bounded read of a regular file."""
    if files is not None:
        return files.read(path, limit, truncate=truncate)
    return read_regular(path, limit, truncate=truncate)


def describe_refusal(exc: OSError) -> str:
    """The reason of a refused or unreadable file, for a one-line warning."""
    return str(exc.strerror or exc) if not isinstance(exc, FileRefusedError) else str(exc)
