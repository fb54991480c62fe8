"""Looking for a key in everything a test can see, in every form a command can print it in.

The forms are computed here, independently of ``providers.secret_forms``: the key itself, its
lower- and upper-cased forms, URL-encoded, hex (lower and upper), and base64 in each of the three
alignments a key can have inside a longer stream, in the standard and URL-safe alphabets. A text
is searched with its line breaks removed (a key ``fold``-ed over lines still counts), and a JSON
document through its decoded strings (a line break inside a JSON string is ``\\n``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote


def encodings(key: str) -> dict[str, str]:
    """Every form of ``key`` a leak may take, by name."""
    data = key.encode()
    forms = {
        "raw": key, "lower": key.lower(), "upper": key.upper(), "url": quote(key, safe=""),
        "hex": data.hex(), "HEX": data.hex().upper(),
    }
    for offset in range(3):
        stream = base64.b64encode(b"\0" * offset + data).decode()
        core = stream[-(-8 * offset // 6): 8 * (offset + len(data)) // 6]
        forms[f"base64+{offset}"] = core
        forms[f"base64url+{offset}"] = core.replace("+", "-").replace("/", "_")
    return forms


def _strings(value: Any) -> Iterable[str]:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _texts(output: str) -> list[str]:
    """The output itself, and the decoded strings of every JSON line in it."""
    texts = [output]
    for line in output.splitlines():
        line = line.strip()
        if line[:1] in ("{", "["):
            try:
                texts.extend(_strings(json.loads(line)))
            except ValueError:
                pass
    return texts


def leaks(outputs: dict[str, str], key: str) -> list[str]:
    """``where: form`` for every form of ``key`` found in any of ``outputs`` (name -> text)."""
    found = []
    forms = encodings(key)
    for where, output in outputs.items():
        for text in _texts(output):
            flat = text.replace("\r", "").replace("\n", "")
            for name, form in forms.items():
                if form in flat:
                    found.append(f"{where}: {name}")
    return sorted(set(found))
