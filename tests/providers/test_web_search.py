"""The vendors' own web search, replayed over real sockets: Anthropic's web search server tool,
OpenAI Responses' web_search tool, Gemini's Google Search grounding (streams written in the shape
of each vendor's documentation, in tests/providers/fixtures/web_search/, plus OpenAI's recorded
one in ../shared). Each search and the sources cited become plain text blocks and a counted, priced
search; then the transcript goes to every other vendor and each request must be valid for it
(checked by the official SDKs' request types)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from baton.providers.messages import AssistantMessage, Context, TextContent, UserMessage
from baton.providers.models import Model
from baton.providers.options import StreamOptions
from baton.providers.web_search import SEARCH_MARK, searches_of
from tests.provider_scripts import text_reply
from tests.providers.claude_gemini_support import TOOLS, model, run_stream
from tests.replay_server import Reply

FIXTURES = Path(__file__).parent / "fixtures" / "web_search"
ON = {"webSearch": True}  # the replay server is not the vendor's own endpoint: say it searches

CLAUDE = model("anthropic-messages", "claude-sonnet-4-5", max_tokens=64000, compat=ON)
GPT = model("openai-responses", "gpt-5", compat=ON)
GEMINI = model("google-generative-ai", "gemini-2.5-flash", compat=ON)
CHAT = model("openai-completions", "gpt-4.1", reasoning=False)


def body_of(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


async def searched(target: Model, fixture: str, **options: Any) -> tuple[AssistantMessage, dict[str, Any]]:
    context = Context(system_prompt="sys", messages=[UserMessage(content="latest httpx?")], tools=TOOLS)
    run = await run_stream(target, context, [Reply.sse(body_of(fixture), chunk_size=53)], web_search=True, **options)
    assert isinstance(run.message, AssistantMessage) and run.message.stop_reason == "stop", run.message
    return run.message, run.requests[0].json()


def texts(message: AssistantMessage) -> list[str]:
    return [block.text for block in message.content if isinstance(block, TextContent)]


async def test_anthropic_search_becomes_text_with_sources_and_a_priced_search() -> None:
    message, request = await searched(CLAUDE, "anthropic_web_search.sse")
    assert request["tools"][0] == {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
    _valid_anthropic(request)
    assert [t["name"] for t in request["tools"][1:]] == [t.name for t in TOOLS]
    assert texts(message) == [
        "I'll search for the latest httpx release.",
        '[web search] "httpx latest release":\n'
        "1. [Release Notes - HTTPX](https://www.python-httpx.org/changelog/)\n"
        "2. [httpx · PyPI](https://pypi.org/project/httpx/)",
        "The latest release is ", "0.28.1", ".",
        "Sources:\n- [Release Notes - HTTPX](https://www.python-httpx.org/changelog/)",
    ]
    assert all(block.type == "text" for block in message.content)
    usage = message.usage
    assert searches_of(usage) == 1
    tokens = usage.cost.input + usage.cost.output + usage.cost.cache_read + usage.cost.cache_write
    assert usage.cost.total == pytest.approx(tokens + 0.01)
    # Saved and loaded back, the count survives (an extra field, as pi ignores it).
    again = AssistantMessage.model_validate(message.model_dump(by_alias=True))
    assert searches_of(again.usage) == 1


async def test_openai_search_and_url_citations() -> None:
    message, request = await searched(GPT, "openai_web_search.sse")
    assert request["tools"][-1] == {"type": "web_search"}
    assert "web_search_call.action.sources" in request["include"]  # else the pages found are not said
    _valid_responses(request)
    found = texts(message)
    assert found[0] == ('[web search] "httpx latest release":\n1. https://www.python-httpx.org/changelog/\n'
                        "2. https://pypi.org/project/httpx/")
    assert found[1].startswith("The latest release is 0.28.1")
    assert found[2] == "Sources:\n- [Release Notes - HTTPX](https://www.python-httpx.org/changelog/?utm_source=openai)"
    assert searches_of(message.usage) == 1


async def test_gemini_grounding_becomes_text() -> None:
    message, request = await searched(GEMINI, "gemini_google_search.sse")
    assert request["tools"][-1] == {"googleSearch": {}}
    assert request["toolConfig"]["includeServerSideToolInvocations"] is True  # beside the functions
    _valid_gemini(request)
    assert texts(message) == [
        "The latest httpx release is 0.28.1, released on 28 November 2024.",
        '[web search] "httpx latest release":\n'
        "1. [python-httpx.org](https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQHc1)\n"
        "2. [pypi.org](https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQFk2)",
    ]
    usage = message.usage
    assert searches_of(usage) == 1
    tokens = usage.cost.input + usage.cost.output + usage.cost.cache_read + usage.cost.cache_write
    assert usage.cost.total == pytest.approx(tokens + 14.0 / 1000)


async def test_search_is_offered_only_when_asked_and_where_the_vendor_has_it() -> None:
    context = Context(messages=[UserMessage(content="hi")], tools=TOOLS)
    plain = model("anthropic-messages", "claude-sonnet-4-5", max_tokens=64000)  # a server other than Anthropic's
    for target, asked in ((CLAUDE, False), (plain, True)):
        run = await run_stream(target, context, [Reply.sse(text_reply("anthropic-messages", "ok"))], web_search=asked)
        assert all(t.get("type") != "web_search_20250305" for t in run.requests[0].json()["tools"])
    from baton.providers.google_generative_ai import build_body
    from baton.providers.openai_responses import build_body as responses_body

    gpt = model("openai-responses", "gpt-5", base_url="https://api.openai.com/v1")
    assert responses_body(gpt, context, StreamOptions(web_search=True, thinking="low"))["tools"][-1] == {
        "type": "web_search"}
    minimal = responses_body(gpt, context, StreamOptions(web_search=True, thinking="minimal"))
    assert minimal["reasoning"]["effort"] == "minimal" and {"type": "web_search"} not in minimal["tools"]

    official = "https://generativelanguage.googleapis.com/v1beta"
    for gemini, offers in (("gemini-2.5-flash", False), ("gemini-3-pro", True)):
        # On Google's own endpoint: Gemini 3 searches beside the functions, 2.5 only without them.
        target = model("google-generative-ai", gemini, base_url=official)
        body = build_body(target, context, StreamOptions(web_search=True))
        assert ("googleSearch" in str(body["tools"])) is offers
        alone = build_body(target, Context(messages=[UserMessage(content="hi")]), StreamOptions(web_search=True))
        assert alone["tools"] == [{"googleSearch": {}}] and "toolConfig" not in alone


# ------------------------------------------------------------------------------ handoff


def _valid_anthropic(body: dict[str, Any]) -> None:
    from tests.providers.test_anthropic_messages_sdk import assert_valid_request

    assert_valid_request(body)


def _valid_responses(body: dict[str, Any]) -> None:
    from tests.providers.test_openai_responses import validate_request

    validate_request(body)


def _valid_gemini(body: dict[str, Any]) -> None:
    pytest.importorskip("google.genai")
    from tests.providers.test_google_generative_ai_sdk import assert_valid_request

    assert_valid_request(body)


def _valid_chat(body: dict[str, Any]) -> None:
    from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

    from tests.providers.typeddict_oracle import check

    check(body, CompletionCreateParamsStreaming)


TARGETS = [
    (model("anthropic-messages", "claude-opus-4-6", max_tokens=64000), _valid_anthropic),
    (model("openai-responses", "gpt-5.1"), _valid_responses),
    (model("google-generative-ai", "gemini-3-pro"), _valid_gemini),
    (CHAT, _valid_chat),
]


@pytest.mark.parametrize("source,fixture", [(CLAUDE, "anthropic_web_search.sse"), (GPT, "openai_web_search.sse"),
                                            (GEMINI, "gemini_google_search.sse")], ids=["claude", "gpt", "gemini"])
@pytest.mark.parametrize("target,valid", TARGETS, ids=["claude", "gpt", "gemini", "chat"])
async def test_search_results_hand_off_to_another_vendor(
    source: Model, fixture: str, target: Model, valid: Any
) -> None:
    message, _ = await searched(source, fixture)
    history = Context(system_prompt="sys", tools=TOOLS, messages=[
        UserMessage(content="latest httpx?"), message, UserMessage(content="and which Python does it need?")])
    run = await run_stream(target, history, [Reply.sse(text_reply(target.api, "ok"))])
    assert isinstance(run.message, AssistantMessage) and run.message.stop_reason == "stop", run.message
    body = run.requests[0].json()
    valid(body)
    sent = str(body)
    assert SEARCH_MARK in sent and "httpx latest release" in sent  # the search reads the same anywhere
    assert "EqgfCioI" not in sent and "Eo8BCioI" not in sent and "srvtoolu" not in sent and "ws_68c9a2" not in sent
