"""The workspace files a project's hook or MCP server command runs.

A trusted hook ``./scripts/lint.sh`` or server ``python tools/srv.py`` runs outside the sandbox,
but the model can rewrite those files. So what the user trusts includes their content: every
word of the command (``argv[0]`` and each argument, ``--flag=value`` values too) that names an
existing file inside the project, the file a task runner reads (``make`` → ``Makefile``,
``npm run`` → ``package.json``), and — since a script that appears later would run just the same —
the program and an interpreter's script even when they do not exist yet. Files those files load in
turn (a module a server imports) are not followed.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from baton.tools.file_pins import ABSENT, FilePin, file_digest

_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", ";;", "|&", "{", "}", "!"})
_WRAPPERS = frozenset({"exec", "env", "nohup", "time", "command", "builtin", "nice", "timeout", "xargs", "then",
                       "do", "else", "if", "while", "until"})
_INTERPRETERS = ("sh", "bash", "zsh", "dash", "ksh", "fish", "python", "pypy", "node", "deno", "bun", "ruby",
                 "perl", "php", "tsx", "ts-node", "lua", "Rscript", "osascript", "source", ".")
_RUNNER_FILES = {
    "make": ("Makefile", "makefile", "GNUmakefile"),
    "npm": ("package.json",), "pnpm": ("package.json",), "yarn": ("package.json",), "bun": ("package.json",),
    "just": ("justfile", "Justfile", ".justfile"),
    "rake": ("Rakefile",),
    "task": ("Taskfile.yml", "Taskfile.yaml"),
}
"""Task runners and the project file that says what they run (``make lint`` runs the Makefile's
recipe): pinned like a script the command names."""
_PROJECT_VARS = ("${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR")
MAX_FILES = 64
"""At most this many files are pinned per command (a command naming more is still trusted by
its text; the first ones named are the ones it runs)."""


@dataclass(frozen=True, slots=True)
class _Candidate:
    path: str
    runs: bool
    """The program itself or an interpreter's script: pinned even while it does not exist."""


def shell_command_pins(command: str, project: Path) -> tuple[FilePin, ...]:
    """Pins for the files a hook's shell command names (it runs in ``project``)."""
    text = command
    for var in _PROJECT_VARS:
        text = text.replace(var, str(project))
    return _pins(_split_simple(_shell_words(text)), project, project)


def _shell_words(text: str) -> list[str]:
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:  # unbalanced quotes: the shell would refuse it too; judge the words anyway
        return text.split()


def _split_simple(words: list[str]) -> list[_Candidate]:
    """The candidates of each simple command in a list of shell words."""
    found: list[_Candidate] = []
    simple: list[str] = []
    for word in [*words, ";"]:
        if word in _SEPARATORS:
            found += _argv_candidates(simple)
            simple = []
        else:
            simple.append(word)
    return found


def argv_pins(argv: list[str], project: Path, cwd: Path) -> tuple[FilePin, ...]:
    """Pins for the files an MCP server's ``command`` + ``args`` name (started in ``cwd``)."""
    return _pins(_argv_candidates(list(argv)), project, cwd)


def _argv_candidates(words: list[str]) -> list[_Candidate]:
    while words and (("=" in words[0] and not words[0].startswith(("=", "-", "/", ".")))
                     or os.path.basename(words[0]) in _WRAPPERS):
        words = words[1:]  # FOO=bar, env, exec, nohup ...: the program comes after them
    if not words:
        return []
    program = words[0]
    found = [_Candidate(program, runs="/" in program)]
    name = os.path.basename(program)
    found += [_Candidate(manifest, False) for manifest in _RUNNER_FILES.get(name, ())]
    interpreter = name in _INTERPRETERS or name.rstrip("0123456789.").rstrip("-") in _INTERPRETERS
    script_next = interpreter
    rest = iter(words[1:])
    for word in rest:
        if interpreter and word == "-m":  # python -m pkg.mod: the module's files in the project
            module = next(rest, "").replace(".", "/")
            found += [_Candidate(f"{module}.py", False), _Candidate(f"{module}/__main__.py", False)]
            script_next = False
        elif interpreter and word == "-c":  # sh -c 'cmd': the words of cmd
            words_of = _shell_words(next(rest, ""))
            found += _split_simple(words_of)
            script_next = False
        elif word.startswith("-"):
            if "=" in word:
                found.append(_Candidate(word.split("=", 1)[1], False))
        else:
            found.append(_Candidate(word, runs=script_next))
            script_next = False
    return found


def _pins(candidates: list[_Candidate], project: Path, cwd: Path) -> tuple[FilePin, ...]:
    root = os.path.realpath(project)
    pins: dict[str, FilePin] = {}
    for candidate in candidates:
        word = candidate.path
        if not word or "\0" in word or len(word) > 4096:
            continue
        path = os.path.normpath(os.path.join(cwd, os.path.expanduser(word)))
        inside = _within(path, root) or _within(path, os.path.abspath(project))
        if not inside and not _within(os.path.realpath(path), root):
            continue
        digest = file_digest(path)
        if digest == ABSENT and not candidate.runs:
            continue
        if digest != ABSENT and os.path.isdir(path):
            continue
        shown = os.path.relpath(path, project) if inside else path
        pins.setdefault(path, FilePin(path, shown, digest))
        if len(pins) >= MAX_FILES:
            break
    return tuple(pins.values())


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
