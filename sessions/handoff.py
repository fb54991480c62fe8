"""What moving the conversation to another model costs: computed by running the real transform.

The preview goes through exactly the steps a request takes (``convert_to_llm`` then
``transform_messages`` with the target's tool-id normaliser and the configured thinking
handoff), so its counts are what the next request to that model will actually hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from agent.messages import AgentMessage, convert_to_llm
from providers.models import Model
from providers.tool_ids import id_normalizer_for
from providers.transform import ThinkingHandoff, TransformReport, transform_messages


@dataclass(frozen=True, slots=True)
class HandoffPreview:
    """Counts per kind of what the target model will lose or get changed (see
    :class:`providers.transform.TransformReport` for each field)."""

    target: str
    """``provider/id`` of the target model."""
    thinking_as_text: int = 0
    thinking_dropped: int = 0
    redacted_dropped: int = 0
    signatures_dropped: int = 0
    images_replaced: int = 0
    tool_ids_rewritten: int = 0
    error_turns_skipped: int = 0
    aborted_turns_skipped: int = 0
    synthetic_results: int = 0
    orphan_results_dropped: int = 0

    @classmethod
    def from_report(cls, target: str, report: TransformReport) -> HandoffPreview:
        """A preview holding a transform report's counts."""
        known = {f.name for f in fields(cls)}
        return cls(target=target, **{k: v for k, v in asdict(report).items() if k in known})

    @property
    def report(self) -> TransformReport:
        """The counts as a :class:`TransformReport`."""
        known = {f.name for f in fields(TransformReport)}
        return TransformReport(**{k: v for k, v in self.counts().items() if k in known})

    def counts(self) -> dict[str, int]:
        """Every count by name."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "target"}

    @property
    def is_empty(self) -> bool:
        """True when the target receives the history without any loss or change."""
        return not any(self.counts().values())

    def summary(self) -> str:
        """e.g. ``12 thinking blocks sent as text, 3 signatures dropped, 1 image replaced``."""
        return self.report.summary()

    def to_dict(self) -> dict[str, Any]:
        """JSON form (for JSON mode)."""
        return {"target": self.target, **self.counts(), "summary": self.summary()}


def handoff_preview(
    messages: Sequence[AgentMessage], model: Model, *, thinking_handoff: ThinkingHandoff = "text"
) -> HandoffPreview:
    """What a request to ``model`` with this history would lose or change."""
    report = TransformReport()
    transform_messages(
        convert_to_llm(list(messages)),
        model,
        id_normalizer_for(model),
        thinking_handoff=thinking_handoff,
        report=report,
    )
    return HandoffPreview.from_report(model.ref, report)
