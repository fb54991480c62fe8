"""``/tree`` as a drawn tree: branch lines, the current point marked, bookkeeping hidden.

The session's nodes (:func:`sessions.tree.build_tree`, depth first) become picker rows. Entries
that add nothing to the conversation (checkpoints, permission decisions, labels) are left out
unless asked for (``/tree all``); their children hang from the nearest shown ancestor, and when
the current leaf is one of them, that ancestor is marked current. A linear run of entries stays
in one column; each branch point draws its branches with ``├─`` / ``└─`` and ``│`` down the
side, so an abandoned branch reads as a branch.
"""

from __future__ import annotations

from collections.abc import Sequence

from baton.sessions.tree import TreeNode
from baton.tui.app.render import one_line
from baton.tui.app.widgets.pickers import PickerItem, picker_label


def visible_nodes(
    nodes: Sequence[TreeNode], show_all: bool
) -> tuple[list[TreeNode], dict[str, str | None], str | None]:
    """The nodes shown, each one's shown parent, and the id marked current."""
    by_id = {n.id: n for n in nodes}

    def shown_ancestor(node_id: str | None) -> str | None:
        seen: set[str] = set()
        while node_id is not None and node_id in by_id and node_id not in seen:
            seen.add(node_id)
            node = by_id[node_id]
            if show_all or not node.bookkeeping:
                return node_id
            node_id = node.parent_id
        return None

    shown = [n for n in nodes if show_all or not n.bookkeeping]
    parents = {n.id: shown_ancestor(n.parent_id) for n in shown}
    leaf = next((n for n in nodes if n.is_leaf), None)
    current = shown_ancestor(leaf.id) if leaf is not None else None
    return shown, parents, current


def tree_rows(nodes: Sequence[TreeNode], show_all: bool = False) -> list[tuple[str, TreeNode, bool]]:
    """``(branch lines, node, is current)`` in display order."""
    shown, parents, current = visible_nodes(nodes, show_all)
    children: dict[str | None, list[TreeNode]] = {}
    for node in shown:  # depth-first order: children stay in file order
        children.setdefault(parents[node.id], []).append(node)
    rows: list[tuple[str, TreeNode, bool]] = []
    roots = children.get(None, [])
    stack: list[tuple[TreeNode, str, str]] = []
    if len(roots) == 1:
        stack.append((roots[0], "", ""))
    else:
        stack.extend(_branches(roots, ""))
    while stack:
        node, first, rest = stack.pop()
        rows.append((first, node, node.id == current))
        kids = children.get(node.id, [])
        if len(kids) == 1:
            stack.append((kids[0], rest, rest))
        elif kids:
            stack.extend(_branches(kids, rest))
    return rows


def _branches(kids: list[TreeNode], rest: str) -> list[tuple[TreeNode, str, str]]:
    """Stack items for a branch point's children (reversed: the first is popped first)."""
    items = []
    for index, kid in enumerate(kids):
        last = index == len(kids) - 1
        items.append((kid, rest + ("└─ " if last else "├─ "), rest + ("   " if last else "│  ")))
    return list(reversed(items))


def tree_items(nodes: Sequence[TreeNode], width: int, show_all: bool = False) -> list[PickerItem[str]]:
    """``/tree`` rows for rows ``width`` cells wide: branch lines, marker, kind, preview (cut to fit),
    label, and ``← current`` on the current point."""
    items = []
    for lines, node, is_current in tree_rows(nodes, show_all):
        marker = "◆ " if is_current else ("● " if node.on_current_branch else "○ ")
        tag = f"  [{node.label}]" if node.label else ""
        here = "  ← current" if is_current else ""
        room = max(width - len(lines) - len(marker) - len(node.kind) - 1 - len(tag) - len(here), 20)
        label = picker_label((lines, "$text-muted"), (marker, "$text-accent"), (node.kind, "$text-muted"), " ",
                             one_line(node.preview, room), (tag, "$text-accent"), (here, "bold $text-accent"))
        items.append(PickerItem(label, node.id, f"{node.kind} {node.preview}"))
    return items
