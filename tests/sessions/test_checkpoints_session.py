"""Checkpoints in a coding session: snapshots around tool runs, the list, and rewinds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from baton.providers.faux import FauxProvider, FauxResponse, faux_tool_call
from baton.providers.messages import UserMessage
from baton.providers.models import Model
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.checkpoints import git as git_module
from baton.sessions.checkpoints.records import read_records, user_text
from tests.provider_scripts import text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.sessions.conftest import quiet_settings

pytestmark = pytest.mark.skipif(git_module.find_git() is None, reason="git is not installed")

API = "anthropic-messages"


def files(root: Path) -> dict[str, tuple[bytes, int]]:
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and ".git" not in path.parts:
            out[path.relative_to(root).as_posix()] = (path.read_bytes(), path.stat().st_mode & 0o777)
    return out


def replay_model(server: ReplayServer) -> Model:
    return Model(id="replay-model", api=API, provider="replay", base_url=server.url, context_window=200_000,
                 max_tokens=8192)


def replay_options(cwd: Path, model: Model, **kw: Any) -> SessionOptions:
    return SessionOptions(cwd=cwd, model=model, api_key="test-key", context_files=False,
                          settings=quiet_settings(), extra_models=[model], **kw)


def user_entry_ids(session: CodingSession) -> list[str]:
    return [e.id for e in session.store.branch_path()
            if getattr(e, "message", None) is not None and isinstance(e.message, UserMessage)]  # type: ignore[attr-defined]


async def test_code_rewind_restores_edit_write_and_bash_changes_then_is_undone(
    baton_home: Path, cwd: Path
) -> None:
    (cwd / "edit_me.txt").write_text("hello world\n")
    (cwd / "change_me.sh").write_text("#!/bin/sh\necho v1\n")
    (cwd / "change_me.sh").chmod(0o755)
    (cwd / "delete_me.txt").write_bytes(b"bye\x00\r\n")
    original = files(cwd)
    replies = [
        Reply.sse(tool_call_reply(API, "toolu_1", "edit", {"path": "edit_me.txt", "oldText": "world",
                                                             "newText": "there"})),
        Reply.sse(tool_call_reply(API, "toolu_2", "write", {"path": "new.txt", "content": "brand new\n"})),
        Reply.sse(tool_call_reply(API, "toolu_3", "bash", {
            "command": "echo v2 > change_me.sh && chmod 644 change_me.sh && rm delete_me.txt"})),
        Reply.sse(text_reply(API, "All done.")),
        Reply.sse(text_reply(API, "Just reading, nothing to change.")),
    ]
    with ReplayServer(replies) as server:
        session = await CodingSession.open(replay_options(cwd, replay_model(server)))
        await session.prompt("change the files")
        after_run = files(cwd)
        assert after_run != original and "new.txt" in after_run and "delete_me.txt" not in after_run
        records = read_records(session.store)
        assert [r.kind for r in records] == ["before", "after"]

        entries_before = len(session.store.entries)
        calls = git_module.invocations
        await session.prompt("what is in edit_me.txt?")
        assert git_module.invocations == calls  # a read-only turn runs no git at all
        assert len(read_records(session.store)) == 2
        assert len(session.store.entries) == entries_before + 2  # the prompt and the answer only

        points = session.checkpoints()
        assert [p.text for p in points] == ["what is in edit_me.txt?", "change the files"]
        first = points[1]
        assert first.changes.summary() == "+1 ~2 -1"
        assert first.to_json()["changedFiles"] == ["change_me.sh", "delete_me.txt", "edit_me.txt", "new.txt"]
        assert first.model == "replay/replay-model"
        assert points[0].commit is None  # nothing changed after the read-only prompt

        messages = list(session.messages)
        result = await session.rewind(first.entry_id, "code")
        assert files(cwd) == original
        assert result.restored == ["change_me.sh", "delete_me.txt", "edit_me.txt"]
        assert result.removed == ["new.txt"]
        assert result.summary() == "restored 3 files, removed 1"
        assert session.messages == messages  # conversation untouched

        undo = session.checkpoints()[0]
        assert undo.kind == "rewind" and undo.label() == "before rewind"
        assert result.checkpoint_id == undo.entry_id
        again = await session.rewind(undo.entry_id, "code")
        assert files(cwd) == after_run
        assert again.removed == ["delete_me.txt"] and again.restored == ["change_me.sh", "edit_me.txt", "new.txt"]
        await session.close()


async def test_conversation_only_and_both_across_a_model_switch(
    options: SessionOptions, faux_a: FauxProvider, faux_b: FauxProvider, model_b: Model, cwd: Path
) -> None:
    options.tools = ["write", "read"]
    faux_a.add(FauxResponse.tool_call("write", {"path": "one.txt", "content": "1"}), "wrote one")
    faux_b.add(FauxResponse.tool_call("write", {"path": "two.txt", "content": "2"}), "wrote two")
    session = await CodingSession.open(options)
    await session.prompt("write one")
    await session.models.switch(model_b)
    await session.prompt("write two")
    first, second = user_entry_ids(session)
    points = {p.entry_id: p for p in session.checkpoints()}
    assert points[first].model == "prov-a/model-a" and points[second].model == "prov-b/model-b"

    result = await session.rewind(second, "conversation")
    assert result.text == "write two"
    assert (cwd / "two.txt").exists()  # conversation only: files stay
    assert [user_text(m.content) for m in session.messages if isinstance(m, UserMessage)] == ["write one"]
    assert session.model.id == "model-b"

    # The rewound branch stays in the file; move back there with the tree and rewind both.
    session.navigate(session.store.entries[-1].id)
    result = await session.rewind(first, "both")
    assert result.text == "write one"
    assert not (cwd / "one.txt").exists() and not (cwd / "two.txt").exists()
    assert [m for m in session.messages if isinstance(m, UserMessage)] == []

    undo = session.checkpoints()[0]
    assert undo.kind == "rewind"
    await session.rewind(undo.entry_id, "both")  # the rewind itself taken back, code and conversation
    assert (cwd / "one.txt").read_text() == "1" and (cwd / "two.txt").read_text() == "2"
    assert [user_text(m.content) for m in session.messages if isinstance(m, UserMessage)] == [
        "write one", "write two"]
    await session.close()


async def test_parallel_mutating_calls_snapshot_once(options: SessionOptions, faux_a: FauxProvider,
                                                     cwd: Path) -> None:
    options.tools = ["write", "bash"]
    faux_a.add(FauxResponse(content=[faux_tool_call("write", {"path": "a.txt", "content": "a"}),
                                     faux_tool_call("write", {"path": "b.txt", "content": "b"}),
                                     faux_tool_call("bash", {"command": "echo c > c.txt"})]), "ok")
    session = await CodingSession.open(options)
    await session.prompt("three at once")
    assert [r.kind for r in read_records(session.store)] == ["before", "after"]
    assert session.checkpoints()[0].changes.added == ["a.txt", "b.txt", "c.txt"]
    await session.close()


async def test_tools_after_an_automatic_retry_count_as_the_agents(options: SessionOptions,
                                                                  faux_a: FauxProvider, cwd: Path) -> None:
    options.tools = ["write"]
    faux_a.add(FauxResponse.tool_call("write", {"path": "a.txt", "content": "a"}),
               FauxResponse.error("503 Service Unavailable"),
               FauxResponse.tool_call("write", {"path": "b.txt", "content": "b"}), "done")
    session = await CodingSession.open(options)
    await session.prompt("write two files")
    point = session.checkpoints()[0]
    assert point.changes.added == ["a.txt", "b.txt"]
    result = await session.rewind(point.entry_id, "code")
    assert not result.needs_confirmation and result.removed == ["a.txt", "b.txt"]
    await session.close()


async def test_hand_edit_needs_a_second_confirmation(options: SessionOptions, faux_a: FauxProvider,
                                                     cwd: Path) -> None:
    options.tools = ["write"]
    (cwd / "notes.txt").write_text("mine\n")
    faux_a.add(FauxResponse.tool_call("write", {"path": "code.py", "content": "x = 1\n"}), "done",
               FauxResponse.tool_call("write", {"path": "code.py", "content": "x = 2\n"}), "done")
    session = await CodingSession.open(options)
    await session.prompt("write code")
    (cwd / "notes.txt").write_text("mine, edited by hand\n")
    await session.prompt("change code")
    first = user_entry_ids(session)[0]

    asked = await session.rewind(first, "code")
    assert asked.needs_confirmation and asked.hand_edited == ["notes.txt"]
    assert (cwd / "code.py").read_text() == "x = 2\n"  # nothing changed yet
    assert (cwd / "notes.txt").read_text() == "mine, edited by hand\n"

    done = await session.rewind(first, "code", confirm_hand_edits=True)
    assert not done.needs_confirmation and done.hand_edited == ["notes.txt"]
    assert not (cwd / "code.py").exists()
    assert (cwd / "notes.txt").read_text() == "mine\n"
    await session.close()


async def test_hand_edit_before_the_checkpoint_is_part_of_it(options: SessionOptions, faux_a: FauxProvider,
                                                              cwd: Path) -> None:
    options.tools = ["write"]
    faux_a.add(FauxResponse.tool_call("write", {"path": "a.txt", "content": "agent 1\n"}), "done",
               FauxResponse.tool_call("write", {"path": "notes.txt", "content": "agent 2\n"}), "done")
    session = await CodingSession.open(options)
    await session.prompt("first")
    (cwd / "notes.txt").write_text("by hand\n")
    await session.prompt("second")
    second = user_entry_ids(session)[1]
    result = await session.rewind(second, "code")
    assert not result.needs_confirmation and result.hand_edited == []
    assert (cwd / "notes.txt").read_text() == "by hand\n"
    assert (cwd / "a.txt").read_text() == "agent 1\n"
    await session.close()


async def test_rewind_after_continue_in_a_new_process(options: SessionOptions, faux_a: FauxProvider,
                                                      cwd: Path, baton_home: Path) -> None:
    options.tools = ["write"]
    (cwd / "keep.txt").write_text("k\n")
    faux_a.add(FauxResponse.tool_call("write", {"path": "keep.txt", "content": "agent\n"}), "done")
    session = await CodingSession.open(options)
    await session.prompt("overwrite keep")
    await session.close()
    script = textwrap.dedent(f"""
        import asyncio, json
        from pathlib import Path
        from baton.providers.faux import faux_model
        from baton.sessions import CodingSession, SessionOptions
        async def main():
            model = faux_model("model-a", provider="prov-a", api="faux-a")
            s = await CodingSession.open(SessionOptions(cwd=Path({str(cwd)!r}), session="continue",
                                         extra_models=[model], context_files=False))
            point = [p for p in s.checkpoints() if p.kind == "prompt"][0]
            r = await s.rewind(point.entry_id, "both")
            print(json.dumps({{"restored": r.restored, "text": r.text, "messages": len(s.messages)}}))
            await s.close()
        asyncio.run(main())
    """)
    env = {**os.environ, "BATON_HOME": str(baton_home)}
    proc = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"restored": ["keep.txt"], "text": "overwrite keep", "messages": 0}
    assert (cwd / "keep.txt").read_text() == "k\n"


async def test_outside_a_git_repository_and_no_user_repo_is_created(options: SessionOptions,
                                                                    faux_a: FauxProvider, cwd: Path) -> None:
    options.tools = ["bash"]
    options.settings = quiet_settings(checkpoints={"maxFileBytes": 1000})
    (cwd / "big.bin").write_bytes(b"x" * 5000)
    faux_a.add(FauxResponse.tool_call("bash", {"command": "echo made > made.txt"}), "ok")
    session = await CodingSession.open(options)
    await session.prompt("make a file")
    assert not (cwd / ".git").exists()
    point = session.checkpoints()[0]
    assert point.skipped == ["big.bin"] and point.to_json()["skipped"] == ["big.bin"]
    result = await session.rewind(point.entry_id, "code")
    assert result.removed == ["made.txt"] and not (cwd / "made.txt").exists()
    assert (cwd / "big.bin").read_bytes() == b"x" * 5000
    await session.close()


async def test_without_git_checkpoints_are_off_with_a_notice(options: SessionOptions, faux_a: FauxProvider,
                                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             cwd: Path) -> None:
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    options.tools = ["write"]
    faux_a.add(FauxResponse.tool_call("write", {"path": "a.txt", "content": "a"}), "ok")
    session = await CodingSession.open(options)
    assert any("git was not found" in w for w in session.warnings)
    await session.prompt("write")
    assert (cwd / "a.txt").exists()
    assert read_records(session.store) == []
    await session.close()


async def test_disabled_in_settings_says_so(options: SessionOptions, faux_a: FauxProvider, cwd: Path) -> None:
    options.tools = ["write"]
    options.settings = quiet_settings(checkpoints={"enabled": False})
    faux_a.add(FauxResponse.tool_call("write", {"path": "a.txt", "content": "a"}), "ok")
    session = await CodingSession.open(options)
    await session.prompt("write")
    assert read_records(session.store) == []
    # off for any reason is never silent: /rewind would otherwise "restore 0 files"
    assert session.warnings == ["Checkpoints are off (checkpoints.enabled is false): /rewind cannot take back "
                                "file changes."]
    await session.close()


async def test_rpc_command_functions(options: SessionOptions, faux_a: FauxProvider, cwd: Path) -> None:
    from baton.sessions.checkpoints import rpc

    options.tools = ["write"]
    faux_a.add(FauxResponse.tool_call("write", {"path": "a.txt", "content": "a"}), "done")
    session = await CodingSession.open(options)
    await session.prompt("write a")
    listed = rpc.get_checkpoints(session)
    entry_id = listed["checkpoints"][0]["entryId"]
    with pytest.raises(ValueError, match="restore must be"):
        await rpc.rewind(session, {"type": "rewind", "entryId": entry_id, "restore": "everything"})
    data = await rpc.rewind(session, {"type": "rewind", "entryId": entry_id, "restore": "code"})
    assert data["restored"] == [] and data["removed"] == ["a.txt"] and not data["needsConfirmation"]
    assert data["checkpoints"][0]["kind"] == "rewind" and json.dumps(data)
    await session.close()
