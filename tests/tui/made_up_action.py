"""A made-up action, defined in this one place, for the test that finds it in every front end
(tests/tui/test_actions_everywhere.py). ``register_made_up()`` adds it to baton's actions; a
baton process started with ``made_up_command`` does that before it runs.

``/stamp WORD`` names the session ``stamped WORD`` and reports how many messages it holds.
RPC: ``{"type": "stamp", "word": ...}`` → ``{"name", "messages"}``; ACP: the slash command
``/stamp`` (input hint ``a word``). Refused while the agent works.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from baton.providers.json_types import JsonMapping, JsonValue
from baton.tui.actions.action import AcpCommand, Action, ActionError, Report, RpcCommand
from baton.tui.actions.fields import text_field

if TYPE_CHECKING:
    from baton.sessions import CodingSession

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Stamp:
    name: str
    messages: int


def _word(session: CodingSession, text: str) -> str:
    if not text.strip():
        raise ActionError("/stamp needs a word")
    return text.strip()


def _word_from_rpc(session: CodingSession, command: JsonMapping) -> str:
    return text_field(command, "word")


async def _stamp(session: CodingSession, word: str) -> Stamp:
    session.set_name(f"stamped {word}")
    return Stamp(f"stamped {word}", len(session.messages))


def _reply(session: CodingSession, stamp: Stamp) -> JsonValue:
    return {"name": stamp.name, "messages": stamp.messages}


STAMP: Action[str, Stamp] = Action(
    "stamp", "/stamp WORD", "Name the session after a word (a made-up action)",
    parse=_word, run=_stamp,
    report=lambda stamp: Report(f"Session {stamp.name!r} holds {stamp.messages} messages.", "success",
                                title="Stamped"),
    while_running=False,
    rpc=RpcCommand("stamp", parse=_word_from_rpc, reply=_reply),
    acp=AcpCommand(hint="a word"),
)


def register_made_up() -> None:
    """Add ``/stamp`` to baton's actions."""
    from baton.tui.actions.registry import register

    register(STAMP)


def made_up_command(*args: str) -> list[str]:
    """A baton command line whose process has ``/stamp`` registered."""
    code = ("import sys; sys.path.insert(0, sys.argv.pop(1)); from tests.tui.made_up_action import "
            "register_made_up; register_made_up(); from baton.tui.cli.main import main; raise SystemExit(main())")
    return [sys.executable, "-c", code, str(ROOT), *args]
