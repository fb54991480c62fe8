"""Package attributes imported on first use (PEP 562), so that entering a package stays cheap.

A package lists ``name -> module`` and sets ``__getattr__ = lazy_exports(__name__, globals(), EXPORTS)``;
``from baton.tools import ReadTool`` then imports ``baton.tools.read`` only when asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, namespace: dict[str, object], exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``exports[name]`` on first access and caches it."""

    def __getattr__(name: str) -> Any:  # a module attribute: its type is the export's own
        module_name = exports.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module_name), name)
        namespace[name] = value
        return value

    return __getattr__
