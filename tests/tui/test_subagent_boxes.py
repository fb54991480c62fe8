"""Subagent boxes in the interactive app (Textual pilot), driving real subagents over the replay
server: Ctrl+O opens a box onto the subagent's own transcript (live while it runs, from its child
session file after a resume) and closes it again; parallel subagents sit side by side on a wide
screen and stack on a narrow one; a session file that names a child file baton did not write
for that call (outside the session folder, through a symlink, a FIFO, another session, garbage)
gets one clear line in the box and nothing of that file on screen."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from baton.providers.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.settings import validate_settings
from baton.sessions.store import SessionStore
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.approval import ApprovalPanel
from baton.tui.app.widgets.subagent_box import LOG_ENTRIES, SubagentView
from tests.provider_scripts import text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.sessions.subagent_helpers import (
    CHILD_API,
    PARENT_API,
    TwoProtocols,
    child_model,
    open_parent,
    parent_model,
    task_calls_reply,
    write_agent,
)
from tests.tui.app_helpers import screen_text, settle, submit, wait_until

NOTE = "NOTE-MARKER-77"
EVIL_TOOL = "\x1b[2J[bold red]evil[/bold red]\x1b]0;pwn\x07"


def _tool_turns(body: dict[str, Any]) -> int:
    return sum(1 for message in body["messages"] if message["role"] == "tool")


def _reader_then_waiter(release: Path) -> Any:
    """A subagent that reads notes.txt, then runs a command that waits for ``release`` to exist,
    then answers."""

    def script(body: dict[str, Any]) -> Reply:
        turn = _tool_turns(body)
        if turn == 0:
            return Reply.sse(tool_call_reply(CHILD_API, "call_read", "read", {"path": "notes.txt"}))
        if turn == 1:
            wait = f"while [ ! -e {release.name} ]; do sleep 0.05; done; echo released"
            return Reply.sse(tool_call_reply(CHILD_API, "call_wait", "bash", {"command": wait}))
        return Reply.sse(text_reply(CHILD_API, "The notes say 42."))

    return script


async def _reopen(cwd: Path, server: ReplayServer, path: Path) -> CodingSession:
    """The saved session at ``path`` opened again (what ``baton -c`` does)."""
    return await CodingSession.open(SessionOptions(
        cwd=cwd, model=parent_model(server), api_key="parent-key", tools=["read", "bash", "task"],
        session=str(path), session_dir=cwd / "sessions", context_files=False, preload_tokenizer=False,
        approval="auto", extra_models=[child_model(server)],
        settings=validate_settings({"retry": {"enabled": False}}),
    ))


def _inside_boxes(text: str) -> str:
    """The lines of boxes drawn one under the other, without their frames, as one string."""
    return "".join(line.strip().strip("│").strip() for line in text.splitlines())


def _box(app: BatonApp, call_id: str) -> SubagentView:
    [view] = [v for v in app.transcript.views_of(SubagentView) if v.tool_call_id == call_id]
    return view


async def test_ctrl_o_opens_a_running_subagents_transcript_and_again_after_resume(
    tmp_path: Path, baton_home: Path
) -> None:
    (tmp_path / "notes.txt").write_text(f"{NOTE}\n")
    release = tmp_path / "go"
    write_agent(baton_home / "agents", "scout", model="replay-o/child-model", tools="Read, Bash")
    script = TwoProtocols(
        [task_calls_reply([("toolu_s1", {"description": "read the notes", "prompt": "read notes.txt",
                                         "agent": "scout"})]),
         Reply.sse(text_reply(PARENT_API, "Parent done."))],
        _reader_then_waiter(release),
    )
    with ReplayServer(script) as server:
        session = await open_parent(tmp_path, server, sessions=tmp_path / "sessions")
        app = BatonApp(session)
        async with app.run_test(size=(120, 60)) as pilot:
            await submit(pilot, app, "send the scout")
            await wait_until(pilot, lambda: "scout on replay-o/child-model · running bash" in screen_text(app),
                             timeout=30, what="the live box with the subagent in its command")
            assert "Ctrl+O: the subagent's transcript" in screen_text(app)
            assert NOTE not in screen_text(app)  # collapsed: the box, not the transcript
            await pilot.press("ctrl+o")
            # live: the subagent's prompt, its read (whole, as Ctrl+O shows tool output) and the
            # command still running, drawn by the main flow's views inside the box
            await wait_until(pilot, lambda: NOTE in screen_text(app), what="the child's read inside the box")
            shown = screen_text(app)
            assert "read notes.txt" in shown and "bash $ while [ ! -e go ]" in shown
            assert "The notes say 42." not in shown
            release.touch()
            await wait_until(pilot, lambda: "The notes say 42." in screen_text(app), timeout=30,
                             what="the child's answer arriving live in the open box")
            await settle(pilot, app)
            await wait_until(pilot, lambda: "Parent done." in screen_text(app), what="the parent's answer")
            assert "released" in screen_text(app)  # the command's output, in the box
            await pilot.press("ctrl+o")
            await wait_until(pilot, lambda: NOTE not in screen_text(app), what="the box closed again")
            closed = screen_text(app)
            assert "The notes say 42." in closed and "Ctrl+O: the subagent's transcript" in closed
            assert "bash $ while" not in closed
        parent_file = session.session_file
        await session.close()
        assert parent_file is not None

        # resumed: the live log is gone; Ctrl+O reads the child file the result links
        session = await _reopen(tmp_path, server, Path(parent_file))
        app = BatonApp(session)
        async with app.run_test(size=(120, 60)) as pilot:
            await wait_until(pilot, lambda: "Parent done." in screen_text(app), what="the resumed transcript")
            assert _box(app, "toolu_s1").log is None
            assert NOTE not in screen_text(app)
            await pilot.press("ctrl+o")
            await wait_until(pilot, lambda: NOTE in screen_text(app), what="the child's read, from its file")
            shown = screen_text(app)
            assert "bash $ while [ ! -e go ]" in shown and "released" in shown and "The notes say 42." in shown
            log = _box(app, "toolu_s1").log
            assert log is not None and log.error is None and log.path is not None and "subagents" in log.path
        await session.close()


def _two_children(body: dict[str, Any]) -> Reply:
    who = "north" if "go north" in json.dumps(body["messages"]) else "south"
    if _tool_turns(body) == 0:
        return Reply.sse(tool_call_reply(CHILD_API, f"call_{who}", "bash", {"command": f"echo {who}-side"}))
    return Reply.sse(text_reply(CHILD_API, f"The {who} is clear."))


async def test_parallel_subagents_sit_side_by_side_on_a_wide_screen_and_stack_on_a_narrow_one(
    tmp_path: Path, baton_home: Path
) -> None:
    write_agent(baton_home / "agents", "scout", model="replay-o/child-model", tools="Bash")
    write_agent(baton_home / "agents", "digger", model="replay-o/child-model", tools="Bash")
    script = TwoProtocols(
        [task_calls_reply([
            ("toolu_n", {"description": "look north", "prompt": "go north", "agent": "scout"}),
            ("toolu_s", {"description": "look south", "prompt": "go south", "agent": "digger"}),
        ]), Reply.sse(text_reply(PARENT_API, "Both looked."))],
        _two_children,
    )
    with ReplayServer(script) as server:
        session = await open_parent(tmp_path, server, sessions=tmp_path / "sessions")
        app = BatonApp(session)
        async with app.run_test(size=(130, 60)) as pilot:
            await submit(pilot, app, "look both ways")
            await settle(pilot, app, timeout=60)
            await wait_until(pilot, lambda: "Both looked." in screen_text(app), what="the parent's answer")
            regions = app.transcript.subagent_regions()
            north, south = regions["toolu_n"], regions["toolu_s"]
            assert north.y == south.y and north.height == south.height  # one row
            assert north.right < south.x and north.width >= 40 and south.width >= 40
            row = next(line for line in screen_text(app).splitlines() if "scout on replay-o" in line)
            assert "digger on replay-o" in row  # the two boxes' lines share the screen's rows
            assert "The north is clear." in screen_text(app) and "The south is clear." in screen_text(app)

            await pilot.press("ctrl+o")  # each box opens onto its own transcript, still side by side
            await wait_until(pilot, lambda: "north-side" in screen_text(app) and "south-side" in screen_text(app),
                             what="both transcripts")
            regions = app.transcript.subagent_regions()
            assert regions["toolu_n"].y == regions["toolu_s"].y
            lines = screen_text(app).splitlines()
            north_at = next(line.index("echo north-side") for line in lines if "echo north-side" in line)
            south_at = next(line.index("echo south-side") for line in lines if "echo south-side" in line)
            assert north_at < regions["toolu_s"].x <= south_at  # each transcript inside its own box
            await pilot.press("ctrl+o")

            await pilot.resize_terminal(70, 60)  # two boxes of 40 columns do not fit: stacked
            await wait_until(pilot, lambda: app.transcript.size.width == 70, what="the resize")
            await app.transcript.flush_now()
            regions = app.transcript.subagent_regions()
            north, south = regions["toolu_n"], regions["toolu_s"]
            assert north.x == south.x and north.bottom < south.y
            assert not any("scout on" in line and "digger on" in line for line in screen_text(app).splitlines())
        await session.close()


# -- hostile child files -------------------------------------------------------------------------------------


def _task_turn(store: SessionStore, call_id: str, details: dict[str, Any], *, agent: str = "scout") -> None:
    store.append_message(AssistantMessage(
        content=[ToolCall(id=call_id, name="task", arguments={"description": f"case {call_id}", "prompt": "p",
                                                              "agent": agent})],
        api=PARENT_API, provider="replay-a", model="parent-model", stop_reason="toolUse",
    ))
    store.append_message(ToolResultMessage(tool_call_id=call_id, tool_name="task",
                                           content=[TextContent(text=f"answer of {call_id}")], details=details))


def _child_file(folder: Path, name: str, messages: list[Any]) -> tuple[Path, str]:
    store = SessionStore.create(folder, folder, path=folder / name)
    for message in messages:
        store.append_message(message)
    store.close()
    return folder / name, store.session_id


async def test_a_hostile_session_file_cannot_make_a_box_show_another_file(tmp_path: Path, baton_home: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    sessions = cwd / "sessions"
    secret = tmp_path / "secret.jsonl"
    secret_file, secret_id = _child_file(tmp_path, "secret.jsonl",
                                         [UserMessage(content="SECRET-CONTENT in a file outside the sessions")])
    assert secret_file == secret
    parent = SessionStore.create(sessions, cwd)
    children = sessions / "subagents" / parent.session_id
    children.mkdir(parents=True)
    # a genuine child file, whose tool call names carry escapes and markup
    good, good_id = _child_file(children, "2026_good.jsonl", [
        UserMessage(content="the task"),
        AssistantMessage(content=[ToolCall(id="c1", name=EVIL_TOOL, arguments={})], api=CHILD_API,
                         provider="replay-o", model="child-model", stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="c1", tool_name="x", content=[TextContent(text="GOOD-CHILD-RESULT")]),
    ])
    (children / "2026_link.jsonl").symlink_to(secret)
    (tmp_path / "elsewhere").mkdir()
    (sessions / "subagents" / "escape").symlink_to(tmp_path)
    os.mkfifo(children / "2026_fifo.jsonl")
    (children / "2026_junk.jsonl").write_bytes(b"\x00\xff not a session \x1b[31m\n{]\n")
    big = children / "2026_big.jsonl"
    with big.open("wb") as handle:
        handle.truncate(17 * 1024 * 1024)
    user = UserMessage(content="go")
    parent.append_message(user)
    cases = {
        "toolu_outside": {"sessionFile": str(secret), "sessionId": secret_id},
        "toolu_dotdot": {"sessionFile": str(children / ".." / ".." / ".." / ".." / "secret.jsonl"),
                         "sessionId": secret_id},
        "toolu_link": {"sessionFile": str(children / "2026_link.jsonl"), "sessionId": secret_id},
        "toolu_dirlink": {"sessionFile": str(sessions / "subagents" / "escape" / "secret.jsonl"),
                          "sessionId": secret_id},
        "toolu_fifo": {"sessionFile": str(children / "2026_fifo.jsonl"), "sessionId": "x"},
        "toolu_junk": {"sessionFile": str(children / "2026_junk.jsonl"), "sessionId": "x"},
        "toolu_big": {"sessionFile": str(big), "sessionId": "x"},
        "toolu_other": {"sessionFile": str(good), "sessionId": "not-" + good_id},
        "toolu_good": {"sessionFile": str(good), "sessionId": good_id,
                       "agent": "\x1b]0;owned\x07[bold]sc[/bold]out", "model": "[link=https://x.test]m[/link]",
                       "status": "done", "turns": 1, "elapsedMs": 1000},
    }
    for call_id, details in cases.items():
        _task_turn(parent, call_id, details)
    parent.close()
    assert parent.path is not None

    with ReplayServer([]) as server:
        session = await _reopen(cwd, server, parent.path)
        app = BatonApp(session)
        async with app.run_test(size=(120, 400)) as pilot:
            await wait_until(pilot, lambda: "answer of toolu_good" in screen_text(app), what="the transcript")
            await pilot.press("ctrl+o")
            await wait_until(pilot, lambda: "GOOD-CHILD-RESULT" in screen_text(app), timeout=15,
                             what="the genuine child file")
            await wait_until(pilot, lambda: all(_box(app, c).log is not None for c in cases), timeout=15,
                             what="every box answered")
            shown = screen_text(app)
            errors = {c: _box(app, c).log.error or "" for c in cases}  # type: ignore[union-attr]
            assert "not a subagent file of this session's folder" in errors["toolu_outside"]
            assert "not a subagent file of this session's folder" in errors["toolu_dotdot"]
            assert "symlink" in errors["toolu_link"] and "symlink" in errors["toolu_dirlink"]
            assert "FIFO" in errors["toolu_fifo"]
            assert "not a readable session file" in errors["toolu_junk"]
            assert "larger than 16 MB" in errors["toolu_big"]
            assert "another session" in errors["toolu_other"]
            assert errors["toolu_good"] == ""
            assert "The subagent's transcript cannot be shown" in shown
            assert "SECRET-CONTENT" not in shown
            # names from the file are text: markup shown as typed, escapes gone
            assert "[bold red]evil[/bold red]" in shown and "[bold]scout" in shown.replace("[/bold]", "")
            assert "[link=https://x.test]m[/link]" in shown
            assert "\x1b" not in shown and "pwn" not in shown and "owned" not in shown
        await session.close()


async def test_a_subagent_with_500_tool_calls_keeps_a_bounded_box(tmp_path: Path, baton_home: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    parent = SessionStore.create(cwd / "sessions", cwd)
    children = cwd / "sessions" / "subagents" / parent.session_id
    messages: list[Any] = [UserMessage(content="list everything")]
    for n in range(500):
        messages.append(AssistantMessage(
            content=[ToolCall(id=f"c{n}", name="bash", arguments={"command": f"echo step-{n}"})],
            api=CHILD_API, provider="replay-o", model="child-model", stop_reason="toolUse"))
        messages.append(ToolResultMessage(tool_call_id=f"c{n}", tool_name="bash",
                                          content=[TextContent(text=f"out-{n}")]))
    messages.append(AssistantMessage(content=[TextContent(text="All 500 listed.")], api=CHILD_API,
                                     provider="replay-o", model="child-model"))
    child, child_id = _child_file(children, "2026_long.jsonl", messages)
    parent.append_message(UserMessage(content="go"))
    _task_turn(parent, "toolu_long", {"sessionFile": str(child), "sessionId": child_id, "agent": "scout",
                                      "status": "done", "toolCalls": 500})
    parent.close()
    assert parent.path is not None
    with ReplayServer([]) as server:
        session = await _reopen(cwd, server, parent.path)
        app = BatonApp(session)
        async with app.run_test(size=(120, 50)) as pilot:
            await wait_until(pilot, lambda: "answer of toolu_long" in screen_text(app), what="the transcript")
            await pilot.press("ctrl+o")
            await wait_until(pilot, lambda: "All 500 listed." in screen_text(app), timeout=30, what="the child's end")
            log = _box(app, "toolu_long").log
            assert log is not None and len(log.entries) == LOG_ENTRIES
            assert log.dropped == 502 - LOG_ENTRIES  # the prompt and 500 replies, then the answer
            text = app.transcript.text
            assert f"{502 - LOG_ENTRIES} earlier entries not shown" in text
            assert f"baton--session{child}" in _inside_boxes(text).replace(" ", "")
            assert "echo step-499" in text and "echo step-400" not in text
        await session.close()
    await asyncio.sleep(0)


def _child_then_grandchild(body: dict[str, Any]) -> Reply:
    deeper = "go deeper" in json.dumps([m for m in body["messages"] if m["role"] == "user"])
    turns = _tool_turns(body)
    if deeper:
        if turns == 0:
            return Reply.sse(tool_call_reply(CHILD_API, "call_deep_bash", "bash", {"command": "echo deep-side"}))
        return Reply.sse(text_reply(CHILD_API, "Bottom reached."))
    if turns == 0:
        return Reply.sse(tool_call_reply(CHILD_API, "call_deep", "task",
                                         {"description": "dig deeper", "prompt": "go deeper", "agent": "scout"}))
    return Reply.sse(text_reply(CHILD_API, "Child done."))


async def test_a_subagents_own_subagent_is_a_live_box_inside_its_box(tmp_path: Path, baton_home: Path) -> None:
    write_agent(baton_home / "agents", "scout", model="replay-o/child-model")
    script = TwoProtocols(
        [task_calls_reply([("toolu_top", {"description": "dig", "prompt": "dig here", "agent": "scout"})]),
         Reply.sse(text_reply(PARENT_API, "Parent done."))],
        _child_then_grandchild,
    )
    with ReplayServer(script) as server:
        session = await open_parent(tmp_path, server, sessions=tmp_path / "sessions",
                                    settings={"subagents": {"maxDepth": 2}})
        app = BatonApp(session)
        async with app.run_test(size=(120, 80)) as pilot:
            await pilot.press("ctrl+o")
            await submit(pilot, app, "dig")
            await settle(pilot, app, timeout=60)
            await wait_until(pilot, lambda: "Parent done." in screen_text(app), what="the parent's answer")
            top = _box(app, "toolu_top").log
            assert top is not None
            nested = top.tool_view("call_deep")
            # the grandchild's events reached the box inside the child's box, live (not its file)
            assert isinstance(nested, SubagentView) and nested.log is not None and not nested.loading
            shown = app.transcript.text
            assert "task (scout) dig deeper" in shown and "bash $ echo deep-side" in shown
            assert "Bottom reached." in shown and "Child done." in shown
        await session.close()


def _asks_for_a_command(body: dict[str, Any]) -> Reply:
    if _tool_turns(body) == 0:
        return Reply.sse(tool_call_reply(CHILD_API, "call_ask", "bash", {"command": "echo asked-side"}))
    return Reply.sse(text_reply(CHILD_API, "Ran it."))


async def test_a_subagents_call_waiting_for_approval_says_so_in_its_box(tmp_path: Path, baton_home: Path) -> None:
    write_agent(baton_home / "agents", "scout", model="replay-o/child-model", tools="Bash")
    script = TwoProtocols(
        [task_calls_reply([("toolu_ask", {"description": "run it", "prompt": "run the command", "agent": "scout"})]),
         Reply.sse(text_reply(PARENT_API, "Parent done."))],
        _asks_for_a_command,
    )
    with ReplayServer(script) as server:
        session = await open_parent(tmp_path, server, sessions=tmp_path / "sessions", approval="ask")
        app = BatonApp(session)
        async with app.run_test(size=(120, 50)) as pilot:
            await submit(pilot, app, "run it")
            await wait_until(pilot, lambda: app.query_one(ApprovalPanel).has_class("-open"), timeout=30,
                             what="the approval panel for the subagent's command")
            await wait_until(pilot, lambda: "scout on replay-o/child-model · waiting for your approval"
                             in screen_text(app), what="the box saying it waits")
            await pilot.press("ctrl+o")
            await wait_until(pilot, lambda: "waiting for your approval…" in screen_text(app),
                             what="the subagent's call waiting, in its transcript")
            await pilot.press("y")
            await settle(pilot, app, timeout=30)
            await wait_until(pilot, lambda: "Parent done." in screen_text(app), what="the parent's answer")
            assert "asked-side" in screen_text(app) and "waiting for your approval" not in screen_text(app)
        await session.close()
