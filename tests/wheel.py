"""The built wheel, installed as a user would: build it, install it into a fresh venv beside a
distribution that ships its own top-level ``tools`` package, and run ``baton`` from a directory that
holds folders named ``tools/`` and ``agent/``.

``python -m tests.wheel`` runs the whole check (CI does); the pytest tests and
``benchmarks/bench_wheel.py`` use the pieces.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SQUATTER_MARKER = "tools from another distribution"


def build_wheel(out_dir: Path) -> Path:
    """Build baton's wheel into ``out_dir`` with ``python -m build`` and return its path."""
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out_dir), str(ROOT)],
                   check=True, capture_output=True, text=True)
    (wheel,) = out_dir.glob("baton_code-*.whl")
    return wheel


def wheel_top_levels(wheel: Path) -> set[str]:
    """The first path component of every file in the wheel."""
    with zipfile.ZipFile(wheel) as archive:
        return {name.split("/", 1)[0] for name in archive.namelist()}


def make_squatter(parent: Path) -> Path:
    """A tiny source distribution that installs a top-level ``tools`` package; returns its folder."""
    project = parent / "tools-squatter"
    (project / "tools").mkdir(parents=True)
    (project / "tools" / "__init__.py").write_text(f"MARKER = {SQUATTER_MARKER!r}\n")
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=77"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "tools-squatter"\nversion = "1.0"\n'
        '[tool.setuptools]\npackages = ["tools"]\n'
    )
    return project


def make_venv(path: Path, *requirements: str | Path) -> Path:
    """A fresh venv at ``path`` with ``requirements`` pip-installed; returns its ``bin`` folder."""
    venv.create(path, with_pip=True)
    bin_dir = path / "bin"
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", *map(str, requirements)],
                   check=True, capture_output=True, text=True)
    return bin_dir


def decoy_workdir(parent: Path) -> Path:
    """A project folder whose ``tools/`` and ``agent/`` packages fail loudly if anything imports them."""
    work = parent / "work"
    for name in ("tools", "agent"):
        (work / name).mkdir(parents=True)
        (work / name / "__init__.py").write_text(f"raise SystemExit('imported the project folder {name}/')\n")
    (work / "notes.txt").write_text("hello\n")
    return work


def clean_env(home: Path) -> dict[str, str]:
    """The environment for the installed program: private home, no provider keys, no Ollama."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "PYTHONPATH"}
    env.update({"BATON_HOME": str(home), "HOME": str(home), "OLLAMA_HOST": "127.0.0.1:9", "NO_COLOR": "1"})
    return env


def check(temp: Path) -> list[str]:
    """Build, install beside the squatter, run; the list of problems found (empty when all is well)."""
    problems = []
    wheel = build_wheel(temp / "dist")
    version_text = wheel.name.split("-")[1]
    if (extra := wheel_top_levels(wheel) - {"baton", f"baton_code-{version_text}.dist-info"}):
        problems.append(f"the wheel installs more than baton/: {sorted(extra)}")
    bin_dir = make_venv(temp / "venv", make_squatter(temp), wheel)
    home, work = temp / "home", decoy_workdir(temp)
    home.mkdir()
    env = clean_env(home)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(bin_dir / "baton"), *args], cwd=work, env=env, capture_output=True,
                              text=True, timeout=120, stdin=subprocess.DEVNULL)

    version = run("--version")
    if version.returncode != 0 or version.stdout.strip() != f"baton {version_text}":
        problems.append(f"baton --version: rc {version.returncode}, {version.stdout!r} {version.stderr!r}")
    listing = run("--model", "demo/baton-demo", "-p", "list files")
    if listing.returncode != 0 or "notes.txt" not in listing.stdout:
        problems.append(f"baton -p 'list files': rc {listing.returncode}, {listing.stdout!r} {listing.stderr!r}")
    squatter = subprocess.run([str(bin_dir / "python"), "-c", "import tools; print(tools.MARKER)"], cwd=temp,
                              capture_output=True, text=True)
    if squatter.stdout.strip() != SQUATTER_MARKER:
        problems.append(f"the other distribution's tools package was changed: {squatter.stdout!r}")
    if not problems:
        print(f"{wheel.name}: only baton/ installed; {version.stdout.strip()!r}; the demo listed "
              f"{listing.stdout.strip().count(chr(10)) + 1} lines; the other tools package intact")
    return problems


def main() -> int:
    """Run :func:`check` in a temporary folder and report."""
    with tempfile.TemporaryDirectory(prefix="baton-wheel-") as temp:
        problems = check(Path(temp))
    for problem in problems:
        print(f"wheel check: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
