"""Model hot-swap: mid-run and idle switches, the change entries, and the handoff preview."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from baton.providers.faux import FauxProvider, FauxResponse, faux_model, faux_thinking, faux_tool_call
from baton.providers.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from baton.providers.models import Model
from baton.providers.transform import NO_RESULT_TEXT
from baton.sessions import CodingSession, SessionOptions, SessionStore
from baton.sessions.handoff import handoff_preview

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32).decode()


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_switch_mid_run_changes_only_the_next_call_and_adds_only_change_entries(
    options: SessionOptions, model_a: Model, model_b: Model, faux_a: FauxProvider, faux_b: FauxProvider,
    cwd: Path,
) -> None:
    (cwd / "notes.txt").write_text("hello\n")
    options.tools = ["ls"]
    options.thinking = "high"
    faux_a.add(FauxResponse(content=[faux_thinking("let me look", "sig-1"), faux_tool_call("ls", {}, id="call_1")]))
    faux_b.add(FauxResponse.text("finished on model b"))
    session = await CodingSession.open(options)
    assert session.thinking_level == "high"
    snapshot: dict[str, Any] = {}

    async def switch_when_tool_starts(event: Any) -> None:
        if event.type == "tool_execution_start":
            assert session.session_file is not None
            snapshot["lines"] = session.session_file.read_text().splitlines()
            await session.models.switch(model_b)
            snapshot["after_switch"] = session.session_file.read_text().splitlines()

    types: list[str] = []
    session.subscribe(switch_when_tool_starts)
    session.subscribe(lambda e: types.append(e.type))
    await session.prompt("list the files")

    assert faux_a.calls == 1 and faux_b.calls == 1  # the switch applied to the very next call
    assert session.model is model_b and session.thinking_level == "off"  # clamped: b has no reasoning
    assert "model_change" in types and "thinking_level_change" in types
    b_request = faux_b.requests[0]
    last_sent = b_request.messages[-1]
    assert isinstance(last_sent, ToolResultMessage)
    assert "notes.txt" in "".join(b.text for b in last_sent.content if isinstance(b, TextContent))
    assert isinstance(b_request.messages[1], AssistantMessage)
    assert [type(b).__name__ for b in b_request.messages[1].content] == ["TextContent", "ToolCall"]

    assert session.session_file is not None
    final = session.session_file.read_text().splitlines()
    before = snapshot["lines"]
    assert final[: len(before)] == before, "the switch never rewrites history"
    switch_entries = [json.loads(x) for x in snapshot["after_switch"][len(before) :]]
    assert [(e["type"], e.get("modelId") or e.get("thinkingLevel")) for e in switch_entries] == [
        ("model_change", "model-b"), ("thinking_level_change", "off")]
    rest = [json.loads(x) for x in final[len(snapshot["after_switch"]) :]]
    assert [(e["type"], e["message"]["role"]) for e in rest] == [("message", "toolResult"), ("message", "assistant")]
    await session.close()

    # the stored thinking of model a is intact, and resuming picks model b
    store = SessionStore.load(session.session_file)
    a_reply = next(e.message for e in store.entries if getattr(getattr(e, "message", None), "model", "") == "model-a")
    assert isinstance(a_reply, AssistantMessage)
    first_block = a_reply.content[0]
    assert isinstance(first_block, ThinkingContent) and first_block.thinking_signature == "sig-1"
    assert store.build_context().model == ("prov-b", "model-b")
    options.model = None
    options.session = str(session.session_file)
    resumed = await CodingSession.open(options)
    assert resumed.model.ref == model_b.ref
    await resumed.close()


async def test_switch_while_streaming_is_not_undone_by_the_finishing_reply(
    options: SessionOptions, model_b: Model, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse(content=["slow reply " * 20], delay=0.002))
    session = await CodingSession.open(options)

    async def switch_on_first_delta(event: Any) -> None:
        if event.type == "message_update" and session.model is not model_b:
            await session.models.switch(model_b)

    session.subscribe(switch_on_first_delta)
    await session.prompt("hi")
    assert session.session_file is not None
    kinds = [line["type"] for line in _lines(session.session_file)]
    assert kinds.index("message") < len(kinds) - 1
    assert SessionStore.load(session.session_file).build_context().model == ("prov-b", "model-b")
    await session.close()


def _rich_history(path: Path, cwd: Path, a: Model) -> None:
    """A session on model a with everything a handoff can lose."""
    store = SessionStore.create(path.parent, cwd, path=path)

    def reply(*blocks: Any, stop: str = "stop", error: str | None = None) -> AssistantMessage:
        return AssistantMessage(api=a.api, provider=a.provider, model=a.id, content=list(blocks),
                                stop_reason=stop, error_message=error)

    store.append_model_change(a.provider, a.id)
    store.append_message(UserMessage(content=[TextContent(text="look at these"),
                                              ImageContent(data=PNG, mime_type="image/png"),
                                              ImageContent(data=PNG, mime_type="image/png")]))
    call = ToolCall(id="call_1|fc_item", name="read", arguments={"path": "a.png"}, thought_signature="ts-1")
    store.append_message(reply(ThinkingContent(thinking="thinking one", thinking_signature="s1"),
                               ThinkingContent(thinking="", thinking_signature="secret", redacted=True),
                               TextContent(text="reading", text_signature="t1"), call, stop="toolUse"))
    store.append_message(ToolResultMessage(tool_call_id=call.id, tool_name="read",
                                           content=[ImageContent(data=PNG, mime_type="image/png")]))
    store.append_message(reply(ThinkingContent(thinking="thinking two", thinking_signature="s2"),
                               TextContent(text="it is a picture")))
    store.append_message(UserMessage(content="go on"))
    store.append_message(reply(TextContent(text="half"), stop="aborted", error="Request was aborted"))
    store.append_message(UserMessage(content="again"))
    store.append_message(reply(stop="error", error="overloaded"))
    orphan = ToolCall(id="call_2|fc_x", name="bash", arguments={"command": "ls"})
    store.append_message(reply(ThinkingContent(thinking="thinking three"), orphan, stop="toolUse"))
    store.append_message(UserMessage(content="never mind that"))  # the call above never got a result
    store.append_message(reply(TextContent(text="ok")))
    store.close()


async def test_handoff_preview_counts_match_what_the_request_held(
    baton_home: Path, cwd: Path, model_a: Model
) -> None:
    target = faux_model("claude-ish", provider="prov-c", api="anthropic-messages")  # text only
    path = cwd / "rich.jsonl"
    _rich_history(path, cwd, model_a)
    history = SessionStore.load(path).build_context().messages

    with FauxProvider("anthropic-messages", [FauxResponse.text("hello from c")]) as provider:
        session = await CodingSession.open(SessionOptions(
            cwd=cwd, model=target, tools=[], session=str(path), context_files=False, extra_models=[model_a]))
        # Absolute counts (the session's own preview counts only what a switch adds to them).
        preview = handoff_preview(session.messages, target)
        same = handoff_preview(session.messages, model_a)
        assert session.models.handoff_preview(target).is_empty  # already on it: nothing to lose by switching
        await session.prompt("continue")
        await session.close()

    request = provider.requests[0].messages[:-1]  # without the new prompt
    kept = [m for m in history if isinstance(m, AssistantMessage) and m.stop_reason not in ("error", "aborted")]
    sent = [m for m in request if isinstance(m, AssistantMessage)]
    assert len(sent) == len(kept)

    thinking_texts = {b.thinking for m in kept for b in m.content
                      if isinstance(b, ThinkingContent) and not b.redacted and b.thinking.strip()}
    as_text = sum(1 for m in sent for b in m.content if isinstance(b, TextContent) and b.text in thinking_texts)
    redacted_sent = sum(1 for m in sent for b in m.content if isinstance(b, ThinkingContent))
    redacted_stored = sum(1 for m in kept for b in m.content if isinstance(b, ThinkingContent) and b.redacted)

    def signatures(messages: list[AssistantMessage], include_redacted: bool) -> int:
        total = 0
        for m in messages:
            for b in m.content:
                signed = (
                    (isinstance(b, TextContent) and b.text_signature)
                    or (isinstance(b, ThinkingContent) and b.thinking_signature
                        and (include_redacted or not b.redacted))
                    or (isinstance(b, ToolCall) and b.thought_signature)
                )
                total += 1 if signed else 0
        return total

    def images(messages: list[Any]) -> int:
        return sum(1 for m in messages if not isinstance(m, AssistantMessage) and not isinstance(m.content, str)
                   for b in m.content if isinstance(b, ImageContent))

    stored_ids = [b.id for m in kept for b in m.content if isinstance(b, ToolCall)]
    sent_ids = [b.id for m in sent for b in m.content if isinstance(b, ToolCall)]
    synthetic = [m for m in request if isinstance(m, ToolResultMessage)
                 and any(isinstance(b, TextContent) and b.text == NO_RESULT_TEXT for b in m.content)]

    assert preview.thinking_as_text == as_text == 3
    assert preview.redacted_dropped == redacted_stored - redacted_sent == 1
    assert preview.signatures_dropped == signatures(kept, False) - signatures(sent, True) == 4
    assert preview.images_replaced == images(history) - images(request) == 3
    assert preview.tool_ids_rewritten == sum(1 for x, y in zip(stored_ids, sent_ids, strict=True) if x != y) == 2
    assert preview.aborted_turns_skipped == 1 and preview.error_turns_skipped == 1
    assert preview.synthetic_results == len(synthetic) == 1
    assert preview.summary().startswith("3 thinking blocks sent as text")
    assert not preview.is_empty
    # the model that wrote the history loses nothing but the failed turns and the missing result
    assert same.thinking_as_text == same.signatures_dropped == same.images_replaced == 0


async def test_thinking_handoff_drop_setting_reaches_the_request(
    options: SessionOptions, model_b: Model, faux_a: FauxProvider, faux_b: FauxProvider
) -> None:
    from tests.sessions.conftest import quiet_settings

    options.settings = quiet_settings(thinkingHandoff="drop")
    faux_a.add(FauxResponse(content=[faux_thinking("private reasoning", "sig"), "visible answer"]))
    faux_b.add("ok")
    session = await CodingSession.open(options)
    await session.prompt("hi")
    preview = session.models.handoff_preview(model_b)
    assert preview.thinking_dropped == 1 and preview.thinking_as_text == 0
    await session.models.switch(model_b)
    await session.prompt("next")
    sent = faux_b.requests[0].messages[1]
    assert isinstance(sent, AssistantMessage)
    assert [b.text for b in sent.content if isinstance(b, TextContent)] == ["visible answer"]
    await session.close()


def test_a_preview_without_losses_is_empty() -> None:
    from baton.providers.messages import TextContent, UserMessage
    from baton.sessions.handoff import handoff_preview

    model = faux_model("same", api="faux-a")
    history = [UserMessage(content=[TextContent(text="hi")]),
               AssistantMessage(content=[TextContent(text="hello")], api="faux-a", provider="faux", model="same")]
    preview = handoff_preview(history, model)
    assert preview.target == "faux/same"
    assert preview.is_empty and preview.summary() == "nothing lost"
    assert preview.to_dict()["summary"] == "nothing lost"
