"""The shape of the code, in the figures the house issue asks for: import circles (imports inside
functions counted), the largest modules and classes, radon's complexity grades, and how much of
the code says ``Any``.

    python benchmarks/code_shape.py            # the figures
    python benchmarks/code_shape.py --detail   # and what each figure is made of

Complexity grades need radon (``pip install radon``; a test dependency). Only the five layers
count (not tests/ or benchmarks/).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("providers", "agent", "tools", "sessions", "tui")


def modules() -> dict[str, Path]:
    """Every module of the installed package by dotted name (setuptools' package-dir mapping)."""
    found = {"baton": ROOT / "tui" / "_baton" / "__init__.py"}
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            if "_baton" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(("baton", *parts[:-1])) if parts[-1] == "__init__" else ".".join(("baton", *parts))
            found[name] = path
    return found


def _imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """Every baton module ``name`` imports, anywhere in the file (inside functions too), but not
    under ``if TYPE_CHECKING``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for child in node.body for n in ast.walk(child))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name and target.startswith("baton"):
                yield target


def import_circles(known: dict[str, Path]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each sorted."""
    graph = {name: sorted(set(_imports(name, path, known))) for name, path in known.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(10_000)

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, []):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in graph:
        if node not in index:
            visit(node)
    return groups


def module_lengths(known: dict[str, Path]) -> list[tuple[int, str]]:
    """(lines, path) of every module, longest first."""
    return sorted(((len(p.read_text(encoding="utf-8").splitlines()), str(p.relative_to(ROOT)))
                   for p in known.values()), reverse=True)


def class_methods(known: dict[str, Path]) -> list[tuple[int, str]]:
    """(methods, class) of every class, most first."""
    out: list[tuple[int, str]] = []
    for path in known.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                count = sum(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) for n in node.body)
                out.append((count, f"{path.relative_to(ROOT)}::{node.name}"))
    return sorted(out, reverse=True)


def complexity(known: dict[str, Path]) -> dict[str, list[str]] | None:
    """Functions by radon grade D, E and F (None when radon is not installed)."""
    try:
        from radon.complexity import cc_rank, cc_visit
    except ImportError:
        return None
    grades: dict[str, list[str]] = {"D": [], "E": [], "F": []}
    for path in known.values():
        for block in cc_visit(path.read_text(encoding="utf-8")):
            rank = cc_rank(block.complexity)
            if rank in grades:
                grades[rank].append(f"{path.relative_to(ROOT)}:{block.lineno} {block.name} ({block.complexity})")
    return grades


def any_counts(known: dict[str, Path]) -> tuple[int, int]:
    """(occurrences of ``Any``, occurrences of ``dict[str, Any]``) in the layers."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in known.values())
    return len(re.findall(r"\bAny\b", text)), text.count("dict[str, Any]")


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--detail", action="store_true", help="list what each figure is made of")
    args = parser.parse_args()
    known = modules()
    circles = import_circles(known)
    lengths = module_lengths(known)
    methods = class_methods(known)
    grades = complexity(known)
    anys, dicts = any_counts(known)
    print(f"modules: {len(known)}")
    print(f"import circles (imports inside functions counted): {len(circles)}")
    print(f"largest module: {lengths[0][0]} lines ({lengths[0][1]})")
    print(f"largest class: {methods[0][0]} methods ({methods[0][1]})")
    if grades is None:
        print("complexity: radon is not installed (pip install radon)")
    else:
        print(f"functions graded E or F: {len(grades['E']) + len(grades['F'])}, graded D: {len(grades['D'])}")
    print(f"'Any': {anys}, 'dict[str, Any]': {dicts}")
    if args.detail:
        for group in circles:
            print("circle:", " -> ".join(group))
        for count, path in lengths[:8]:
            print(f"module {count:5d} {path}")
        for count, name in methods[:8]:
            print(f"class {count:3d} {name}")
        for grade, names in (grades or {}).items():
            for name in names:
                print(f"grade {grade} {name}")


if __name__ == "__main__":
    main()
