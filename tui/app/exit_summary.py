"""What the terminal keeps after the interactive app exits: the last exchange and how to go on.

The app runs on the alternate screen, so without this the conversation vanishes from the
terminal at exit. Everything printed is plain text with control sequences stripped (model output
is untrusted).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from baton.providers.messages import AssistantMessage, TextContent, UserMessage
from baton.tui.app.render import clean, format_cost, format_duration, format_tokens

if TYPE_CHECKING:
    from baton.agent.messages import AgentMessage
    from baton.sessions import CodingSession

_MAX_ANSWER_LINES = 40


def _text_of(message: UserMessage | AssistantMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(block.text for block in content if isinstance(block, TextContent))


def last_exchange(messages: Sequence[AgentMessage]) -> tuple[str, str] | None:
    """The last user prompt and the final text answer after it (``None`` without a prompt)."""
    prompts = [(i, m) for i, m in enumerate(messages) if isinstance(m, UserMessage)]
    if not prompts:
        return None
    index, prompt = prompts[-1]
    answer = ""
    for message in messages[index + 1 :]:
        if isinstance(message, AssistantMessage) and _text_of(message).strip():
            answer = _text_of(message)
    return _text_of(prompt), answer


def spend_line(session: CodingSession, duration: float | None) -> str | None:
    """``Cost $0.0123 · 12k tokens · 3m05s`` (``None`` before any model call and without a duration)."""
    stats = session.stats()
    parts: list[str] = []
    if stats.assistant_messages:
        parts.append(f"Cost {format_cost(stats.cost)} · {format_tokens(stats.total_tokens)} tokens")
    if duration is not None:
        parts.append(format_duration(duration))
    return " · ".join(parts) or None


def exit_summary(
    session: CodingSession, *, session_file: Path | str | None, session_id: str, duration: float | None = None
) -> str:
    """The lines printed to normal scrollback when the app exits (``duration``: seconds the app ran)."""
    lines: list[str] = []
    exchange = last_exchange(session.messages)
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
    spend = spend_line(session, duration)
    if spend is not None:
        lines.append(spend)
    # A session is written once it has messages: an empty one has no file to continue from
    # (``baton --session <id>`` would not find it and ``baton -c`` would open another).
    if session_file is not None and Path(session_file).is_file():
        lines.append(f"Session {session_id} saved. Continue with: baton -c   (or baton --session {session_id[:8]})")
    elif session_file is None and exchange is not None:
        lines.append("This session was not saved (--no-session).")
    return "\n".join(lines)
