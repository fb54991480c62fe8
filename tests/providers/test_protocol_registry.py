"""One registration point per wire protocol (docs/architecture.md, "Adding a wire protocol").

The built-in adapters own their API names and tool-call id normalisers; the known-API list derives
from the registry; and a new protocol with its own framing (not SSE) and request signing runs
through the shared driver after one registration line, over a real local socket.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

import httpx
import pytest

from baton.providers.adapter import HttpRequest, MessageBuilder, ProviderError
from baton.providers.dispatch import (
    WIRE_PROTOCOLS,
    id_normalizer_for,
    known_apis,
    register_adapter,
    stream,
    unregister,
    wire_adapter,
)
from baton.providers.messages import AssistantMessage, Context, ToolCall, ToolResultMessage, UserMessage
from baton.providers.models import Model
from baton.providers.models_json import SUPPORTED_APIS
from baton.providers.options import StreamOptions
from baton.providers.tool_ids import IdNormalizer
from tests.replay_server import ReplayServer, Reply

API = "test-ndjson"


@pytest.mark.parametrize("api", list(WIRE_PROTOCOLS))
def test_each_builtin_adapter_owns_its_name_and_id_rules(api: str) -> None:
    adapter = wire_adapter(api)
    assert adapter is not None and adapter.api == api
    model = Model(id="m", api=api, provider="p")
    assert id_normalizer_for(model) is adapter.tool_call_id_normalizer(model)
    assert id_normalizer_for(model) is not None


def test_known_apis_derive_from_the_registry() -> None:
    assert SUPPORTED_APIS == known_apis() == (*WIRE_PROTOCOLS, "faux")
    assert id_normalizer_for(Model(id="m", api="faux", provider="faux")) is None


class NdjsonFrames:
    """One JSON object per line: a framing the SSE decoder would not read."""

    def __init__(self) -> None:
        self.buffer = b""

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        *lines, self.buffer = (self.buffer + chunk).split(b"\n")
        return [("message", line.decode()) for line in lines if line.strip()]

    def close(self) -> list[tuple[str, str]]:
        rest, self.buffer = self.buffer, b""
        return [("message", rest.decode())] if rest.strip() else []


class NdjsonDecoder:
    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.stopped = False

    def feed(self, event: str, data: str) -> None:
        payload = json.loads(data)
        if "text" in payload:
            self.builder.text_delta(payload["text"])
        if "stop" in payload:
            self.builder.set_stop_reason(payload["stop"])
            self.stopped = True

    def finish(self) -> None:
        if not self.stopped:
            raise ProviderError("stream ended before its stop marker")
        self.builder.close_all()


def shout(tool_call_id: str) -> str:
    return tool_call_id.upper().replace("|", "-")


class NdjsonAdapter:
    """A protocol with its own id rules, framing and signature: the shape a Bedrock adapter has."""

    api = API

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.signed = 0

    def tool_call_id_normalizer(self, model: Model) -> IdNormalizer | None:
        return shout

    def build_request(
        self, model: Model, context: Context, options: StreamOptions, api_key: str | None
    ) -> HttpRequest:
        ids = [m.tool_call_id for m in context.messages if isinstance(m, ToolResultMessage)]
        return HttpRequest(f"{self.base_url}/ndjson", {"accept": "application/x-ndjson"}, {"ids": ids})

    def create_decoder(self, model: Model, builder: MessageBuilder) -> NdjsonDecoder:
        return NdjsonDecoder(builder)

    def create_frame_decoder(self) -> NdjsonFrames:
        return NdjsonFrames()

    def sign(self, request: httpx.Request) -> None:
        self.signed += 1
        request.headers["x-signature"] = hashlib.sha256(request.content).hexdigest()
        request.headers["x-attempt"] = str(self.signed)


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    body = b'{"text": "Hel"}\n{"te' + b'xt": "lo"}\n{"stop": "stop"}'
    replies = [
        Reply.json_error(503, {"error": {"message": "busy"}}),
        Reply(chunks=[body[:9], body[9:]], headers={"content-type": "application/x-ndjson"}),
    ]
    with ReplayServer(replies) as running:
        yield running


async def test_a_new_protocol_is_one_adapter_and_one_registration(server: ReplayServer) -> None:
    model = Model(id="n-1", api=API, provider="tests", base_url=server.url)
    other = AssistantMessage(api="openai-responses", provider="openai", model="gpt",
                             content=[ToolCall(id="call_1|fc_2", name="ls", arguments={})], stop_reason="toolUse")
    context = Context(messages=[UserMessage(content="hi"), other,
                                ToolResultMessage(tool_call_id="call_1|fc_2", tool_name="ls", content=[]),
                                UserMessage(content="again")])
    adapter = NdjsonAdapter(server.url)
    register_adapter(adapter)
    try:
        message = await stream(model, context, api_key="k", retry_base_delay=0.01).result()
    finally:
        unregister(API)
    assert message.stop_reason == "stop" and message.text == "Hello"
    first, second = server.requests
    assert [r.headers["x-attempt"] for r in (first, second)] == ["1", "2"]
    assert second.headers["x-signature"] == hashlib.sha256(second.body).hexdigest()
    assert second.headers["accept"] == "application/x-ndjson"
    assert second.json() == {"ids": ["CALL_1-FC_2"]}
