"""The ``baton`` command line entry point."""

from __future__ import annotations

import sys

VERSION = "0.1.0"


def main(argv: list[str] | None = None) -> int:
    """Run baton; returns the process exit code."""
    args = sys.argv[1:] if argv is None else argv
    if args in (["--version"], ["-V"]):
        print(f"baton {VERSION}")
        return 0
    print("baton: not implemented yet", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
