"""Whether the conversation fits a model's context window, and who can compact it if not.

A switch to a model with a smaller window than the conversation already fills (a 180k-token
Claude session moved to a 128k model) must not send a request that is known to overflow, and
the compaction that makes room must run on a model that can read the whole context — the one
the conversation came from, when it can still be called — not on the model that cannot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from baton.agent.messages import AgentMessage
from baton.providers.errors import BatonError
from baton.providers.messages import AssistantMessage
from baton.providers.models import Model

CONTEXT_TOO_LARGE = "Not sent: the context (~{tokens} tokens) exceeds the context window of {model} ({window} tokens)"
"""The error a refused request ends with; "exceeds the context window" is an overflow phrase
(:mod:`providers.overflow`), so the session compacts and continues as after a real overflow."""


class ContextTooLargeError(BatonError):
    """A request was not sent because the context is known not to fit the model's window."""


def format_k(tokens: int) -> str:
    """``180k`` for 180_000 tokens (``950`` below a thousand)."""
    return f"{round(tokens / 1000)}k" if tokens >= 1000 else str(tokens)


def overflows(tokens: int, model: Model) -> bool:
    """True when ``tokens`` of context are known not to fit ``model`` (window 0: unknown)."""
    return model.context_window > 0 and tokens > model.context_window


def compaction_note(tokens: int, model: Model, summarizer: Model | None) -> str | None:
    """The preview's line about the window (``None`` when the context fits):
    ``context 180k > 128k window: will be compacted first``, plus who summarises."""
    if not overflows(tokens, model):
        return None
    note = f"context {format_k(tokens)} > {format_k(model.context_window)} window: will be compacted first"
    if summarizer is not None and summarizer.ref != model.ref:
        note += f" (summarised by {summarizer.ref})"
    elif summarizer is None:
        note += " (no available model can read it all: compaction may fail)"
    return note


def models_on_branch(messages: Sequence[AgentMessage]) -> list[tuple[str, str]]:
    """``(provider, model id)`` of the models that answered on the branch, newest first, each
    once (errored and aborted turns left out: they may never have read the context)."""
    seen: list[tuple[str, str]] = []
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.stop_reason not in ("error", "aborted"):
            key = (message.provider, message.model)
            if key not in seen:
                seen.append(key)
    return seen


def choose_summarizer(
    tokens: int,
    current: Model,
    candidates: Iterable[Model],
    can_call: Callable[[Model], bool],
) -> Model | None:
    """The model to compact with: ``current`` when it can read all ``tokens``, else the first
    callable candidate (the previous model first) whose window holds them; ``None`` when no
    model can read it all."""
    if not overflows(tokens, current):
        return current
    for model in candidates:
        if model.ref != current.ref and not overflows(tokens, model) and can_call(model):
            return model
    return None
