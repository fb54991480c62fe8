"""Untrusted text (model, tool, file output) renders literally and harmlessly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from baton.providers.faux import FauxProvider, FauxResponse, faux_text, faux_thinking, faux_tool_call
from baton.providers.models import Model
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.render import StreamCleaner, clean, safe
from tests.tui.app_helpers import open_session, screen_text, settle, submit

HOSTILE = (
    "Look: [bold red]x[/] and [@click=app.quit]click me[/] "
    "\x1b[31mred\x1b[0m \x1b]0;pwned-title\x07 \x1b]8;;http://evil.example\x07link\x1b]8;;\x07 "
    "\x1b[2J\x1b[H\x9b31m END"
)


def _segments(app: Any) -> list[Any]:
    strips = app.screen._compositor.render_strips()
    return [segment for strip in strips for segment in strip]


def test_clean_strips_sequences_and_keeps_markup_literal() -> None:
    cleaned = clean(HOSTILE)
    assert "\x1b" not in cleaned and "\x9b" not in cleaned and "\x07" not in cleaned
    assert "[bold red]x[/]" in cleaned
    assert "[@click=app.quit]click me[/]" in cleaned
    assert "pwned-title" not in cleaned
    assert "link" in cleaned and "http://evil.example" not in cleaned
    content = safe("[bold red]x[/]")
    assert content.plain == "[bold red]x[/]"
    assert not content.spans


def test_stream_cleaner_handles_a_sequence_split_across_chunks() -> None:
    cleaner = StreamCleaner()
    out = cleaner.feed("plain \x1b[3") + cleaner.feed("1mred\x1b]0;ti") + cleaner.feed("tle\x07 done")
    out += cleaner.finish()
    assert out == "plain red done"


async def test_hostile_model_and_tool_text_renders_literally(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    faux_a.add(
        FauxResponse(content=[
            faux_thinking("thinking [bold]loud[/] \x1b[5mblink"),
            faux_tool_call("bash", {"command": "printf '[bold red]boom[/] \\033[31mansi\\033[0m \\033]0;t\\007ok\\n'"}),
        ]),
        FauxResponse(content=[faux_text(HOSTILE)]),
    )
    session = await open_session(project, model_a, tools=["bash"])
    app = BatonApp(session)
    async with app.run_test(size=(140, 50)) as pilot:
        await submit(pilot, app, "user says [b]hi[/b] \x1b[31m")
        await settle(pilot, app)
        await pilot.press("ctrl+t", "ctrl+o")
        await pilot.pause(0.1)
        text = screen_text(app)
        assert "[bold red]x[/]" in text
        assert "[@click=app.quit]click me[/]" in text
        assert "user says [b]hi[/b]" in text
        assert "thinking [bold]loud[/] blink" in text
        assert "[bold red]boom[/] ansi ok" in text
        assert "pwned-title" not in text
        for segment in _segments(app):
            assert "\x1b" not in segment.text and "\x07" not in segment.text
            meta = segment.style.meta if segment.style is not None else {}
            assert "@click" not in meta, f"clickable action in untrusted text: {meta!r}"
        # clicking the rendered answer must not trigger anything
        rows = screen_text(app).splitlines()
        row = next(i for i, line in enumerate(rows) if "[bold red]x[/]" in line)
        column = rows[row].index("[@click")
        await pilot.click(offset=(column + 2, row))
        await pilot.click(offset=(column + 8, row))
        await pilot.pause(0.05)
        assert app.is_running and app.return_code is None
    await session.close()


async def test_every_tool_renderer_shows_markup_literally(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    # One marker per renderer path: read, edit (added, removed and context lines), write, bash,
    # grep, find, ls, an error result and the call headers/arguments.
    (project / "notes.txt").write_text(
        "[bold red]CTXA[/]\n[i]OLD[/i]\n[bold red]CTXB[/]\n" + "".join(f"line {i}\n" for i in range(5))
    )
    (project / "[u]NAME.md").write_text("named\n")
    faux_a.add(
        FauxResponse(content=[
            faux_tool_call("read", {"path": "notes.txt"}),
            faux_tool_call("edit", {"path": "notes.txt",
                                    "edits": [{"oldText": "[i]OLD[/i]", "newText": "[b]NEW[/b]"}]}),
            faux_tool_call("write", {"path": "made.txt", "content": "[reverse]WRITE[/reverse]\n"}),
            faux_tool_call("bash", {"command": "echo '[blink]BASH[/blink]'"}),
            faux_tool_call("grep", {"pattern": "CTX", "path": "."}),
            faux_tool_call("find", {"pattern": "*NAME*"}),
            faux_tool_call("ls", {"path": "."}),
            faux_tool_call("read", {"path": "[s]MISSING[/s].txt"}),
        ]),
        FauxResponse(content=[faux_text("done")]),
    )
    session = await open_session(project, model_a, tools=["read", "edit", "write", "bash", "grep", "find", "ls"])
    app = BatonApp(session)
    async with app.run_test(size=(160, 400)) as pilot:
        await submit(pilot, app, "go")
        await settle(pilot, app)
        await pilot.press("ctrl+o")
        await pilot.pause(0.2)
        text = screen_text(app)
        for literal in ("[bold red]CTXA[/]", "[bold red]CTXB[/]", "[i]OLD[/i]", "[b]NEW[/b]",
                        "[reverse]WRITE[/reverse]", "[blink]BASH[/blink]", "[u]NAME.md", "[s]MISSING[/s].txt"):
            assert literal in text, f"{literal} was not shown literally"
        for segment in _segments(app):
            style = segment.style
            if style is None:
                continue
            for word in ("CTXA", "CTXB", "OLD", "NEW", "WRITE", "BASH", "NAME", "MISSING"):
                if word in segment.text and segment.text.strip() == word:
                    raise AssertionError(f"{word} rendered on its own: markup was parsed ({style!r})")
            assert not style.blink and not style.reverse and not style.strike, (segment.text, style)
    await session.close()
