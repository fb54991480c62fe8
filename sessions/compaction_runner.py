"""When and with which model a session compacts (the summary itself: :mod:`sessions.compaction`).

A session compacts on ``/compact`` (``manual``), after a run that left the context past the
threshold (``threshold``), and after a request the model refused for its size (``overflow``,
then the request is retried). Before a prompt, a context already past the threshold is compacted
first. A request whose context is known not to fit the model is never sent
(:meth:`SessionCompaction.refuse_known_overflow`, the agent's ``transform_context``): its error is
an overflow, so the session compacts and continues. The summariser is the current model when it
can read the whole context, else one that held it (:mod:`sessions.context_fit`).

A compaction always aims at a context that fits the current model: the summary gets at most a
quarter of the window, and when the recent part kept verbatim does not fit either (the branch
ends with a large tool result), its largest tool results are cut in the context — the session
file keeps them whole (:mod:`sessions.context_cut`). When the usual budget leaves nothing to
summarise but the context does not fit, or the user gave ``/compact`` a focus, everything up to
the last message is summarised.

Each of these decisions counts exactly (tiktoken) when the context could be near the line: while
an upper bound of the context (the reported usage plus the UTF-8 length of what came after it)
stays below the threshold, no count can reach it, so the tokenizer is not loaded
(:meth:`SessionCompaction.count_exactly_if_near`); a compaction always counts exactly.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from baton.agent.messages import AgentMessage
from baton.providers.messages import AssistantMessage
from baton.providers.models import Model
from baton.sessions import compaction as compaction_mod
from baton.sessions import context_cut, context_fit
from baton.sessions.compaction import CompactionAborted, CompactionPreparation, CompactionResult
from baton.sessions.entries import CompactionEntry
from baton.sessions.errors import CompactionError, NothingToCompactError
from baton.sessions.events import AutoCompactionEndEvent, AutoCompactionStartEvent, CompactionReason
from baton.sessions.tokens import (
    count_text_tokens,
    load_tokenizer,
    message_token_bound,
    text_token_bound,
    tokenizer_ready,
)

if TYPE_CHECKING:
    from baton.sessions.coding_session import CodingSession

logger = logging.getLogger(__name__)


class SessionCompaction:
    """Runs compactions for one session (see the module docstring)."""

    def __init__(self, session: CodingSession) -> None:
        self._session = session

    async def run(
        self,
        reason: CompactionReason,
        *,
        will_retry: bool,
        focus: str | None = None,
        raise_errors: bool = False,
    ) -> CompactionResult | None:
        """Compact the current branch now, with events; ``None`` when there was nothing to do,
        it was aborted or it failed (``raise_errors``: raise instead)."""
        session = self._session
        await load_tokenizer()  # cut points, budgets and the summariser's fit: exact counts
        try:
            preparation = self._prepare(focus)
        except NothingToCompactError:
            if raise_errors:
                raise
            return None
        await session.extensions.pre_compact(reason, focus)
        await session.events.emit(AutoCompactionStartEvent(reason))
        try:
            result = await self._summarize(preparation, focus)
        except CompactionAborted as exc:
            await session.events.emit(AutoCompactionEndEvent(None, aborted=True))
            if raise_errors:
                raise
            logger.info("compaction aborted: %s", exc)
            return None
        except (CompactionError, OSError) as exc:
            message = str(exc) if isinstance(exc, CompactionError) else f"Could not save the compaction: {exc}"
            await session.events.emit(AutoCompactionEndEvent(None, error_message=message))
            if raise_errors:
                raise CompactionError(message) from exc
            return None
        messages = session.store.build_context().messages
        last = messages[-1] if messages else None
        if will_retry and isinstance(last, AssistantMessage) and last.stop_reason == "error":
            messages = messages[:-1]  # the overflowing request is retried, without its error
        session.agent.replace_messages(messages)
        await session.events.emit(AutoCompactionEndEvent(result, will_retry=will_retry))
        return result

    def _prepare(self, focus: str | None) -> CompactionPreparation:
        """What to summarise: the usual budget first; everything up to the last message when
        that leaves nothing but the user asked with a focus or the context does not fit."""
        session = self._session
        path = session.store.branch_path()
        settings, window = session.settings.compaction, session.model.context_window
        try:
            return compaction_mod.prepare_compaction(path, settings, window)
        except NothingToCompactError:
            if not focus and not context_fit.overflows(session.context_usage().tokens, session.model):
                raise
            return compaction_mod.prepare_compaction(path, settings, window, keep_recent_tokens=0)

    async def _summarize(self, preparation: CompactionPreparation, focus: str | None) -> CompactionResult:
        """Summarise and record the compaction entry (raises :class:`CompactionAborted` after an abort)."""
        session = self._session
        signal = session.abort_signal
        summarizer = self.summarizer_for(preparation)
        summary_tokens, kept_budget = self._budgets()
        result = await compaction_mod.compact(
            preparation,
            summarizer,
            session.settings.compaction,
            api_key=session.models.api_key(summarizer.provider),
            focus=focus,
            signal=signal,
            summary_tokens=summary_tokens,
        )
        if signal.is_set():
            raise CompactionAborted("Compaction aborted")
        if kept_budget is not None:
            cuts = context_cut.plan_cuts(preparation.kept_messages, kept_budget)
            result.details = context_cut.with_cuts(result.details, cuts)
        entry = session.store.append_compaction(
            result.summary, result.first_kept_entry_id, result.tokens_before, result.details
        )
        result.entry_id = entry.id
        return result

    def _configured_summarizer(self, preparation: CompactionPreparation) -> Model | None:
        """``compaction.model`` when set, resolvable, callable and able to read what it must."""
        session = self._session
        spec = session.settings.compaction.model
        if not spec:
            return None
        from baton.sessions.roles import RoleError, resolve_model_spec

        try:
            model = resolve_model_spec(spec, session.settings, session.model, session.options.extra_models)
        except RoleError:
            return None
        to_read = count_text_tokens(compaction_mod.serialize_conversation(
            [*preparation.messages_to_summarize, *preparation.turn_prefix_messages]
        ))  # what the summariser reads: long tool results are cut there
        if context_fit.overflows(to_read, model) or not session.models.can_call(model):
            return None
        return model

    def _budgets(self) -> tuple[int | None, int | None]:
        """``(summary cap, kept-part budget)`` in tokens for the current model's window (``None``:
        no limit). The summary gets at most a quarter of the window; the kept part what is left
        after the system prompt, the summaries and room to answer."""
        session = self._session
        window = session.model.context_window
        if window <= 0:
            return None, None
        reserve = session.settings.compaction.reserve_tokens
        summary_tokens = window // 4
        summaries = min(summary_tokens, reserve * 4 // 5) * 3 // 2  # a split turn's prefix summary: half more
        answer_room = min(reserve, window // 8)
        fixed = count_text_tokens(session.agent.system_prompt) + summaries + answer_room
        return summary_tokens, max(window - fixed, 0)

    def summarizer_for(self, preparation: CompactionPreparation) -> Model:
        """The model to compact with: the current one when it can read the whole context,
        else one that held it (the previous model first). Raises :class:`CompactionError`
        when the part to summarise fits no callable model (the request would overflow)."""
        session = self._session
        models = session.models
        model = session.model
        tokens = session.context_usage().tokens
        chosen_by_setting = self._configured_summarizer(preparation)
        if chosen_by_setting is not None:
            return chosen_by_setting
        chosen = context_fit.choose_summarizer(tokens, model, models.summarizer_candidates(), models.can_call)
        if chosen is not None:
            return chosen
        to_read = count_text_tokens(compaction_mod.serialize_conversation(
            [*preparation.messages_to_summarize, *preparation.turn_prefix_messages]
        ))  # what the summariser reads: long tool results are cut there
        if not context_fit.overflows(to_read, model):
            return model
        previous = models.previous.ref if models.previous is not None else "the previous model"
        raise CompactionError(
            f"Cannot compact: the conversation (~{context_fit.format_k(tokens)} tokens) does not fit "
            f"{model.ref}'s {context_fit.format_k(model.context_window)} window and no model that "
            f"can read it is available (set the key for {previous}, or switch back to it)"
        )

    async def refuse_known_overflow(self, history: list[AgentMessage], signal: asyncio.Event) -> list[AgentMessage]:
        """The agent's ``transform_context``: a request whose context is known not to fit the
        model is not sent; its error is an overflow, so the session compacts and continues."""
        session = self._session
        model = session.model
        if model.context_window <= 0:
            return history
        await self.count_exactly_if_near(history)
        estimate = compaction_mod.estimate_context_tokens(history)
        tokens = estimate.tokens
        if estimate.last_usage_index < 0:
            tokens += count_text_tokens(session.agent.system_prompt)
        if context_fit.overflows(tokens, model):
            raise context_fit.ContextTooLargeError(
                context_fit.CONTEXT_TOO_LARGE.format(tokens=tokens, model=model.ref, window=model.context_window)
            )
        return history

    async def count_exactly_if_near(self, history: list[AgentMessage] | None = None) -> None:
        """Load the tokenizer when an upper bound of ``history``'s size (default: the agent's
        context) reaches the compaction threshold: below it, no exact count could change a
        decision (the threshold is below the window), so the character estimate serves."""
        if tokenizer_ready():
            return
        session = self._session
        window = session.model.context_window
        if window <= 0:
            return
        messages = session.agent.messages if history is None else history
        bound = compaction_mod.estimate_context_tokens(messages, message_token_bound)
        tokens = bound.tokens
        if bound.last_usage_index < 0:
            tokens += text_token_bound(session.agent.system_prompt)
        if tokens > window - compaction_mod.effective_reserve(session.settings.compaction, window):
            await load_tokenizer()

    async def over_threshold(self) -> bool:
        """Whether the context is past the compaction threshold of the current model (counted
        exactly when it could be near it)."""
        session = self._session
        await self.count_exactly_if_near()
        tokens = session.context_usage().tokens
        return compaction_mod.should_compact(tokens, session.model.context_window, session.settings.compaction)

    async def before_prompt(self) -> None:
        """Compact first when the context is already past the threshold (not right after a compaction)."""
        session = self._session
        store = session.store
        leaf = store.get(store.leaf_id) if store.leaf_id else None
        if isinstance(leaf, CompactionEntry):
            return  # just compacted: what is left is the recent part, compacting again cannot help
        if any(isinstance(m, AssistantMessage) for m in session.agent.messages) and await self.over_threshold():
            await self.run("threshold", will_retry=False)
