"""Print and JSON runs write each hook or MCP notice to stderr, one line each, and nothing for
any other event."""

from __future__ import annotations

import pytest

from baton.agent.events import AgentStartEvent, TurnStartEvent
from baton.sessions.events import ExtensionNoticeEvent
from baton.tui.cli.launch import _print_extension_notice


def test_a_notice_is_one_stderr_line_other_events_print_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    for event in (AgentStartEvent(), TurnStartEvent(), object()):
        _print_extension_notice(event)
    _print_extension_notice(ExtensionNoticeEvent("hook", "pre-tool hook timed out"))
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == "baton: hook: pre-tool hook timed out\n"


def test_a_model_fallback_is_one_stderr_line_other_events_print_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    from baton.providers.faux import faux_model
    from baton.sessions.events import ModelFallbackEvent
    from baton.tui.modes.print_mode import report_fallbacks

    for event in (AgentStartEvent(), ExtensionNoticeEvent("hook", "x"), object()):
        report_fallbacks(event)
    fallback = ModelFallbackEvent(faux_model("a", provider="p"), faux_model("b", provider="p"), "overloaded", 2)
    report_fallbacks(fallback)
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == f"baton: {fallback.text()}\n"
