"""What moving the conversation to another model costs: computed by running the real transform.

The preview goes through exactly the steps a request takes (``convert_to_llm`` then
``transform_messages`` with the target's tool-id normaliser and the configured thinking
handoff), so its counts are what the next request to that model will actually hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TypeVar

from baton.agent.messages import AgentMessage, convert_to_llm
from baton.providers.dispatch import id_normalizer_for
from baton.providers.json_types import JsonObject
from baton.providers.models import Model
from baton.providers.transform import AnyMessage, ThinkingHandoff, TransformReport, transform_messages
from baton.sessions.context_fit import compaction_note

R = TypeVar("R", bound=TransformReport)


@dataclass
class HandoffPreview(TransformReport):
    """Counts per kind of what the target model will lose or get changed (the fields of
    :class:`providers.transform.TransformReport`), for the target ``provider/id``."""

    target: str = ""
    context_tokens: int = 0
    """Tokens the conversation holds now (0: not measured)."""
    context_window: int = 0
    """The target's context window."""
    compaction: str | None = None
    """Set when the conversation does not fit the target's window, e.g. ``context 180k > 128k
    window: will be compacted first``."""

    @property
    def is_empty(self) -> bool:
        """True when nothing is lost or changed and the conversation fits."""
        return self.compaction is None and super().is_empty

    def summary(self) -> str:
        """The transform's summary, the compaction note first when there is one."""
        losses = super().summary()
        if self.compaction is None:
            return losses
        return self.compaction if losses == "nothing lost" else f"{self.compaction}; {losses}"

    def counts(self) -> dict[str, int]:
        """Every count by name."""
        return {f.name: getattr(self, f.name) for f in fields(TransformReport)}

    def to_dict(self) -> JsonObject:
        """JSON form (for JSON mode)."""
        return {
            "target": self.target,
            **self.counts(),
            "contextTokens": self.context_tokens,
            "contextWindow": self.context_window,
            "compaction": self.compaction,
            "summary": self.summary(),
        }


def handoff_preview(
    messages: Sequence[AgentMessage],
    model: Model,
    *,
    thinking_handoff: ThinkingHandoff = "text",
    context_tokens: int = 0,
    summarizer: Model | None = None,
    current: Model | None = None,
) -> HandoffPreview:
    """What a request to ``model`` with this history would lose or change. ``context_tokens``
    (the conversation's size now) adds a note when it exceeds the target's window;
    ``summarizer`` is the model that would compact it. With ``current`` (the model in use), only
    what the switch itself costs is counted: losses every model suffers alike (an aborted turn is
    skipped for the current model too) are not."""
    preview = HandoffPreview(
        target=model.ref,
        context_tokens=context_tokens,
        context_window=model.context_window,
        compaction=compaction_note(context_tokens, model, summarizer),
    )
    llm_messages = convert_to_llm(list(messages))
    _report(llm_messages, model, thinking_handoff, preview)
    if current is not None:
        baseline = _report(llm_messages, current, thinking_handoff, TransformReport())
        for f in fields(TransformReport):
            setattr(preview, f.name, max(0, getattr(preview, f.name) - getattr(baseline, f.name)))
    return preview


def _report(messages: Sequence[AnyMessage], model: Model, thinking_handoff: ThinkingHandoff, report: R) -> R:
    transform_messages(messages, model, id_normalizer_for(model), thinking_handoff=thinking_handoff, report=report)
    return report
