"""What the terminal keeps after the interactive app exits: the last exchange and how to go on.

The app runs on the alternate screen, so without this the conversation vanishes from the
terminal at exit. Everything printed is plain text with control sequences stripped (model output
is untrusted).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from baton.tui.app.render import clean

_MAX_ANSWER_LINES = 40


def _text_of(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return "\n".join(getattr(block, "text", "") for block in content if getattr(block, "type", "") == "text")


def last_exchange(messages: list[Any]) -> tuple[str, str] | None:
    """The last user prompt and the final text answer after it (``None`` without a prompt)."""
    prompt_index = next((i for i in range(len(messages) - 1, -1, -1)
                         if getattr(messages[i], "role", None) == "user"), None)
    if prompt_index is None:
        return None
    answer = ""
    for message in messages[prompt_index + 1 :]:
        if getattr(message, "role", None) == "assistant" and _text_of(message).strip():
            answer = _text_of(message)
    return _text_of(messages[prompt_index]), answer


def exit_summary(session: Any, *, session_file: Any, session_id: str) -> str:
    """The lines printed to normal scrollback when the app exits."""
    lines: list[str] = []
    exchange = last_exchange(list(getattr(session, "messages", []) or []))
    if exchange is not None:
        prompt, answer = (clean(part).strip() for part in exchange)
        lines.append("› " + prompt.replace("\n", "\n  "))
        if answer:
            answer_lines = answer.split("\n")
            if len(answer_lines) > _MAX_ANSWER_LINES:
                hidden = len(answer_lines) - _MAX_ANSWER_LINES
                answer_lines = [f"… ({hidden} earlier lines)", *answer_lines[-_MAX_ANSWER_LINES:]]
            lines.extend(["", *answer_lines])
        lines.append("")
    # A session is written once it has messages: an empty one has no file to continue from
    # (``baton --session <id>`` would not find it and ``baton -c`` would open another).
    if session_file is not None and Path(session_file).is_file():
        lines.append(f"Session {session_id} saved. Continue with: baton -c   (or baton --session {session_id[:8]})")
    elif session_file is None and exchange is not None:
        lines.append("This session was not saved (--no-session).")
    return "\n".join(lines)
