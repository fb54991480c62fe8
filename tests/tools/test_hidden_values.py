"""write and edit never put ``[redacted]`` where a file holds a key the model saw as that marker.

The tools run against real files with a real key in the environment (the redactor's source);
the end-to-end story through ``baton -p`` is in ``tests/tui/test_keys_write_back.py``.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baton.agent.tool import ToolError
from baton.providers.redact import REDACTED, redact
from baton.providers.secret_forms import secret_forms
from baton.tools.edit import EditTool
from baton.tools.hidden_values import adds_marker_over_hidden_value
from baton.tools.write import WriteTool
from tests.tools.conftest import Call

KEY = "sk-ant-api03-Vq7Np2Lm9Xc4Bz1Kt6Wy3Hd8Rf5Gs0Ja"


@pytest.fixture(autouse=True)
def key_in_environment(baton_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


async def test_a_key_kept_in_base64_is_protected_too(cwd: Path, call: Call) -> None:
    """The model saw the base64 form as ``[redacted]`` as well: writing that back is refused."""
    encoded = base64.b64encode(KEY.encode()).decode()
    original = f"apiVersion: v1\ndata:\n  key: {encoded}\n"
    target = cwd / "secret.yaml"
    target.write_text(original)
    seen = redact(original)
    assert REDACTED in seen
    with pytest.raises(ToolError, match=r"hidden from you as \[redacted\]"):
        await call(WriteTool(str(cwd)), path="secret.yaml", content=seen + "  other: x\n")
    assert target.read_text() == original


async def test_crlf_file_edit_refused_and_hidden_miss_explained(cwd: Path, call: Call) -> None:
    original = f"A=1\r\nKEY={KEY}\r\nB=2\r\n"
    target = cwd / ".env"
    target.write_bytes(original.encode())
    with pytest.raises(ToolError, match="hidden from you"):
        await call(EditTool(str(cwd)), path=".env", oldText="B=2", newText=f"B=3\nC={REDACTED}")
    with pytest.raises(ToolError, match="holds a hidden value where you see"):
        await call(EditTool(str(cwd)), path=".env",
                   edits=[{"oldText": "A=1", "newText": "A=0"}, {"oldText": f"KEY={REDACTED}", "newText": "KEY="}])
    assert target.read_bytes() == original.encode()
    await call(EditTool(str(cwd)), path=".env", oldText="B=2", newText="B=3")
    assert target.read_bytes() == original.replace("B=2", "B=3").encode()


async def test_a_literal_marker_already_in_the_file_is_counted(cwd: Path, call: Call) -> None:
    """The file documents the marker and holds a key: keeping its own markers is fine, writing
    back what the model saw (one more marker, where the key was) is not."""
    original = f"# keys show as {REDACTED} in logs\nKEY={KEY}\n"
    target = cwd / "notes.env"
    target.write_text(original)
    with pytest.raises(ToolError, match="hidden from you"):
        await call(WriteTool(str(cwd)), path="notes.env", content=redact(original))
    await call(EditTool(str(cwd)), path="notes.env", oldText=f"show as {REDACTED} in logs",
               newText=f"show as {REDACTED} in the logs")
    assert KEY in target.read_text()


async def test_a_plain_miss_stays_a_plain_miss(cwd: Path, call: Call) -> None:
    """An oldText with the marker in a file without a key gets the ordinary message."""
    (cwd / "a.txt").write_text("nothing hidden here\n")
    with pytest.raises(ToolError, match="Could not find the exact text"):
        await call(EditTool(str(cwd)), path="a.txt", oldText=f"x={REDACTED}", newText="x=1")


_TEXT = st.text(alphabet=st.characters(codec="utf-8", categories=["L", "N", "P", "Zs"]) | st.just("\n"),
                max_size=40)


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=_TEXT, after=_TEXT, form=st.sampled_from(secret_forms(KEY)), extra=_TEXT)
def test_writing_back_what_the_model_saw_never_loses_the_key(before: str, after: str, form: str, extra: str) -> None:
    """Whatever surrounds the key (in any form the redactor knows), the text the model saw,
    changed anywhere else, is never accepted over the original."""
    original = before + form + after
    seen = redact(original)
    assert adds_marker_over_hidden_value(original, seen + extra)
    assert adds_marker_over_hidden_value(original, extra + seen)


@settings(max_examples=200)
@given(old=_TEXT, new=_TEXT)
def test_files_without_a_key_are_never_refused(old: str, new: str) -> None:
    assert not adds_marker_over_hidden_value(old, new + REDACTED)
    assert not adds_marker_over_hidden_value(None, new + REDACTED)
