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
from baton.providers.dispatch import id_normalizer_for
from baton.providers.models import Model
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
    messages: Sequence[AgentMessage], model: Model, *, thinking_handoff: ThinkingHandoff = "text"
) -> HandoffPreview:
    """What a request to ``model`` with this history would lose or change."""
    preview = HandoffPreview(target=model.ref)
    transform_messages(
        convert_to_llm(list(messages)),
        model,
        id_normalizer_for(model),
        thinking_handoff=thinking_handoff,
        report=preview,
    )
    return preview
