"""Tools own their metadata: the registry, the prompt summaries and the typed details views."""

from __future__ import annotations

import json
from pathlib import Path

from baton.sessions.system_prompt import build_system_prompt
from baton.tools import TOOL_MODULES, TOOL_NAMES, details_type_for, tool_class, tools_by_name
from baton.tools.details import BashDetails, ReadDetails, WriteDetails, parse_details


def test_name_lists_and_summaries_come_from_the_tool_classes(tmp_path: Path) -> None:
    assert tuple(TOOL_MODULES) == TOOL_NAMES and all(tool_class(n).name == n for n in TOOL_NAMES)
    prompt = build_system_prompt(cwd=tmp_path, tools=list(TOOL_NAMES))
    for name in TOOL_NAMES:
        summary = tool_class(name).prompt_summary
        assert summary and f"- {name}: {summary}" in prompt
    assert details_type_for("bash") is BashDetails and details_type_for("ls") is None
    assert details_type_for("no-such-tool") is None


async def test_real_results_read_through_their_views_and_stay_plain_json(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    read, write, bash = tools_by_name(["read", "write", "bash"], str(tmp_path))
    shown = await read.execute("1", {"path": "a.txt", "offset": 2})
    written = await write.execute("2", {"path": "b.txt", "content": "x\ny\n"})
    ran = await bash.execute("3", {"command": "exit 3"})
    for result in (shown, written, ran):
        assert json.loads(json.dumps(result.details)) == result.details  # persisted as pi's dicts
    assert parse_details(ReadDetails, shown.details) == ReadDetails("text", 2, 3, 3)
    assert parse_details(WriteDetails, written.details) == WriteDetails(bytes=4, lines=2, created=True)
    view = parse_details(BashDetails, ran.details)
    assert view.exit_code == 3 and view.has_facts and not view.aborted and view.duration_ms is not None


def test_views_tolerate_pi_spellings_and_junk() -> None:
    view = parse_details(BashDetails, {"exit_code": 1, "full_output_path": "/tmp/o", "durationMs": True})
    assert (view.exit_code, view.full_output_path, view.duration_ms, view.has_facts) == (1, "/tmp/o", None, False)
    assert parse_details(ReadDetails, None) == ReadDetails()
    assert parse_details(WriteDetails, {"bytes": "12", "created": 1}) == WriteDetails(None, None, True)
