"""Files holding a key the model saw as ``[redacted]``: never overwritten with the marker.

Every tool result is redacted (:mod:`agent.redaction`), so a model that reads a ``.env`` holding
the user's key sees ``OPENAI_API_KEY=[redacted]``. Writing that text back would replace the real
key with the literal marker: the user's key lost, silently. ``write`` and ``edit`` therefore
refuse a change that adds the marker to a file that holds a configured key value (in any form the
redactor knows, :mod:`providers.redact`):

* the new content holds :data:`~providers.redact.REDACTED` more times than the current one, and
* the current content holds a configured key value.

A new file, or one without a key, takes the marker freely (a file that documents redaction, a
log); a file with a key may be changed anywhere else. An ``oldText`` copied from what the model
saw (with the marker) cannot match the real text: :func:`hidden_value_miss` explains that rather
than a plain "not found".
"""

from __future__ import annotations

from collections.abc import Iterable

from baton.providers.redact import REDACTED, secret_matcher

_HOW = (f"To change this file, edit only the other lines: use edit with oldText and newText that do not "
        f"include {REDACTED} (the hidden value stays as it is).")


def holds_hidden_value(text: str) -> bool:
    """Whether ``text`` holds a configured key value (which the model saw as the marker)."""
    try:
        matcher = secret_matcher()
        return bool(matcher) and bool(matcher.spans(text))
    except Exception:  # no matcher, no key to protect: never fail a write over it
        return False


def adds_marker_over_hidden_value(old: str | None, new: str) -> bool:
    """Whether writing ``new`` over ``old`` (``None``: no file yet) would put the marker where
    the file holds a key (see the module docstring)."""
    if old is None or REDACTED not in new:
        return False
    return new.count(REDACTED) > old.count(REDACTED) and holds_hidden_value(old)


def refusal(path: str) -> str:
    """What the model reads when its change would replace a hidden value by the marker."""
    return (f"Not written: {path} holds a value that was hidden from you as {REDACTED} (a key baton "
            f"keeps from the model); this change would put the text {REDACTED} in its place and lose the "
            f"real value. {_HOW}")


def hidden_value_miss(path: str, content: str, old_texts: Iterable[str]) -> str | None:
    """The message for an edit whose ``oldText`` (copied from a redacted result) holds the marker
    that ``content`` does not hold there because the real key is; ``None`` for any other miss."""
    if not any(REDACTED in old and old not in content for old in old_texts):
        return None
    if not holds_hidden_value(content):
        return None
    return (f"Could not find the text in {path}: the file holds a hidden value where you see {REDACTED} "
            f"(a key baton keeps from the model), so an oldText that includes {REDACTED} never matches. "
            f"{_HOW}")
