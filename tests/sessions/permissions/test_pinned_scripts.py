"""The workspace scripts a trusted project's hooks run are out of the model's reach: trust pins
their content and checks it right before a hook starts, but a model that could rewrite one
between that check and the start would run its code outside the sandbox. So the sandbox mounts
them read-only and a file tool's write to one always asks, even in ``full``.

The script's name is spelled so no text check sees it (``che''ck.sh``): what stops the model must
be the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baton.sessions import CodingSession
from baton.sessions.permissions import ApprovalAnswer
from baton.tools.sandbox import probe
from tests.sessions.permissions.helpers import run_call

needs_sandbox = pytest.mark.skipif(not probe().available, reason=f"no sandbox here: {probe().reason}")
SCRIPT = "echo checked\n"


@pytest.fixture
def project(tmp_path: Path, baton_home: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".baton").mkdir(parents=True)
    (root / "scripts").mkdir()
    (root / "scripts" / "check.sh").write_text(SCRIPT)
    (root / "notes.txt").write_text("free to change\n")
    hooks = {"PreToolUse": [{"matcher": "read", "hooks": [{"type": "command", "command": "bash scripts/check.sh"}]}]}
    (root / ".baton" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    return root


@needs_sandbox
@pytest.mark.usefixtures("sandbox_kind")
async def test_a_sandboxed_command_cannot_rewrite_a_trusted_hooks_script(project: Path) -> None:
    outcome = await run_call(project, "bash", {"command": "echo 'touch /tmp/pwned' >> scripts/che''ck.sh"},
                             read_project=True, trust_project=True)
    assert outcome.is_error and "Read-only file system" in outcome.result_text, outcome.result_text
    assert (project / "scripts" / "check.sh").read_text() == SCRIPT
    other = await run_call(project, "bash", {"command": "echo more >> notes.txt"},
                           read_project=True, trust_project=True)
    assert not other.is_error and (project / "notes.txt").read_text() == "free to change\nmore\n"


async def test_a_file_tool_asks_before_writing_a_trusted_hooks_script_even_in_full(project: Path) -> None:
    outcome = await run_call(project, "write", {"path": "scripts/check.sh", "content": "touch /tmp/pwned\n"},
                             approval="full", answers=[ApprovalAnswer("deny")], read_project=True, trust_project=True)
    assert [r.tool_name for r in outcome.asked] == ["write"], outcome.result_text
    assert (project / "scripts" / "check.sh").read_text() == SCRIPT


async def test_an_untrusted_projects_scripts_are_ordinary_files(project: Path) -> None:
    outcome = await run_call(project, "write", {"path": "scripts/check.sh", "content": "echo new\n"},
                             approval="full", answers=[], read_project=True, trust_project=False)
    assert outcome.asked == [] and not outcome.is_error, outcome.result_text
    assert (project / "scripts" / "check.sh").read_text() == "echo new\n"


@needs_sandbox
async def test_trusting_the_project_mid_session_protects_its_scripts_from_then_on(project: Path) -> None:
    def trust_now(session: CodingSession) -> None:
        assert session.extensions.pending_trust is not None
        session.extensions.trust_project(remember=False)

    outcome = await run_call(project, "bash", {"command": "echo 'touch /tmp/pwned' >> scripts/che''ck.sh"},
                             read_project=True, prepare=trust_now)
    assert outcome.is_error and "Read-only file system" in outcome.result_text, outcome.result_text
    assert (project / "scripts" / "check.sh").read_text() == SCRIPT
