"""``--no-mcp`` turns every MCP server off, the project's included: the line saying what of an
untrusted project is ignored does not name ``.mcp.json`` then (trusting would not start its
servers either), and still names the rest (driven through ``baton -p`` with the demo model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tui.cli_harness import run_baton


def _project(tmp_path: Path, *, hooks: bool) -> Path:
    work = tmp_path / "work"
    (work / ".baton").mkdir(parents=True)
    (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "true"}}}))
    if hooks:
        hook = {"hooks": [{"type": "command", "command": "true"}]}
        (work / ".baton" / "settings.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [hook]}}))
    return work


def _notice(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "ignoring the untrusted" in line]


def test_no_mcp_does_not_call_the_project_servers_ignored(tmp_path: Path, baton_home: Path) -> None:
    work = _project(tmp_path, hooks=False)
    with_mcp = run_baton(baton_home, work, "-p", "--model", "demo/baton-demo", "hello")
    assert with_mcp.returncode == 0, with_mcp.stderr
    assert any(".mcp.json (1 server: db)" in line for line in _notice(with_mcp.stderr)), with_mcp.stderr
    without = run_baton(baton_home, work, "-p", "--no-mcp", "--model", "demo/baton-demo", "hello")
    assert without.returncode == 0, without.stderr
    assert not _notice(without.stderr) and ".mcp.json" not in without.stderr, without.stderr


def test_no_mcp_still_names_the_rest_that_waits_for_trust(tmp_path: Path, baton_home: Path) -> None:
    work = _project(tmp_path, hooks=True)
    done = run_baton(baton_home, work, "-p", "--no-mcp", "--model", "demo/baton-demo", "hello")
    assert done.returncode == 0, done.stderr
    (line,) = _notice(done.stderr)
    assert "hooks (UserPromptSubmit)" in line and ".mcp.json" not in line, line


async def test_the_app_declined_trust_notice_leaves_out_mcp_under_no_mcp(
        tmp_path: Path, baton_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from baton.providers.faux import FauxProvider, faux_model
    from baton.sessions import CodingSession, SessionOptions, load_settings
    from baton.tui.app.baton_app import BatonApp
    from baton.tui.app.widgets.pickers import ConfirmScreen
    from tests.tui.app_helpers import screen_text, wait_until

    work = _project(tmp_path, hooks=True)
    monkeypatch.setenv("HOME", str(tmp_path))
    model = faux_model("model-a", provider="prov-a", api="faux-a")
    with FauxProvider("faux-a"):
        session = await CodingSession.open(SessionOptions(
            cwd=work, model=model, tools=[], session="new", context_files=False,
            settings=load_settings(project_dir=work), mcp=False, extra_models=[model]))
        app = BatonApp(session)
        try:
            async with app.run_test(size=(160, 40)) as pilot:
                await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the trust question")
                await pilot.press("escape")
                await wait_until(pilot, lambda: "asked again at the next start" in screen_text(app),
                                 what="the refusal notice")
                flat = " ".join(line.strip() for line in screen_text(app).splitlines())
                line = flat[flat.index("ignoring the untrusted"):flat.index("asked again at the next start")]
                assert "hooks (UserPromptSubmit)" in line and ".mcp.json" not in line, line
        finally:
            await session.close()
