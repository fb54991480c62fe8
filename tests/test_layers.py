"""The layering, read from the source with ``ast`` (docs/architecture.md, "The map of rooms").

providers ← agent ← tools ← sessions ← tui: a module imports only its own layer or those below it
(the root ``baton`` package may be imported by anyone); the modules' top-level imports form no cycle;
only ``tui`` imports textual. That print mode does not load textual at run time is proven in
tests/tui/test_cli_e2e.py.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("providers", "agent", "tools", "sessions", "tui")


def _modules() -> dict[str, Path]:
    """Every module of the installed package by dotted name, as setuptools' package-dir maps them."""
    root = ROOT / "tui" / "_baton"
    found = {"baton": root / "__init__.py", "baton.__main__": root / "__main__.py"}
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            if "_baton" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(("baton", *parts[:-1])) if parts[-1] == "__init__" else ".".join(("baton", *parts))
            found[name] = path
    return found


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The dotted names one import statement of ``module`` loads."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*anchor, base] if base else anchor)
    for alias in node.names:
        # `from pkg import mod` loads the submodule when there is one.
        yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base


def _all_imports(module: str, tree: ast.Module) -> Iterator[str]:
    """Every name ``module`` imports anywhere, lazily inside functions included."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield from _targets(module, node)


def _import_time_imports(module: str, nodes: list[ast.stmt]) -> Iterator[str]:
    """The names imported while ``module`` itself is being imported (not under ``TYPE_CHECKING``)."""
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield from _targets(module, node)
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _import_time_imports(module, node.body)
            yield from _import_time_imports(module, node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _import_time_imports(module, block)


TREES = {name: ast.parse(path.read_text(encoding="utf-8"), str(path)) for name, path in MODULES.items()}


def _layer(module: str) -> int:
    """The layer's rank (0 = providers); -1 for the root package, which every layer may use."""
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else -1


def test_the_source_tree_is_found() -> None:
    assert {"baton.providers.transport", "baton.agent.agent", "baton.tools.bash", "baton.sessions.store",
            "baton.tui.app.baton_app", "baton"} <= MODULES.keys()


@pytest.mark.parametrize("layer", LAYERS)
def test_no_module_imports_a_layer_above_its_own(layer: str) -> None:
    upward = sorted(
        f"{module} imports {target}"
        for module, tree in TREES.items() if _layer(module) == LAYERS.index(layer)
        for target in _all_imports(module, tree)
        if target.startswith("baton.") and _layer(target) > _layer(module)
    )
    assert upward == []


def test_only_the_tui_imports_textual() -> None:
    outside = sorted(
        f"{module} imports {target}"
        for module, tree in TREES.items() if _layer(module) != LAYERS.index("tui")
        for target in _all_imports(module, tree)
        if target == "textual" or target.startswith("textual.")
    )
    assert outside == []


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path (first node repeated at the end), or None."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    path: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*path[path.index(target):], target]
            if target not in state and (found := walk(target)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := walk(node)):
            return found
    return None


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_top_level_imports_form_no_cycle() -> None:
    graph = {
        module: {target for target in _import_time_imports(module, tree.body) if target in MODULES} - {module}
        for module, tree in TREES.items()
    }
    assert _cycle(graph) is None


def _room(module: str) -> str | None:
    """The room of the top floor a module lives in (``cli``, ``modes``, ``app``, ``actions``), or None."""
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[:2] == ["baton", "tui"] else None


def _draws(target: str) -> bool:
    return target == "textual" or target.startswith(("textual.", "baton.tui.app"))


def test_the_modes_never_draw() -> None:
    """print, JSON, RPC and ACP modes import neither textual nor the app, not even lazily."""
    drawing = sorted(
        f"{module} imports {target}"
        for module, tree in TREES.items() if _room(module) == "modes"
        for target in _all_imports(module, tree) if _draws(target)
    )
    assert drawing == []


def test_the_command_line_loads_the_app_only_when_it_runs_it() -> None:
    """The CLI imports the app (and textual) only inside the functions that start it, so
    ``--version``, ``-p`` and the protocol modes never pay for it; the root shared modules never."""
    eager = sorted(
        f"{module} imports {target}"
        for module, tree in TREES.items()
        if _room(module) == "cli" or (module.count(".") == 2 and module.startswith("baton.tui."))
        for target in _import_time_imports(module, tree.body) if _draws(target)
    )
    assert eager == []


def test_the_actions_belong_to_no_front_end() -> None:
    """tui/actions (what a user asks of a session, shared by the app, RPC and ACP) imports neither
    textual, the app, a mode nor the CLI, not even lazily: every front end may import it."""
    wrong = sorted(
        f"{module} imports {target}"
        for module, tree in TREES.items() if _room(module) == "actions"
        for target in _all_imports(module, tree)
        if _draws(target) or target.startswith(("baton.tui.modes", "baton.tui.cli"))
    )
    assert wrong == []
