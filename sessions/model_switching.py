"""Which model a session talks to, how hard it thinks, and what a switch would change.

``session.models`` (:class:`SessionModels`) switches models idle or mid-run (the next model call
uses the new one; the transcript is never changed, the handoff transform projects it for each
request), remembers the thinking level the user asked for (a model without reasoning shows
``off``, switching back restores it), previews a handoff, and knows which models can be called
now — the ones compaction may summarise with when the current one cannot read the whole context.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.providers.models import Model, ThinkingLevel, clamp_thinking_level
from baton.sessions import context_fit
from baton.sessions.events import ModelChangeEvent, ThinkingLevelChangeEvent
from baton.sessions.handoff import HandoffPreview, HandoffPreviews
from baton.sessions.models import (
    ModelChoice,
    available_models,
    find_model,
    model_choices,
    next_in_cycle,
    parse_thinking_level,
    thinking_levels_for,
)

if TYPE_CHECKING:
    from baton.sessions.coding_session import CodingSession
    from baton.sessions.context import SessionContext


class SessionModels:
    """The model and thinking level of one session (see the module docstring)."""

    def __init__(self, session: CodingSession, requested_thinking: ThinkingLevel, key_provider: str) -> None:
        self._session = session
        self.requested_thinking: ThinkingLevel = requested_thinking
        """The level asked for, before clamping to what the model supports."""
        self.previous: Model | None = None
        """The model switched away from last (compaction may summarise with it)."""
        self._key_provider = key_provider
        """The provider ``SessionOptions.api_key`` is for (the starting model's)."""

    # ------------------------------------------------------------------ switching

    async def switch(self, model: Model) -> None:
        """Switch models (idle or mid-run: the next model call uses it). Records a
        ``model_change`` entry and clamps the thinking level to what the model supports."""
        session = self._session
        agent = session.agent
        previous = agent.model
        if model.same_model(previous.provider, previous.api, previous.id) and model == previous:
            return
        agent.model = model
        self.previous = previous
        session.store.append_model_change(model.provider, model.id)
        await session.events.emit(ModelChangeEvent(model, previous))
        level = clamp_thinking_level(model, self.requested_thinking)
        if level != agent.thinking:
            agent.thinking = level
            session.store.append_thinking_level_change(level)
            await session.events.emit(ThinkingLevelChangeEvent(level))

    async def cycle(self, direction: int = 1) -> Model | None:
        """Switch to the next favourite model (settings ``favorite_models``), or the next
        available one; ``None`` when there is nothing else to switch to."""
        extra = self._session.options.extra_models
        favorites = [find_model(ref, extra) for ref in self._session.settings.favorite_models]
        candidates = [m for m in favorites if m] or self.available()
        target = next_in_cycle(candidates, self._session.model, direction)
        if target is None:
            return None
        await self.switch(target)
        return target

    def set_thinking(self, level: ThinkingLevel) -> ThinkingLevel:
        """Set the thinking level (clamped to the model); returns the level in effect."""
        session = self._session
        self.requested_thinking = level
        effective = clamp_thinking_level(session.model, level)
        if effective != session.agent.thinking:
            session.agent.thinking = effective
            session.store.append_thinking_level_change(effective)
            session.events.emit_soon(ThinkingLevelChangeEvent(effective))
        return effective

    def cycle_thinking(self) -> ThinkingLevel:
        """The next thinking level the model supports (``off`` for models without reasoning)."""
        levels = thinking_levels_for(self._session.model)
        current = self._session.agent.thinking
        index = levels.index(current) if current in levels else -1
        return self.set_thinking(levels[(index + 1) % len(levels)])

    def restore(self, ctx: SessionContext) -> None:
        """Adopt a resumed branch's model and thinking level (when they are known here)."""
        agent = self._session.agent
        if ctx.model is not None:
            restored = find_model(f"{ctx.model[0]}/{ctx.model[1]}", self._session.options.extra_models)
            if restored is not None:
                agent.model = restored
        level = parse_thinking_level(ctx.thinking_level)
        if level is not None:
            self.requested_thinking = level
        agent.thinking = clamp_thinking_level(agent.model, self.requested_thinking)

    # ------------------------------------------------------------------ choosing

    def available(self) -> list[Model]:
        """Models that can be used now (keys present, local servers, extra models)."""
        return available_models(self._session.options.extra_models, self._session.model)

    def choices(self) -> list[ModelChoice]:
        """Every known model, usable ones first; the others name the API key they need."""
        return model_choices(self._session.options.extra_models, self._session.model)

    def handoff_preview(self, model: Model) -> HandoffPreview:
        """What the next request to ``model`` will lose or change that the current model keeps
        (and whether the conversation must be compacted first to fit its window)."""
        return self.handoff_previews().preview(model)

    def handoff_previews(self) -> HandoffPreviews:
        """:meth:`handoff_preview` for many targets (a model picker): the conversation as it is
        now, measured and converted once, each target transformed once."""
        session = self._session
        tokens = session.context_usage().tokens
        candidates = self.summarizer_candidates()
        return HandoffPreviews(
            session.agent.messages, session.model, thinking_handoff=session.settings.thinking_handoff,
            context_tokens=tokens,
            summarizer_for=lambda model: context_fit.choose_summarizer(tokens, model, candidates, self.can_call),
        )

    # ------------------------------------------------------------------ keys and reach

    def api_key(self, provider: str) -> str | None:
        """The key for ``provider``: the one the session was opened with (for the starting
        model's provider), else the environment's or ``models.json``'s."""
        given = self._session.options.api_key
        if given and provider == self._key_provider:
            return given
        from baton.providers.api_keys import get_api_key

        try:
            return get_api_key(provider)
        except Exception:
            return None

    def can_call(self, model: Model) -> bool:
        """True when a request to ``model`` can be made now (a key, a local server, or an
        in-process provider that needs none)."""
        if model.is_local or self.api_key(model.provider):
            return True
        from baton.providers.dispatch import resolve

        handler = resolve(model.api)
        return handler is not None and not hasattr(handler, "build_request")

    def summarizer_candidates(self) -> list[Model]:
        """Models that held this conversation: the previous model first, then those that
        answered on the branch (newest first)."""
        out = [self.previous] if self.previous is not None else []
        for provider, model_id in context_fit.models_on_branch(self._session.agent.messages):
            found = find_model(f"{provider}/{model_id}", [*self._session.options.extra_models, *out])
            if found is not None and found not in out:
                out.append(found)
        return out
