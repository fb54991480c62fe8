"""Pilot tests: prompt templates and skills in the app, the project-trust question, /mcp and the
footer's MCP status, on a real CodingSession with faux models."""

from __future__ import annotations

import json
from pathlib import Path

from baton.providers.faux import FauxProvider
from baton.providers.messages import UserMessage
from baton.providers.models import Model
from baton.sessions import CodingSession, SessionOptions, load_settings
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.pickers import ConfirmScreen
from tests.tui.app_helpers import open_session, screen_text, settle, wait_until


async def test_templates_complete_and_expand(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    prompts = project / ".baton" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $1 now.\n")
    skill = project / ".claude" / "skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: Ship it\n---\nDeploy steps.\n")
    faux_a.add("reviewed", "deployed")
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press(*"/rev")
        await wait_until(pilot, lambda: "Review a file" in screen_text(app), what="template in completion")
        assert "<file>" in screen_text(app)
        app.editor.set_text("")
        await pilot.press(*"/review app.py", "enter")
        await settle(pilot, app)
        await pilot.press(*"/skill:dep")
        await wait_until(pilot, lambda: "Ship it" in screen_text(app), what="skill in completion")
        app.editor.set_text("")
        await pilot.press(*"/skill:deploy now", "enter")
        await settle(pilot, app)
    await session.close()
    sent = [m for m in session.messages if isinstance(m, UserMessage)]
    texts = [m.content if isinstance(m.content, str) else m.content[0].text for m in sent]  # type: ignore[union-attr]
    assert texts[0] == "Review app.py now."
    assert texts[1].startswith('<skill name="deploy"') and texts[1].endswith("now")


async def test_trust_question_then_mcp_listing_and_footer(project: Path, model_a: Model, faux_a: FauxProvider,
                                                          baton_home: Path) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"local": {"command": "/nonexistent/srv"}}}))
    session = await CodingSession.open(SessionOptions(
        cwd=project, model=model_a, tools=[], session="none", context_files=False,
        settings=load_settings(project_dir=project), start_mcp=False))
    app = BatonApp(session)
    async with app.run_test(size=(110, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the trust question")
        assert ".mcp.json (1 server: local)" in screen_text(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "MCP 0/1 ✗ local" in screen_text(app), timeout=30, what="footer status")
        await pilot.press(*"/mcp", "enter")
        await wait_until(pilot, lambda: "last error:" in screen_text(app), what="/mcp listing")
        assert "failed" in screen_text(app)
    await session.close()
    trusted = json.loads((baton_home / "trusted-projects.json").read_text())
    assert str(project) in trusted


async def test_declining_trust_keeps_project_servers_off(project: Path, model_a: Model,
                                                         faux_a: FauxProvider) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"local": {"command": "/nonexistent/srv"}}}))
    session = await CodingSession.open(SessionOptions(
        cwd=project, model=model_a, tools=[], session="none", context_files=False,
        settings=load_settings(project_dir=project)))
    app = BatonApp(session)
    async with app.run_test(size=(110, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the trust question")
        await pilot.press("escape")
        await wait_until(pilot, lambda: "stay off" in screen_text(app), what="the refusal notice")
        assert session.mcp.statuses() == []
    await session.close()
