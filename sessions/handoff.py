"""What moving the conversation to another model costs: computed by running the real transform.

The preview goes through exactly the steps a request takes (``convert_to_llm`` then
``transform_messages`` with the target's tool-id normaliser and the configured thinking
handoff), so its counts are what the next request to that model will actually hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from baton.agent.messages import AgentMessage, convert_to_llm
from baton.providers.models import Model
from baton.providers.tool_ids import id_normalizer_for
from baton.providers.transform import ThinkingHandoff, TransformReport, transform_messages


@dataclass
class HandoffPreview(TransformReport):
    """Counts per kind of what the target model will lose or get changed (the fields of
    :class:`providers.transform.TransformReport`), for the target ``provider/id``."""

    target: str = ""

    def counts(self) -> dict[str, int]:
        """Every count by name."""
        return {f.name: getattr(self, f.name) for f in fields(TransformReport)}

    def to_dict(self) -> dict[str, Any]:
        """JSON form (for JSON mode)."""
        return {"target": self.target, **self.counts(), "summary": self.summary()}


def handoff_preview(
    messages: Sequence[AgentMessage],
    model: Model,
    *,
    thinking_handoff: ThinkingHandoff = "text",
    current: Model | None = None,
) -> HandoffPreview:
    """What a request to ``model`` with this history would lose or change.

    With ``current`` (the model in use), only what the switch itself costs is counted: losses
    every model suffers alike (an aborted turn is skipped for the current model too) are not."""
    llm_messages = convert_to_llm(list(messages))
    preview = _report(llm_messages, model, thinking_handoff, HandoffPreview(target=model.ref))
    if current is not None:
        baseline = _report(llm_messages, current, thinking_handoff, TransformReport())
        for f in fields(TransformReport):
            setattr(preview, f.name, max(0, getattr(preview, f.name) - getattr(baseline, f.name)))
    return preview


def _report(messages: list[Any], model: Model, thinking_handoff: ThinkingHandoff, report: Any) -> Any:
    transform_messages(messages, model, id_normalizer_for(model), thinking_handoff=thinking_handoff, report=report)
    return report
