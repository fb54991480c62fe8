"""Attachments in the interactive app: @file references, pasted image paths, Ctrl+V images."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from textual import events

from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.messages import ImageContent, TextContent, UserMessage
from baton.providers.models import Model
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.messages import UserMessageView
from baton.tui.cli.attachments import attach, file_references, pasted_image_reference
from tests.tui.app_helpers import one_view, open_session, screen_text, settle, wait_until

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 17


async def test_at_file_reference_attaches_the_file_and_shows_a_chip(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    (project / "notes.txt").write_text("first line\nsecond line\n")
    (project / "shot.png").write_bytes(PNG)
    faux_a.add(FauxResponse.text("Got them."))
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        app.editor.insert("explain @notes.txt and @shot.png, and @nobody")
        await wait_until(pilot, lambda: "📎 notes.txt" in screen_text(app), what="the chips")
        assert "📎 shot.png (image)" in screen_text(app)
        await pilot.press("enter")
        await settle(pilot, app)
        sent = session.messages[0]  # as stored (this faux model is text-only: the request omits images)
        assert isinstance(sent, UserMessage)
        texts = [b.text for b in sent.content if isinstance(b, TextContent)] if isinstance(sent.content, list) \
            else [sent.content]
        joined = "\n".join(texts)
        assert '<file name="notes.txt">\nfirst line\nsecond line\n\n</file>' in joined
        assert joined.endswith("explain @notes.txt and @shot.png, and @nobody")
        assert any(isinstance(b, ImageContent) for b in sent.content)
        view = one_view(app, UserMessageView)
        assert "📎 notes.txt (2 lines)" in screen_text(app) and "first line" not in view.plain
        assert app.attachments.names == []  # the editor is empty again
    await session.close()


async def test_a_binary_attachment_is_refused_and_the_prompt_kept(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    (project / "blob.bin").write_bytes(b"\x00\x01\x02\xff" * 100)
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        app.editor.insert("look at @blob.bin")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "not a text or image file" in screen_text(app), what="the refusal")
        assert app.editor.text == "look at @blob.bin"
        assert faux_a.calls == 0
    await session.close()


async def test_pasting_an_image_path_attaches_it(project: Path, model_a: Model) -> None:
    (project / "my shot.png").write_bytes(PNG)
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        app.editor.post_message(events.Paste(f"'{project / 'my shot.png'}'"))
        await wait_until(pilot, lambda: app.editor.text.strip() == '@"my shot.png"', what="the reference")
        app.editor.post_message(events.Paste("just text"))
        await wait_until(pilot, lambda: "just text" in app.editor.text, what="plain paste")
    await session.close()


def _stub_xclip(folder: Path, output: bytes) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "clip.bin"
    data.write_bytes(output)
    script = folder / "xclip"
    script.write_text(f"#!/bin/sh\ncat '{data}'\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


async def test_ctrl_v_attaches_the_clipboard_image(project: Path, model_a: Model, baton_home: Path,
                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _stub_xclip(tmp_path / "bin", PNG)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.press("ctrl+v")
        await wait_until(pilot, lambda: "clipboard-" in app.editor.text, what="the pasted image")
        saved = Path(app.editor.text.strip()[1:])
        assert saved.read_bytes() == PNG and saved.parent == baton_home / "tmp"
    await session.close()


async def test_ctrl_v_without_a_clipboard_tool_says_so(project: Path, model_a: Model, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.press("ctrl+v")
        await wait_until(pilot, lambda: "no clipboard tool found" in screen_text(app), what="the notice")
    await session.close()


def test_references_and_pasted_paths(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x")
    (tmp_path / "dir").mkdir()
    (tmp_path / "pic.gif").write_bytes(b"GIF89a" + b"\x00" * 10)
    assert file_references('see @a.py, @dir @missing.txt and mail@a.py @"a.py"', tmp_path) == ["a.py"]
    assert pasted_image_reference(f"file://{tmp_path}/pic.gif", tmp_path) == "@pic.gif"
    assert pasted_image_reference(str(tmp_path / "a.py"), tmp_path) is None
    assert pasted_image_reference("two\nlines", tmp_path) is None
    text, images, attachments = attach("plain words", tmp_path)
    assert (text, images, attachments) == ("plain words", [], [])
