"""Tests of single widgets and views: editor, streaming Markdown, transcript windowing."""

from __future__ import annotations

import gc
import weakref
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.app import App, ComposeResult

from baton.providers.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from baton.tui.app.completer import Completer, FileIndex
from baton.tui.app.widgets.completion import CompletionList
from baton.tui.app.widgets.editor import PromptEditor
from baton.tui.app.widgets.markdown_text import MarkdownPainter, MarkdownText
from baton.tui.app.widgets.transcript import Entry, Transcript
from tests.tui.app_helpers import screen_text, wait_until


class EditorApp(App[None]):
    def __init__(self, completer: Completer | None = None, history: list[str] | None = None) -> None:
        super().__init__()
        self.completion = CompletionList()
        self.editor = PromptEditor(completer=completer, completion=self.completion, history=history)
        self.events: list[Any] = []

    def compose(self) -> ComposeResult:
        yield self.completion
        yield self.editor

    def on_mount(self) -> None:
        self.editor.focus()

    def on_prompt_editor_submitted(self, message: PromptEditor.Submitted) -> None:
        self.events.append(("submit", message.text, message.follow_up))

    def on_prompt_editor_quit_requested(self) -> None:
        self.events.append(("quit",))

    def on_prompt_editor_dequeue_requested(self) -> None:
        self.events.append(("dequeue",))

    def on_prompt_editor_escape_pressed(self) -> None:
        self.events.append(("escape",))


async def test_enter_sends_and_newline_keys_insert() -> None:
    app = EditorApp()
    async with app.run_test() as pilot:
        await pilot.press("a", "shift+enter", "b", "ctrl+j", "c")
        assert app.editor.text == "a\nb\nc"
        await pilot.press("enter")
        await pilot.press("alt+enter")
        await pilot.pause()
        assert app.events == [("submit", "a\nb\nc", False), ("submit", "a\nb\nc", True)]


async def test_empty_editor_does_not_send_and_ctrl_d_quits() -> None:
    app = EditorApp()
    async with app.run_test() as pilot:
        await pilot.press("enter", "space", "enter")
        await pilot.press("backspace", "ctrl+d")
        await pilot.pause()
        assert app.events == [("quit",)]


async def test_history_up_down_keeps_the_draft() -> None:
    app = EditorApp(history=["first", "second\nline"])
    async with app.run_test() as pilot:
        await pilot.press(*"draft")
        await pilot.press("up")
        assert app.editor.text == "second\nline"
        await pilot.press("up")  # cursor is on the last line of a two-line entry: moves up a line
        assert app.editor.text == "second\nline"
        await pilot.press("up")
        assert app.editor.text == "first"
        await pilot.press("down")
        assert app.editor.text == "second\nline"
        await pilot.press("down")
        assert app.editor.text == "draft"
        app.editor.remember("third")
        assert app.editor.prompt_history[-1] == "third"


async def test_escape_then_up_is_alt_up_and_escape_alone_is_escape() -> None:
    app = EditorApp()
    async with app.run_test() as pilot:
        # a legacy terminal's Alt+Up: the parser yields Escape and Up back to back
        app.editor.post_message(events.Key("escape", "\x1b"))
        app.editor.post_message(events.Key("up", None))
        await pilot.pause(0.1)
        assert app.events == [("dequeue",)]
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert app.events == [("dequeue",), ("escape",)]
        await pilot.press("alt+up")
        await pilot.pause()
        assert app.events[-1] == ("dequeue",)


async def test_slash_and_at_completion(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("x", encoding="utf-8")
    index = FileIndex(tmp_path)
    index.load_now()
    completer = Completer(tmp_path, [("model", "Switch model"), ("hotkeys", "Keys")], {}, index)
    app = EditorApp(completer=completer)
    async with app.run_test() as pilot:
        await pilot.press("slash", "h")
        assert app.completion.is_open
        assert [c.replacement for c in app.completion.items] == ["/hotkeys"]
        await pilot.press("tab")
        assert app.editor.text == "/hotkeys "
        assert not app.completion.is_open
        app.editor.set_text("")
        await pilot.press(*"see @mai")
        assert app.completion.is_open and app.completion.items[0].replacement == "@src/main.py"
        await pilot.press("enter")  # accepts the completion, does not send
        assert app.editor.text == "see @src/main.py "
        assert app.events == []
        await pilot.press(*"@ma", "escape")
        assert not app.completion.is_open


def _painter() -> MarkdownPainter:
    return MarkdownPainter({"text-accent": "#ffc473", "text-primary": "#57a5e2", "text-muted": "#888888",
                            "boost": "#1c1c1c", "foreground": "#e0e0e0"}, dark=True)


def _text(strips: list[Any]) -> str:
    return "\n".join(strip.text.rstrip() for strip in strips)


def _colours(strips: list[Any], needle: str) -> set[Any]:
    line = next(strip for strip in strips if needle in strip.text)
    return {seg.style.color for seg in line if seg.style is not None and seg.text.strip()}


def test_open_fence_is_plain_until_it_closes() -> None:
    painter = _painter()
    stream = MarkdownText(streaming=True)
    stream.append("Intro paragraph.\n\n```python\n")
    for i in range(20):
        stream.append(f"x_{i} = {i}\n")
    assert stream.flush()
    open_render = stream.render(painter, 70, 0)
    assert "Intro paragraph." in _text(open_render)
    assert "x_19 = 19" in _text(open_render)
    assert len(_colours(open_render, "x_19")) == 1, "an open fence is plain text, not highlighted yet"
    stream.append("```\n\nAfter the fence.")
    stream.flush()
    closed = stream.render(painter, 70, 0)
    assert len(_colours(closed, "x_19")) > 1, "a closed fence is highlighted"
    stream.finish()
    assert not stream.is_streaming
    assert "After the fence." in _text(stream.render(painter, 70, 0))
    assert stream.text.endswith("After the fence.")


def test_an_open_fence_streamed_in_pieces_shows_every_line_and_renders_each_once() -> None:
    painter = _painter()
    lines = ["def f():\n", "\n", "    return " + "'long' + " * 12 + "'end'\n", "\tx = 1\n", "tail without newline"]
    body = "".join(lines)
    stream = MarkdownText(streaming=True)
    stream.append("```python\n")
    rendered = ""
    for start in range(0, len(body), 5):
        stream.append(body[start : start + 5])
        stream.flush()
        rendered = _text(stream.render(painter, 40, 0))
    at_once = MarkdownText(streaming=True)
    at_once.append("```python\n" + body)
    at_once.flush()
    assert rendered == _text(at_once.render(painter, 40, 0))
    shown = rendered.splitlines()
    assert shown[0].strip() == "def f():" and shown[1].strip() == "", "a blank line in the fence stays"
    assert sum("long" in line for line in shown) > 1, "a long line wraps inside the fence"
    assert shown[-1].strip() == "tail without newline"
    calls: list[str] = []
    original = painter.plain_fence

    def counting(fence_lines: Any, width: int) -> Any:
        calls.extend(fence_lines)
        return original(fence_lines, width)

    painter.plain_fence = counting  # type: ignore[method-assign]
    stream.append(" and more\nnext line\n")
    stream.flush()
    stream.render(painter, 40, 0)
    assert calls == ["tail without newline and more\n", "next line\n"], "only the new lines are rendered"


def test_unclosed_fence_is_rendered_as_markdown_at_the_end() -> None:
    painter = _painter()
    stream = MarkdownText(streaming=True)
    stream.append("~~~\ncode without an end")
    stream.flush()
    stream.finish()
    assert not stream.is_streaming
    assert "code without an end" in _text(stream.render(painter, 60, 0))


def _stream_in_pieces(source: str, size: int, painter: Any) -> tuple[MarkdownText, str]:
    """Stream ``source`` into a :class:`MarkdownText` ``size`` characters at a time, rendering
    (60 wide) after each flush as the transcript does; the stream and what it shows at the end."""
    stream = MarkdownText(streaming=True)
    for start in range(0, len(source), size):
        stream.append(source[start : start + size])
        stream.flush()
        stream.render(painter, 60, 0)
    return stream, _text(stream.render(painter, 60, 0))


def test_streamed_rendering_matches_the_finished_one() -> None:
    """Finished blocks are rendered once and cached while the stream goes on; what shows must be
    what rendering the whole text at once shows."""
    painter = _painter()
    source = ("# Plan\n\nFirst a paragraph with **bold** and `code`.\n\n1. one\n2. two\n\n3. three\n\n"
              "> a quote\n\n```python\nprint('hi')\n```\n\nLast words.\n")
    stream, streamed = _stream_in_pieces(source, 7, painter)
    stream.finish()
    assert streamed == _text(stream.render(painter, 60, 0))
    assert stream._chunks, "the finished head was cut into cached chunks"


def test_a_table_looks_the_same_streamed_finished_and_loaded() -> None:
    """A table's padding rows at a chunk's edge went while streaming but stayed when the finished
    (or resumed) text was rendered whole: the answer's spacing changed after a resize or ``-c``."""
    painter = _painter()
    source = ("Intro with a [link](https://example.com).\n\n> a quote\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
              "```python\nprint('hi')\n```\n\nDone.\n")
    stream, streamed = _stream_in_pieces(source, 10, painter)
    stream.finish()
    assert _text(stream.render(painter, 60, 0)) == streamed, "finishing (or a resize) changes nothing"
    assert _text(MarkdownText(source).render(painter, 60, 0)) == streamed, "a loaded session looks the same"


class TranscriptApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.transcript = Transcript()

    def compose(self) -> ComposeResult:
        yield self.transcript


async def test_live_transcript_drops_the_oldest_views() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.transcript
        total = transcript.MAX_LIVE + transcript.PAGE + 20
        for i in range(total):
            transcript.add_notice(f"notice {i}")
            if i % 10 == 0:
                await pilot.pause()
        await pilot.pause(0.1)
        rendered = len(transcript.mounted_views)
        assert rendered <= transcript.MAX_LIVE + transcript.PAGE
        assert len(transcript.entries) == total
        assert transcript.first_mounted > 0
        assert f"notice {total - 1}" in screen_text(app)
        assert "earlier entries · scroll up to show" in transcript.text


async def test_resumed_history_loads_earlier_pages_on_scroll_up() -> None:
    app = TranscriptApp()
    messages: list[Any] = []
    for i in range(100):
        messages.append(UserMessage(content=f"question {i}"))
        messages.append(AssistantMessage(content=[TextContent(text=f"answer {i}")], api="a", provider="p", model="m"))
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.transcript
        await transcript.load_history(messages)
        # short entries: pages are added until they fill two screens, and no more
        height = transcript.container_size.height
        await wait_until(pilot, lambda: transcript.virtual_size.height >= height * transcript.FILL_SCREENS,
                         what="two screens of entries")
        await pilot.pause(0.1)
        first = transcript.first_mounted
        assert 0 < first <= 200 - transcript.PAGE
        assert (200 - first) % transcript.PAGE == 0
        assert 200 - first <= transcript.PAGE * (height * transcript.FILL_SCREENS // 2 // transcript.PAGE + 1)
        assert "answer 99" in screen_text(app)
        transcript.scroll_home(animate=False, immediate=True)
        await wait_until(pilot, lambda: transcript.first_mounted < first, what="an earlier page")
        assert transcript.first_mounted == first - transcript.PAGE
        await pilot.pause(0.1)
        assert transcript.scroll_y > 0, "the view stays where the reader was"
        assert transcript.entries[first].view is not None
        assert isinstance(transcript.entries[0], Entry)


async def test_rows_far_off_screen_are_dropped_and_drawn_again_the_same() -> None:
    app = TranscriptApp()
    app.transcript.LIVE_SCREENS = 100  # the drawn rows of a long window, not the window's bound
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.transcript
        for i in range(20):
            transcript.add_notice(f"notice {i}: **bold** and `code`\nsecond line {i}")
        await pilot.pause(0.1)
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause(0.1)
        top = [list(strip)[:-1] for strip in app.screen._compositor.render_strips()]  # the scroll bar aside
        assert any("notice 0" in "".join(seg.text for seg in row) for row in top)
        transcript.follow()
        for i in range(20, 120):
            transcript.add_notice(f"notice {i}: **bold** and `code`\nsecond line {i}")
            if i % 5 == 0:
                await pilot.pause(0.05)
        await wait_until(pilot, lambda: "notice 119" in screen_text(app), what="the last notice")
        height = transcript.size.height
        assert transcript.virtual_size.height > 8 * height
        assert len(transcript._line_cache) <= 4 * height, "rows piled up (a few screens are kept)"
        assert not any(index < height for index in transcript._line_cache), "the top rows are still held"
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause(0.1)
        again = [list(strip)[:-1] for strip in app.screen._compositor.render_strips()]
        assert again == top


async def test_the_live_window_holds_a_few_screens_and_scrolling_up_shows_everything() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.transcript
        count = 120
        for i in range(count):
            transcript.add_notice(f"notice {i}\nsecond line {i}\nthird line {i}")
            if i % 5 == 0:
                await pilot.pause(0.05)
        await wait_until(pilot, lambda: f"notice {count - 1}" in screen_text(app), what="the last notice")
        await pilot.pause(0.1)
        height = transcript.size.height
        # 120 entries of 4 lines: the rendered ones are cut back to a few screens, not 150 entries
        assert len(transcript._lines) <= (transcript.LIVE_SCREENS + 1) * height + 4
        assert len(transcript.mounted_views) < count // 2
        assert transcript.first_mounted > 0
        # every entry is still there: scrolling up renders the earlier ones again
        seen = set()
        for _ in range(count):
            seen.update(i for i in range(count) if f"third line {i}" in transcript.text)
            if transcript.first_mounted == 0:
                break
            assert await transcript.load_earlier()
            await pilot.pause()
        assert transcript.first_mounted == 0
        assert seen == set(range(count))
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause(0.1)
        assert "notice 0" in screen_text(app)


async def test_replies_dropped_from_the_window_are_freed_at_once() -> None:
    """A reply's parts (its text, its tool calls) point back at it; dropped from the window, it
    must go at once, not wait (with its strips) for the cyclic collector's rare full pass."""
    messages: list[Any] = [UserMessage(content="go")]
    for i in range(60):
        call = ToolCall(id=f"call_{i}", name="bash", arguments={"command": f"echo step-{i}"})
        messages.append(AssistantMessage(content=[TextContent(text=f"Step {i}, then the next."), call],
                                         api="a", provider="p", model="m", stop_reason="toolUse"))
        messages.append(ToolResultMessage(tool_call_id=call.id, tool_name="bash",
                                          content=[TextContent(text=f"step-{i}")], is_error=False))
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.transcript
        transcript.reset(messages, visible=60)
        await pilot.pause(0.1)
        first = transcript.first_mounted
        views = [weakref.ref(e.view) for e in transcript.entries[first:] if e.view is not None]
        assert len(views) >= 50 and any(len(getattr(r(), "tool_views", [])) for r in views)
        gc.disable()
        try:
            transcript.add_notice("one more")
            await wait_until(pilot, lambda: transcript.first_mounted > first, what="the window cut back")
            dropped = [r for r, e in zip(views, transcript.entries[first:], strict=False) if e.view is None]
            assert dropped and all(r() is None for r in dropped), "a dropped reply waits for the collector"
        finally:
            gc.enable()


async def test_backslash_enter_is_a_newline_in_every_terminal() -> None:
    app = EditorApp()
    async with app.run_test() as pilot:
        # tmux and most terminals send Shift+Enter as a plain Enter; "\" + Enter still breaks the line
        await pilot.press("a", "backslash", "enter", "b")
        assert app.editor.text == "a\nb"
        assert app.events == []
        await pilot.press("enter")
        await pilot.pause()
        assert app.events == [("submit", "a\nb", False)]


async def test_tab_queues_a_follow_up_only_while_the_agent_works(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("x", encoding="utf-8")
    index = FileIndex(tmp_path)
    index.load_now()
    app = EditorApp(completer=Completer(tmp_path, [("model", "Switch model")], {}, index))
    async with app.run_test() as pilot:
        await pilot.press(*"later", "tab")
        await pilot.pause()
        assert app.events == [], "idle: Tab never sends"
        app.editor.running = True
        await pilot.press("tab")
        await pilot.pause()
        assert app.events == [("submit", "later", True)]
        # a path to complete at the cursor: Tab completes it instead
        app.editor.set_text("see @not")
        await pilot.press("tab")
        await pilot.pause()
        assert app.events == [("submit", "later", True)]
        assert app.completion.is_open or app.editor.text.startswith("see @notes.md")


async def test_page_down_at_the_bottom_keeps_following() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.transcript
        for i in range(60):
            transcript.add_notice(f"notice {i}")
        await pilot.pause(0.1)
        assert transcript.scroll_y == transcript.max_scroll_y
        transcript.scroll_page_up(animate=False)
        await pilot.pause(0.05)
        assert not transcript.following
        for _ in range(3):  # back down, then once more at the bottom (the view cannot move)
            transcript.scroll_page_down(animate=False)
            await pilot.pause(0.05)
        assert transcript.following
        for i in range(60, 70):
            transcript.add_notice(f"notice {i}")
        await pilot.pause(0.1)
        assert "notice 69" in screen_text(app)
        assert transcript.scroll_y == transcript.max_scroll_y
        await pilot.resize_terminal(50, 24)  # narrower: taller content; the view stays at the end
        await pilot.pause(0.2)
        assert transcript.scroll_y == transcript.max_scroll_y
        assert "notice 69" in screen_text(app)


async def test_follow_jumps_back_to_the_end() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.transcript
        for i in range(60):
            transcript.add_notice(f"notice {i}")
        await wait_until(pilot, lambda: "notice 59" in screen_text(app), what="the notices", timeout=20)
        transcript.scroll_home(animate=False)
        await wait_until(pilot, lambda: "notice 59" not in screen_text(app), what="the scroll home", timeout=20)
        transcript.follow()
        transcript.add_notice("after sending")
        await wait_until(pilot, lambda: "after sending" in screen_text(app), what="the jump to the end", timeout=20)
        assert transcript.following


def _painted(app: App[Any]) -> list[Any]:
    """The screen as painted, with styles (a cursor in its off phase paints differently)."""
    return [list(strip) for strip in app.screen._compositor.render_strips()]


async def _frames(pilot: Any, app: App[Any], seconds: float) -> list[list[Any]]:
    frames = []
    for _ in range(int(seconds / 0.1)):
        await pilot.pause(0.1)
        frames.append(_painted(app))
    return frames


async def test_cursor_is_steady_until_a_key_and_blinks_only_for_a_while_after_it() -> None:
    """An app just opened does no periodic work: no blink until the first key, and the blink
    stops again BLINK_SECONDS after the last key (the cursor then stays lit)."""
    app = EditorApp()
    async with app.run_test() as pilot:
        # Long enough windows that a loaded machine still sees a blink (0.5 s a phase) in them.
        app.editor.BLINK_SECONDS = 2.0
        await pilot.pause(0.2)
        lit = _painted(app)
        assert all(frame == lit for frame in await _frames(pilot, app, 1.3))
        await pilot.press("a")
        typed = await _frames(pilot, app, 1.6)
        assert any(frame != typed[0] for frame in typed)  # blinking
        await pilot.pause(1.0)
        settled = await _frames(pilot, app, 1.3)
        assert all(frame == settled[0] for frame in settled)
        await pilot.press("b")
        await pilot.press("backspace")
        assert app.editor.text == "a"
        await pilot.pause(2.6)
        after_edit = _painted(app)
        assert after_edit == settled[0]  # the same line with the cursor lit, not in the off phase


async def test_sending_stops_the_blink_until_the_next_key() -> None:
    """While the agent works after a send, the cursor stays lit: a blink would repaint the editor
    twice a second beside the streaming transcript."""
    app = EditorApp()
    async with app.run_test() as pilot:
        app.editor.BLINK_SECONDS = 30.0
        await pilot.press("a")
        typed = await _frames(pilot, app, 1.6)
        assert any(frame != typed[0] for frame in typed)  # blinking
        await pilot.press("enter")
        assert app.events == [("submit", "a", False)]
        await pilot.pause(0.2)
        sent = await _frames(pilot, app, 1.6)
        assert all(frame == sent[0] for frame in sent)
        await pilot.press("b")
        again = await _frames(pilot, app, 1.6)
        assert any(frame != again[0] for frame in again)  # a key brings the blink back


@pytest.mark.skipif(
    int(version("textual").split(".")[0]) < 8,
    reason="older Textual starts a pilot drag selection differently; measured and shipped with Textual 8",
)
async def test_text_in_the_transcript_can_be_selected_with_the_mouse() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 20)) as pilot:
        transcript = app.transcript
        transcript.add_notice("alpha beta gamma")
        transcript.add_notice("delta epsilon")
        await wait_until(pilot, lambda: "delta epsilon" in screen_text(app), what="the notices")
        rows = screen_text(app).splitlines()
        top = next(i for i, line in enumerate(rows) if "alpha" in line)
        bottom = next(i for i, line in enumerate(rows) if "delta" in line)
        await pilot.mouse_down(transcript, offset=(rows[top].index("beta"), top))
        await pilot.hover(transcript, offset=(rows[bottom].index("epsilon"), bottom))
        await pilot.mouse_up(transcript, offset=(rows[bottom].index("epsilon"), bottom))
        await pilot.pause(0.1)
        # Textual includes the cell under the pointer at the end of a drag.
        assert app.screen.get_selected_text() == "beta gamma\n\ndelta e"
