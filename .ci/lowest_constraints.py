"""Print a pip constraints file pinning every run-time dependency to its declared lower bound.

CI installs these in a second venv so the lower bounds in pyproject.toml are tested, not guessed.
"""

import re
import sys
import tomllib
from pathlib import Path


def lowest_pins(pyproject: Path) -> list[str]:
    """`name==lower` for each run-time dependency; every dependency must declare a `>=` bound."""
    deps = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    pins = []
    for dep in deps:
        match = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(?:\[[^\]]*\])?\s*.*?>=\s*([0-9][A-Za-z0-9.]*)", dep)
        if match is None:
            sys.exit(f"dependency without a lower bound: {dep!r}")
        pins.append(f"{match.group(1)}=={match.group(2)}")
    return pins


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    print("\n".join(lowest_pins(root / "pyproject.toml")))
