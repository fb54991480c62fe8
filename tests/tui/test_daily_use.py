"""Rough edges of daily use in the interactive app (issue 25, items 8–14), driven with Textual's pilot."""

from __future__ import annotations

import re
from pathlib import Path

from baton.providers.faux import FauxProvider, FauxResponse, faux_model
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.session_picker import SessionPicker
from tests.tui.app_helpers import open_session, screen_text, settle, submit, wait_until
from tests.tui.cli_harness import run_baton

LONG_NAME = faux_model("claude-sonnet-4-5-20250929", provider="anthropic", api="faux-a", reasoning=True,
                       context_window=200_000)


async def test_the_footer_keeps_its_usage_line_after_a_resize_to_60_columns(
    project: Path, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse.text("ok", usage={"input": 1200, "output": 30}))
    session = await open_session(project, LONG_NAME)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.press(*"hi", "enter")
        await settle(pilot, app)
        await pilot.resize_terminal(60, 30)
        await pilot.pause(0.3)
        footer = screen_text(app).splitlines()[-2:]
        assert "anthropic/claude-sonnet" in footer[0]
        assert "$0.00" in footer[1] and "auto" in footer[1] and "context" in footer[1]
    await session.close()


def _flat(app: BatonApp) -> str:
    return " ".join(screen_text(app).replace("│", " ").split())


async def test_an_attached_four_line_file_is_said_to_have_four_lines(project: Path, faux_a: FauxProvider) -> None:
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n\nprint(add(2, 3))\n")
    faux_a.add("It adds.")
    session = await open_session(project, LONG_NAME)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "@calc.py what does it do")
        await settle(pilot, app)
        assert "calc.py (4 lines)" in _flat(app)
    await session.close()


async def test_a_created_one_line_file_says_one_line(project: Path, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.tool_call("write", {"path": "one.txt", "content": "just one\n"}), "Written.")
    session = await open_session(project, LONG_NAME, tools=["write"])
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "write it")
        await settle(pilot, app)
        text = _flat(app)
        assert "created · 1 line," in text and "1 lines" not in text
    await session.close()


async def test_a_numbered_markdown_list_keeps_its_dots(project: Path, faux_a: FauxProvider) -> None:
    faux_a.add("Steps:\n\n1. first\n2. second\n")
    session = await open_session(project, LONG_NAME)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "how")
        await settle(pilot, app)
        lines = [line.strip() for line in screen_text(app).splitlines()]
        assert "1. first" in lines and "2. second" in lines
    await session.close()


async def test_context_command_and_footer_show_the_same_percentage(project: Path, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.text("ok", usage={"input": 50_000, "output": 100, "totalTokens": 50_100}))
    session = await open_session(project, LONG_NAME)
    app = BatonApp(session)
    async with app.run_test(size=(110, 40)) as pilot:
        await submit(pilot, app, "hi")
        await settle(pilot, app)
        await submit(pilot, app, "/context")
        await wait_until(pilot, lambda: "Context " in screen_text(app), what="the /context notice")
        footer = screen_text(app).splitlines()[-1]
        percent = re.search(r"context (\d+)%", footer)
        assert percent is not None
        headline = next(line for line in screen_text(app).splitlines() if "Context " in line)
        assert f"({percent.group(1)}%)" in headline
    await session.close()


async def test_a_shell_command_without_output_says_so(project: Path) -> None:
    session = await open_session(project, LONG_NAME)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "!true")
        await wait_until(pilot, lambda: "exit 0" in _flat(app) or "(no output)" in _flat(app), what="the result")
        await app.transcript.flush_now()
        await pilot.pause(0.1)
        assert "(no output)" in _flat(app)
    await session.close()


async def test_resume_with_no_other_session_says_so(project: Path) -> None:
    session = await open_session(project, LONG_NAME)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "/resume")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker), what="the picker")
        await pilot.pause(0.1)
        assert "No other session in this directory" in _flat(app)
        await pilot.press("escape")
    await session.close()


def test_the_demo_model_lists_the_files_by_name(home: Path, workdir: Path) -> None:
    names = ["alpha.py", "beta.txt", "gamma.md", "delta.json", "epsilon.cfg", "zeta.sh"]
    for name in names:
        (workdir / name).write_text("x\n")
    (workdir / "src").mkdir()
    result = run_baton(home, workdir, "-p", "--model", "demo/baton-demo", "list files")
    assert result.returncode == 0, result.stderr
    assert "total " not in result.stdout
    assert all(f"`{name}`" in result.stdout for name in names) and "`src/`" in result.stdout


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 17


async def test_an_image_sent_to_a_text_only_model_is_said_not_sent(project: Path, faux_a: FauxProvider) -> None:
    """Issue 25, item 13: the transcript showed ``[image: image/png]`` while the request carried
    "(image omitted…)"."""
    (project / "shot.png").write_bytes(PNG)
    faux_a.add("I cannot see it.")
    assert "image" not in LONG_NAME.input
    session = await open_session(project, LONG_NAME)
    app = BatonApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        await submit(pilot, app, "what is in @shot.png")
        await settle(pilot, app)
        text = _flat(app)
        assert "[image: image/png — not sent: anthropic/claude-sonnet-4-5-20250929 reads text only]" in text
    request = faux_a.requests[0]
    assert "image omitted" in str(request.messages[0].content)
    await session.close()


async def test_tree_draws_branches_marks_the_current_point_and_hides_bookkeeping(
    project: Path, faux_a: FauxProvider
) -> None:
    """Issue 25, item 10."""
    faux_a.add(FauxResponse.tool_call("write", {"path": "a.txt", "content": "a\n"}), "Wrote alpha.",
               "Reply beta.", "Reply gamma.")
    session = await open_session(project, LONG_NAME, tools=["write"])
    app = BatonApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        for text in ("alpha", "beta"):
            await submit(pilot, app, text)
            await settle(pilot, app)
        assert any(n.bookkeeping for n in session.tree()), "the write left checkpoint entries"
        beta = next(n for n in session.tree() if n.kind == "user" and n.preview == "beta")
        session.navigate(beta.id)  # back to before "beta": a new branch
        await submit(pilot, app, "gamma")
        await settle(pilot, app)
        await submit(pilot, app, "/tree")
        await wait_until(pilot, lambda: "Session tree" in screen_text(app), what="the tree")
        rows = [line.strip(" │") for line in screen_text(app).splitlines()]
        text = "\n".join(rows)
        assert "checkpoint before" not in text and "checkpoint after" not in text and "custom" not in text
        assert any(r.startswith("├─ ● user beta") or r.startswith("├─ ○ user beta") for r in rows), text
        assert any(r.startswith("└─ ● user gamma") for r in rows), text
        assert any("◆ assistant Reply gamma." in r and "← current" in r for r in rows), text
        await pilot.press("escape")
        await submit(pilot, app, "/tree all")
        await wait_until(pilot, lambda: "custom checkpoint" in screen_text(app), what="the whole tree")
        await pilot.press("escape")
    await session.close()
