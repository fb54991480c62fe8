"""Places a sandboxed command never sees and a file tool never reads unasked: baton's own home
(stored keys, every project's sessions) and the credential stores a coding task does not need.

Inside the sandbox each one that exists is covered by an empty mount (a read-only tmpfs for a
folder, ``/dev/null`` for a file); ``$BATON_HOME/tmp``, where bash leaves a command's full output
for the model to read, stays visible, read-only. Outside the sandbox the permission policy asks
before any file tool touches them (:mod:`baton.sessions.permissions.policy`). The
``sandbox.hiddenPaths`` setting adds places; only the user's own settings may take one of these
defaults away (``"!~/.npmrc"``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass

from baton.providers.paths import baton_home
from baton.tools.path_facts import PathFacts

DEFAULT_HIDDEN_PATHS = (
    # keys and agents
    "~/.ssh", "~/.gnupg", "~/.password-store", "~/.local/share/keyrings",
    # cloud and cluster credentials
    "~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube", "~/.oci", "~/.config/doctl",
    "~/.terraform.d/credentials.tfrc.json", "~/.vault-token", "~/.s3cfg", "~/.boto",
    "~/.config/rclone",
    # forges, registries and package indexes
    "~/.netrc", "~/.git-credentials", "~/.config/git/credentials", "~/.config/gh", "~/.config/hub",
    "~/.docker/config.json", "~/.config/containers/auth.json", "~/.npmrc", "~/.yarnrc.yml", "~/.pypirc",
    "~/.cargo/credentials", "~/.cargo/credentials.toml", "~/.gem/credentials",
    # databases
    "~/.pgpass", "~/.my.cnf",
    # other agents' keys and logins
    "~/.claude/.credentials.json", "~/.claude.json", "~/.pi/agent/auth.json", "~/.codex/auth.json",
    "~/.gemini/oauth_creds.json", "~/.config/github-copilot",
    # browser profiles (cookies are logins)
    "~/.mozilla", "~/.config/google-chrome", "~/.config/chromium", "~/.config/BraveSoftware",
    # shell and REPL histories (an `export TOKEN=...` typed once stays there)
    "~/.bash_history", "~/.zsh_history", "~/.histfile", "~/.local/share/fish/fish_history",
    "~/.python_history", "~/.node_repl_history", "~/.psql_history", "~/.mysql_history", "~/.sqlite_history",
)
"""Hidden unless the user's settings take them away (``~`` is the user's home)."""

REVEALED_IN_HOME = ("tmp",)
"""Inside ``$BATON_HOME``, what stays readable: the full output of commands (``tmp``)."""


@dataclass(frozen=True, slots=True)
class HiddenPaths:
    """The hidden places (absolute; each symlinked one also by its real path) and the places
    inside them that stay readable."""

    places: tuple[str, ...]
    revealed: tuple[str, ...] = ()

    def match(self, real: str) -> str | None:
        """The hidden place the real path ``real`` falls in (None when it is in none, or in a
        revealed place)."""
        if any(_within(real, shown) for shown in self.revealed):
            return None
        return next((place for place in self.places if _within(real, place)), None)

    def below(self, real: str) -> str | None:
        """An existing hidden place lying inside the folder ``real`` (what a recursive search of it
        would read), if any."""
        return next((place for place in self.places
                     if place != real and _within(place, real) and os.path.lexists(place)), None)

    def existing(self, facts: PathFacts | None = None) -> list[tuple[str, bool]]:
        """``(real path, is a folder)`` of every hidden place that exists, without repeats
        (``facts``: where the file system's answers come from)."""
        facts = facts or PathFacts()
        out: dict[str, bool] = {}
        for place in self.places:
            mode = facts.lstat_mode(place)
            if mode is not None and stat.S_ISLNK(mode):
                place = facts.realpath(place)
                mode = facts.stat_mode(place)
            if mode is not None:
                out.setdefault(place, stat.S_ISDIR(mode))
        return list(out.items())


def hidden_paths(
    added: Iterable[str] = (), removed: Iterable[str] = (), *, home: str | None = None, user_home: str | None = None
) -> HiddenPaths:
    """The defaults plus ``added`` minus ``removed`` (``~`` expanded), with ``home``
    (``$BATON_HOME``, default the current one) always hidden except its ``tmp``."""
    user = user_home or os.path.expanduser("~")
    dropped = {_expand(entry, user) for entry in removed}
    wanted = [_expand(entry, user) for entry in (*DEFAULT_HIDDEN_PATHS, *added)]
    baton = os.path.abspath(home or str(baton_home()))
    places: list[str] = []
    for place in [baton, *(p for p in wanted if p not in dropped)]:
        for variant in (place, os.path.realpath(place)):
            if variant not in places and variant != "/":
                places.append(variant)
    revealed = [os.path.join(base, name) for base in dict.fromkeys((baton, os.path.realpath(baton)))
                for name in REVEALED_IN_HOME]
    return HiddenPaths(tuple(places), tuple(revealed))


def _expand(entry: str, user_home: str) -> str:
    entry = entry.strip()
    if entry == "~" or entry.startswith("~/"):
        entry = user_home + entry[1:]
    return os.path.normpath(os.path.abspath(entry))


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
