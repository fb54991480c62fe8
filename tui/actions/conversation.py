"""The conversation as a whole: ``/compact`` (summarise it to free context), ``/new`` (start
another), ``/resume`` (open a stored one) and ``/fork`` (a new one from an earlier prompt).
RPC: ``compact``, ``new_session``, ``switch_session``, ``fork``; ACP: ``/compact``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.providers.json_types import JsonMapping, JsonValue
from baton.tui.actions.action import AcpCommand, Action, ActionCancelled, ActionError, Report, RpcCommand
from baton.tui.actions.fields import optional_text, text_field
from baton.tui.actions.text import home_relative

if TYPE_CHECKING:
    from baton.sessions import CodingSession
    from baton.sessions.compaction import CompactionResult



def _not_cancelled(session: CodingSession, result: object) -> JsonValue:
    """pi's answer to a session replacement an extension could have cancelled (baton has none)."""
    return {"cancelled": False}


# ---------------------------------------------------------------------------------------------
# /compact


def _focus(session: CodingSession, text: str) -> str | None:
    return text.strip() or None


async def compact(session: CodingSession, focus: str | None) -> CompactionResult:
    """Summarise the older part of the conversation now (``focus``: what the summary keeps)."""
    from baton.sessions.compaction import CompactionAborted

    try:
        return await session.compact(focus)
    except CompactionAborted as exc:
        raise ActionCancelled(str(exc)) from exc


def compact_report(result: CompactionResult) -> Report:
    """The summary, titled with the size before."""
    title = f"Compacted the conversation ({result.tokens_before:,} tokens before)"
    return Report(result.summary, "success", title=title,
                  meta={"notice": "compaction", "firstKeptEntryId": result.first_kept_entry_id})


def _compact_reply(session: CodingSession, result: CompactionResult) -> JsonValue:
    return result.to_dict()


COMPACT: Action[str | None, CompactionResult] = Action(
    "compact", "/compact [focus]", "Summarise the conversation so far to free context",
    parse=_focus, run=compact, report=compact_report, while_running=False,
    rpc=RpcCommand("compact", parse=lambda session, command: optional_text(command, "customInstructions"),
                   reply=_compact_reply),
    acp=AcpCommand(hint="what the summary should focus on (optional)",
                   description="Summarise the older part of the conversation to free context"),
)


# ---------------------------------------------------------------------------------------------
# /new


def _nothing(session: CodingSession, text: str | JsonMapping) -> None:
    return None


async def new_session(session: CodingSession, nothing: None) -> None:
    """Start a new, empty session (same directory, model and thinking level)."""
    await session.new_session()


NEW: Action[None, None] = Action(
    "new", "/new", "Start a new session",
    parse=_nothing, run=new_session, report=lambda nothing: Report("New session started.", "success"),
    while_running=False,
    rpc=RpcCommand("new_session", parse=_nothing, reply=_not_cancelled),
)


# ---------------------------------------------------------------------------------------------
# /resume


def _session_ref(session: CodingSession, text: str) -> str:
    if not text.strip():
        raise ActionError("Name the session to resume: its file or the start of its id.")
    return text.strip()


async def resume(session: CodingSession, path_or_id: str) -> str:
    """Open another stored session (a file, or the start of an id) in place of this one."""
    await session.switch_session(path_or_id)
    return str(session.session_file or path_or_id)


RESUME: Action[str, str] = Action(
    "resume", "/resume", "Resume a session (this directory; Tab: all projects; Ctrl+D deletes)",
    parse=_session_ref, run=resume, report=lambda path: Report(f"Resumed {home_relative(path)}.", "success"),
    while_running=False,
    rpc=RpcCommand("switch_session", parse=lambda session, command: text_field(command, "sessionPath"),
                   reply=_not_cancelled),
)


# ---------------------------------------------------------------------------------------------
# /fork


def _entry_id(session: CodingSession, text: str) -> str:
    if not text.strip():
        raise ActionError("Name the user message to fork from (its entry id).")
    return text.strip()


async def fork(session: CodingSession, entry_id: str) -> str:
    """A new session holding the branch up to the user message ``entry_id``; that message's text."""
    return await session.fork(entry_id)


FORK: Action[str, str] = Action(
    "fork", "/fork", "Start a new session from an earlier message (it goes back to the editor)",
    parse=_entry_id, run=fork,
    report=lambda text: Report("Forked into a new session; the message is back in the editor.", "success"),
    while_running=False,
    rpc=RpcCommand("fork", parse=lambda session, command: text_field(command, "entryId"),
                   reply=lambda session, text: {"text": text, "cancelled": False}),
)



# ---------------------------------------------------------------------------------------------
# /clone


async def clone(session: CodingSession, _: None) -> None:
    """A new session holding the whole current branch; the conversation goes on there."""
    await session.clone()


CLONE: Action[None, None] = Action(
    "clone", "/clone", "Duplicate this session as it stands into a new session file, and go on there",
    parse=_nothing, run=clone, report=lambda _: Report("Cloned into a new session.", "success"),
    while_running=False,
    rpc=RpcCommand("clone", parse=_nothing, reply=_not_cancelled),
)

ACTIONS = (COMPACT, NEW, RESUME, FORK, CLONE)
