"""What moving the conversation to another model costs: computed by running the real transform.

The preview goes through exactly the steps a request takes (``convert_to_llm`` then
``transform_messages`` with the target's tool-id normaliser and the configured thinking
handoff), so its counts are what the next request to that model will actually hold.

A model picker previews every row it highlights: :class:`HandoffPreviews` converts the
conversation once, transforms it for the current model once (the baseline) and then once per
target, remembering each answer, so moving up and down a list costs one transform per target.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

from baton.agent.messages import AgentMessage, convert_to_llm
from baton.providers.dispatch import id_normalizer_for
from baton.providers.json_types import JsonObject
from baton.providers.messages import AssistantMessage, Message
from baton.providers.models import Model
from baton.providers.transform import ThinkingHandoff, TransformReport, transform_messages
from baton.sessions.context_fit import compaction_note


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
    compared_with: str = ""
    """The current model's ``provider/id`` when the counts are what changes compared with it."""

    @property
    def is_empty(self) -> bool:
        """True when nothing is lost or changed and the conversation fits."""
        return self.compaction is None and super().is_empty

    def summary(self) -> str:
        """The transform's summary (images said not to be sent), the compaction note first when
        there is one."""
        losses = super().summary()
        if self.images_replaced:
            many = "s" if self.images_replaced != 1 else ""
            losses = losses.replace(f"{self.images_replaced} image{many} replaced",
                                    f"{self.images_replaced} image{many} not sent (the model reads text only)")
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
            "comparedWith": self.compared_with or None,
            "summary": self.summary(),
        }


def _no_summarizer(model: Model) -> Model | None:
    return None


_SHARED_LOSSES = ("images_replaced", "error_turns_skipped", "aborted_turns_skipped", "synthetic_results",
                  "orphan_results_dropped")
"""Counts about the same blocks whichever model reads them: the target's minus the current model's."""


def _as_if_written_by(messages: Sequence[Message], current: Model, target: Model) -> list[Message]:
    """``messages`` with every assistant turn not written by ``current`` labelled as the target's:
    the target then treats only the current model's blocks as foreign — what a switch changes."""
    out: list[Message] = []
    for message in messages:
        if isinstance(message, AssistantMessage) and not (
            message.model == current.id and message.provider == current.provider and message.api == current.api
        ):
            message = message.model_copy(update={"provider": target.provider, "api": target.api, "model": target.id})
        out.append(message)
    return out


class HandoffPreviews:
    """The previews of one conversation as it stands, one transform per target, remembered.

    ``current`` is the model in use: only what a switch itself costs is counted (losses every
    model suffers alike, such as a skipped aborted turn, are not). ``context_tokens`` (the
    conversation's size now) adds a compaction note for a target whose window is smaller;
    ``summarizer_for(target)`` names the model that would compact it. Make a new one when the
    conversation changes.
    """

    def __init__(
        self,
        messages: Sequence[AgentMessage],
        current: Model | None = None,
        *,
        thinking_handoff: ThinkingHandoff = "text",
        context_tokens: int = 0,
        summarizer_for: Callable[[Model], Model | None] = _no_summarizer,
    ) -> None:
        self._messages: list[Message] = convert_to_llm(list(messages))
        self._current = current
        self._thinking_handoff = thinking_handoff
        self._context_tokens = context_tokens
        self._summarizer_for = summarizer_for
        self._baseline: TransformReport | None = None
        self._previews: dict[tuple[str, str, str], list[tuple[Model, HandoffPreview]]] = {}

    def preview(self, model: Model) -> HandoffPreview:
        """What a request to ``model`` would lose or change (computed on the first ask)."""
        bucket = self._previews.setdefault((model.provider, model.api, model.id), [])
        for known, preview in bucket:
            if known == model:
                return preview
        preview = self._compute(model)
        bucket.append((model, preview))
        return preview

    def _compute(self, model: Model) -> HandoffPreview:
        preview = HandoffPreview(
            target=model.ref,
            context_tokens=self._context_tokens,
            context_window=model.context_window,
            compaction=compaction_note(self._context_tokens, model, self._summarizer_for(model)),
        )
        current = self._current
        if current is None:
            self._transform(model, preview)
            return preview
        # Compared with now: the current model's own blocks the target would change (another
        # model's thinking is text for both, but the current model's becomes text only now —
        # a switch back to the model that wrote the older thinking included), plus the shared
        # losses the target adds.
        preview.compared_with = current.ref
        self._transform(model, preview, _as_if_written_by(self._messages, current, model))
        if self._baseline is None:
            self._baseline = self._transform(current, TransformReport())
        for name in _SHARED_LOSSES:
            setattr(preview, name, max(0, getattr(preview, name) - getattr(self._baseline, name)))
        return preview

    def _transform(self, model: Model, report: TransformReport,
                   messages: Sequence[Message] | None = None) -> TransformReport:
        transform_messages(list(messages if messages is not None else self._messages), model, id_normalizer_for(model),
                           thinking_handoff=self._thinking_handoff, report=report)
        return report


def handoff_preview(
    messages: Sequence[AgentMessage],
    model: Model,
    *,
    thinking_handoff: ThinkingHandoff = "text",
    context_tokens: int = 0,
    summarizer: Model | None = None,
    current: Model | None = None,
) -> HandoffPreview:
    """What a request to ``model`` with this history would lose or change (one preview of
    :class:`HandoffPreviews`; ``summarizer`` is the model that would compact the conversation)."""
    return HandoffPreviews(
        messages, current, thinking_handoff=thinking_handoff, context_tokens=context_tokens,
        summarizer_for=lambda target: summarizer,
    ).preview(model)
