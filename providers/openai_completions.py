"""The ``openai-completions`` wire protocol: OpenAI Chat Completions and every compatible server.

One adapter serves OpenAI, Ollama, vLLM, LM Studio, llama.cpp, OpenRouter, DeepSeek, Groq, xAI,
Mistral, Cerebras, z.ai and others. Their differences are described by pi's ``compat`` flags
(``model.compat``, camelCase as in pi's models.json); a flag left unset is auto-detected from
the provider name and base URL (:func:`resolve_compat`).

Streaming: ``chat.completion.chunk`` events; text from ``delta.content`` (and ``delta.refusal``,
kept as text), thinking from ``reasoning_content`` / ``reasoning`` / ``reasoning_text`` (or
``reasoning_details`` text when none of those is present), parallel tool calls by ``index``,
usage from the ``stream_options`` usage chunk or inside the finish chunk (DeepSeek), in-band
``{"error": ...}`` chunks and named ``event: error`` events.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Literal

from baton.providers.adapter import HttpRequest, MessageBuilder, ProviderError
from baton.providers.json_types import JsonArray, JsonObject, JsonValue
from baton.providers.messages import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from baton.providers.models import (
    Model,
    ThinkingLevel,
    accepted_efforts,
    clamp_thinking_level,
    effort_for_level,
    lowest_effort,
    supports_temperature,
)
from baton.providers.options import StreamOptions, ToolChoice
from baton.providers.tool_ids import IdNormalizer, is_mistral, normalize_completions, normalize_mistral
from baton.providers.wire_cache import WireSlot, encode, encode_body
from baton.providers.wire_common import (
    default_max_tokens,
    image_data_url,
    in_band_error,
    join_url,
    merge_headers,
    parse_json_event,
    prompt_cache_key,
    tool_result_images,
    tool_result_text,
)

API = "openai-completions"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
"""Delta fields that carry thinking text, in order of preference (the first non-empty wins:
some servers send the same text under two names)."""
TOOL_RESULT_IMAGES_TEXT = "Attached image(s) from tool result:"
IMAGE_ONLY_TOOL_RESULT = "(see attached image)"
NO_TOOL_OUTPUT = "(no tool output)"
"""The content of a tool result with neither text nor images (pi's)."""
ASSISTANT_BRIDGE_TEXT = "I have processed the tool results."
ASSISTANT_TEXT_SEPARATOR = "\n\n"
"""Between the text blocks of an assistant message sent as one string."""

ThinkingFormat = Literal["openai", "openrouter", "deepseek", "zai", "qwen", "qwen-chat-template"]
MaxTokensField = Literal["max_tokens", "max_completion_tokens"]


# ---------------------------------------------------------------------------------------------
# Compat flags


@dataclass(frozen=True, slots=True)
class Compat:
    """What an OpenAI-compatible server accepts (pi's ``OpenAICompletionsCompat``, resolved)."""

    supports_store: bool = True
    supports_developer_role: bool = True
    supports_reasoning_effort: bool = True
    supports_usage_in_streaming: bool = True
    max_tokens_field: MaxTokensField = "max_completion_tokens"
    requires_tool_result_name: bool = False
    requires_assistant_after_tool_result: bool = False
    requires_thinking_as_text: bool = False
    requires_reasoning_content_on_assistant_messages: bool = False
    thinking_format: ThinkingFormat = "openai"
    supports_strict_mode: bool = True
    reasoning_effort_map: dict[str, str] = field(default_factory=dict)
    assistant_content_as_string: bool = False
    """``False`` (OpenAI itself): one text part per assistant text block. ``True`` (every other
    server unless its compat says otherwise): one string, the blocks joined by a blank line —
    vLLM and others refuse a list there, and some models mirror a list's structure."""


_COMPAT_KEYS = {
    "supportsStore": "supports_store",
    "supportsDeveloperRole": "supports_developer_role",
    "supportsReasoningEffort": "supports_reasoning_effort",
    "supportsUsageInStreaming": "supports_usage_in_streaming",
    "maxTokensField": "max_tokens_field",
    "requiresToolResultName": "requires_tool_result_name",
    "requiresAssistantAfterToolResult": "requires_assistant_after_tool_result",
    "requiresThinkingAsText": "requires_thinking_as_text",
    "requiresReasoningContentOnAssistantMessages": "requires_reasoning_content_on_assistant_messages",
    "thinkingFormat": "thinking_format",
    "supportsStrictMode": "supports_strict_mode",
    "reasoningEffortMap": "reasoning_effort_map",
    "assistantContentAsString": "assistant_content_as_string",
}


_HOSTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "zai": (("zai",), ("api.z.ai",)),
    "deepseek": (("deepseek",), ("deepseek.com",)),
    "openrouter": (("openrouter",), ("openrouter.ai",)),
    "grok": (("xai",), ("api.x.ai",)),
    "mistral": (("mistral",), ("mistral.ai",)),
    "local": (("ollama", "lmstudio", "llama.cpp", "llamacpp", "vllm"), ("localhost", "127.0.0.1", "0.0.0.0", "[::1]")),
    "other": (("cerebras", "opencode"), ("cerebras.ai", "chutes.ai", "opencode.ai")),
}
"""Hosts with their own rules: the provider names and the base URL fragments that identify each."""
_NON_STANDARD = frozenset({"zai", "deepseek", "grok", "mistral", "local", "other"})
"""Hosts without ``store`` and the ``developer`` role."""
_THINKING_FORMATS: tuple[tuple[str, ThinkingFormat], ...] = (
    ("zai", "zai"), ("openrouter", "openrouter"), ("deepseek", "deepseek"),
)


def _hosts(model: Model) -> frozenset[str]:
    """The names in :data:`_HOSTS` that ``model``'s provider name or base URL matches."""
    provider = model.provider.lower()
    url = model.base_url.lower()
    return frozenset(name for name, (providers, fragments) in _HOSTS.items()
                     if provider in providers or any(fragment in url for fragment in fragments))


def detect_compat(model: Model) -> Compat:
    """The compat flags implied by the provider name and base URL (pi's detection, plus local
    servers, which get the plain ``system`` role and no ``store``)."""
    hosts = _hosts(model)
    url = model.base_url.lower()
    standard = not hosts & _NON_STANDARD
    mistral = "mistral" in hosts
    return Compat(
        supports_store=standard,
        supports_developer_role=standard,
        # Grok 4 took no effort; the Grok models whose accepted efforts the catalog lists do
        supports_reasoning_effort="zai" not in hosts and ("grok" not in hosts or accepted_efforts(model) is not None),
        supports_usage_in_streaming=True,
        max_tokens_field="max_tokens" if (mistral or "chutes.ai" in url) else "max_completion_tokens",
        requires_tool_result_name=mistral,
        requires_assistant_after_tool_result=False,  # Mistral dropped this rule in Dec 2024 (pi)
        requires_thinking_as_text=mistral,
        requires_reasoning_content_on_assistant_messages="deepseek" in hosts and model.reasoning,
        thinking_format=next((fmt for host, fmt in _THINKING_FORMATS if host in hosts), "openai"),
        supports_strict_mode=True,
        assistant_content_as_string=not (model.provider.lower() == "openai" or "api.openai.com" in url),
    )


def resolve_compat(model: Model) -> Compat:
    """``model.compat`` (pi's camelCase keys) over the auto-detected flags; unknown keys and
    values of the wrong type are ignored."""
    detected = detect_compat(model)
    if not model.compat:
        return detected
    overrides: dict[str, object] = {}
    for key, attr in _COMPAT_KEYS.items():
        value = model.compat.get(key)
        if value is None:
            continue
        default = getattr(detected, attr)
        if isinstance(default, bool):
            valid = isinstance(value, bool)
        elif isinstance(default, dict):
            valid = isinstance(value, dict)
            if valid:
                value = {str(k): str(v) for k, v in value.items() if v is not None}
        elif attr == "max_tokens_field":
            valid = value in ("max_tokens", "max_completion_tokens")
        else:
            valid = value in ("openai", "openrouter", "deepseek", "zai", "qwen", "qwen-chat-template")
        if valid:
            overrides[attr] = value
    if not overrides:
        return detected
    values = {attr: getattr(detected, attr) for attr in _COMPAT_KEYS.values()}
    values.update(overrides)
    return Compat(**values)


# ---------------------------------------------------------------------------------------------
# Request


class OpenAICompletionsAdapter:
    """The ``openai-completions`` :class:`~providers.adapter.WireAdapter`."""

    api = API

    def tool_call_id_normalizer(self, model: Model) -> IdNormalizer | None:
        """Nine alphanumerics for Mistral, else at most 40 characters without ``|``."""
        return normalize_mistral if is_mistral(model) else normalize_completions

    def build_request(
        self, model: Model, context: Context, options: StreamOptions, api_key: str | None
    ) -> HttpRequest:
        """The ``POST {baseUrl}/chat/completions`` request for an already transformed context."""
        compat = resolve_compat(model)
        url = join_url(model.base_url or DEFAULT_BASE_URL, "chat/completions")
        auth = {"Authorization": f"Bearer {api_key}"} if api_key else None
        headers = merge_headers(auth, model.headers, options.headers)
        encoded = _encoded_body(model, context, options, compat)
        if encoded is None:
            return HttpRequest(url, headers, build_body(model, context, options, compat))
        return HttpRequest(url, headers, encoded=encoded[1], expand=lambda: build_body(model, context, options, compat))

    def create_decoder(self, model: Model, builder: MessageBuilder) -> CompletionsDecoder:
        """A fresh decoder for one response."""
        return CompletionsDecoder(model, builder)


def build_body(model: Model, context: Context, options: StreamOptions, compat: Compat) -> JsonObject:
    """The Chat Completions request body (``stream: true``)."""
    messages = convert_messages(model, context, compat)
    if _moving_breakpoint(model, options):
        _add_anthropic_cache_breakpoint(messages)
    return _body(model, context, options, compat, list[JsonValue](messages))


def _moving_breakpoint(model: Model, options: StreamOptions) -> bool:
    """OpenRouter's Anthropic models get a ``cache_control`` on the last text (see
    :func:`_add_anthropic_cache_breakpoint`)."""
    return model.provider == "openrouter" and model.id.startswith("anthropic/") and options.cache_retention != "none"


def _body(model: Model, context: Context, options: StreamOptions, compat: Compat, messages: JsonArray) -> JsonObject:
    """The body around its ``messages``."""
    body: JsonObject = {"model": model.id, "messages": messages, "stream": True}
    if compat.supports_usage_in_streaming:
        body["stream_options"] = {"include_usage": True}
    if compat.supports_store:
        body["store"] = False
    body[compat.max_tokens_field] = default_max_tokens(model, options)
    if options.temperature is not None and supports_temperature(model):
        body["temperature"] = options.temperature
    if context.tools:
        body["tools"] = [convert_tool(tool, compat) for tool in context.tools]
    elif model.provider != "openai" and _has_tool_history(context.messages):
        # Proxies in front of Anthropic (LiteLLM...) require `tools` once the history has tool
        # calls; OpenAI itself rejects an empty list.
        body["tools"] = []
    if options.tool_choice is not None and "tools" in body:
        body["tool_choice"] = _tool_choice(options.tool_choice)
    _apply_thinking(body, model, options, compat)
    if options.session_id and options.cache_retention != "none" and compat.supports_store:
        body["prompt_cache_key"] = prompt_cache_key(options.session_id)
    return body


def _apply_thinking(body: JsonObject, model: Model, options: StreamOptions, compat: Compat) -> None:
    if not model.reasoning:
        return
    level = clamp_thinking_level(model, options.thinking) if options.thinking else "off"
    enabled = level != "off"
    effort = _effort(model, level, compat) if enabled else None
    fmt = compat.thinking_format
    if fmt == "zai" or fmt == "deepseek":
        body["thinking"] = {"type": "enabled" if enabled else "disabled"}
    elif fmt == "qwen":
        body["enable_thinking"] = enabled
    elif fmt == "qwen-chat-template":
        body["chat_template_kwargs"] = {"enable_thinking": enabled}
    elif fmt == "openrouter" and enabled:
        body["reasoning"] = {"effort": effort} if effort else {"enabled": True}
    if not compat.supports_reasoning_effort or fmt not in ("openai", "deepseek"):
        return
    if effort:
        body["reasoning_effort"] = effort
    elif fmt == "openai" and options.thinking == "off" and lowest_effort(model) == "none":
        body["reasoning_effort"] = "none"  # the model thinks unless told not to (Groq's Qwen, Mistral Small 4)


def _effort(model: Model, level: ThinkingLevel, compat: Compat) -> str | None:
    """The effort for a thinking level: an explicit compat map first, then the efforts the catalog
    says the model accepts (none to choose from: send none and let the model think as it does),
    else the level itself."""
    known = accepted_efforts(model) is not None
    return compat.reasoning_effort_map.get(level) or effort_for_level(model, level) or (None if known else level)


def _tool_choice(choice: ToolChoice) -> ToolChoice:
    """``auto`` / ``none`` / ``required`` pass through (``any`` means ``required``); any other
    string names the one function the model must call."""
    if isinstance(choice, dict):
        return choice
    if choice in ("auto", "none", "required"):
        return choice
    if choice == "any":
        return "required"
    return {"type": "function", "function": {"name": choice}}


def convert_tool(tool: Tool, compat: Compat) -> JsonObject:
    """A function tool definition."""
    function: JsonObject = {
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
    }
    if compat.supports_strict_mode:
        function["strict"] = False
    return {"type": "function", "function": function}


def convert_messages(model: Model, context: Context, compat: Compat) -> list[JsonObject]:
    """The wire ``messages``: system prompt first, then the transcript."""
    out: list[JsonObject] = []
    if context.system_prompt:
        role = "developer" if model.reasoning and compat.supports_developer_role else "system"
        out.append({"role": role, "content": context.system_prompt})
    supports_images = model.supports_images
    reasoning_on = model.reasoning
    messages = context.messages
    last_role: str | None = None
    i = 0
    while i < len(messages):
        msg = messages[i]
        if isinstance(msg, ToolResultMessage):
            images: JsonArray = []
            while i < len(messages) and isinstance(messages[i], ToolResultMessage):
                result = messages[i]
                assert isinstance(result, ToolResultMessage)
                out.append(_tool_result(result, compat))
                if supports_images:
                    images += [_image_part(img) for img in tool_result_images(result)]
                i += 1
            if images:
                if compat.requires_assistant_after_tool_result:
                    out.append({"role": "assistant", "content": ASSISTANT_BRIDGE_TEXT})
                out.append({"role": "user", "content": [{"type": "text", "text": TOOL_RESULT_IMAGES_TEXT}, *images]})
                last_role = "user"
            else:
                last_role = "toolResult"
            continue
        if isinstance(msg, UserMessage):
            if compat.requires_assistant_after_tool_result and last_role == "toolResult":
                out.append({"role": "assistant", "content": ASSISTANT_BRIDGE_TEXT})
            user = _user_message(msg, supports_images)
            if user is not None:
                out.append(user)
        elif isinstance(msg, AssistantMessage):
            assistant = _assistant_message(msg, compat, reasoning_on)
            if assistant is not None:
                out.append(assistant)
        last_role = msg.role
        i += 1
    return out


_NO_FORM = object()
_Form = tuple[str, bytes | None, tuple[bytes, ...]]
"""A message's encoded form: its kind (``u``ser, ``a``ssistant, ``t``ool result, ``x``: none),
its element (``None``: it sends nothing) and a tool result's encoded image parts."""


def _encoded_body(
    model: Model, context: Context, options: StreamOptions, compat: Compat
) -> tuple[JsonObject, bytes] | None:
    """The body (its ``messages`` left empty) and its encoding, each message's element taken
    from its :class:`~providers.wire_cache.WireSlot` when it was encoded before for the same
    compat; ``None`` when the context has no slots or a value must go the uncached way."""
    slots = context._wire_slots
    if slots is None or len(slots) != len(context.messages) or _moving_breakpoint(model, options):
        return None
    try:
        messages = _encoded_messages(model, context, slots, compat)
    except ValueError:
        return None
    body = _body(model, context, options, compat, [])
    raw = encode_body(body, {"messages": messages})
    return None if raw is None else (body, raw)


def _encoded_messages(model: Model, context: Context, slots: list[WireSlot | None], compat: Compat) -> bytes:
    """:func:`convert_messages`, encoded."""
    supports_images = model.supports_images
    key = (API, repr(compat), supports_images, model.reasoning)
    out: list[bytes] = []
    if context.system_prompt:
        role = "developer" if model.reasoning and compat.supports_developer_role else "system"
        out.append(encode({"role": role, "content": context.system_prompt}))
    bridge = compat.requires_assistant_after_tool_result
    last_role: str | None = None
    in_results = False
    images: list[bytes] = []
    for message, slot in zip(context.messages, slots, strict=True):
        if slot is not None and slot.message is message:
            form = slot.forms.get(key, _NO_FORM)
            if form is _NO_FORM:
                form = slot.forms[key] = _form(message, compat, supports_images, model.reasoning)
        else:
            form = _form(message, compat, supports_images, model.reasoning)
        kind, element, parts = form
        if kind == "t":
            assert element is not None
            out.append(element)
            images += parts
            in_results = True
            continue
        if in_results:
            last_role = _end_results(out, images, bridge)
            images = []
            in_results = False
        if kind == "u" and bridge and last_role == "toolResult":
            out.append(encode({"role": "assistant", "content": ASSISTANT_BRIDGE_TEXT}))
        if element is not None:
            out.append(element)
        last_role = message.role
    if in_results:
        _end_results(out, images, bridge)
    return b"[" + b",".join(out) + b"]"


def _end_results(out: list[bytes], images: list[bytes], bridge: bool) -> str:
    """After a run of tool results: their images as one user message; the role it ends with."""
    if not images:
        return "toolResult"
    if bridge:
        out.append(encode({"role": "assistant", "content": ASSISTANT_BRIDGE_TEXT}))
    text = encode({"type": "text", "text": TOOL_RESULT_IMAGES_TEXT})
    out.append(b'{"role":"user","content":[' + b",".join([text, *images]) + b"]}")
    return "user"


def _form(message: Message, compat: Compat, supports_images: bool, reasoning_on: bool) -> _Form:
    if isinstance(message, ToolResultMessage):
        parts = tuple(encode(_image_part(image)) for image in tool_result_images(message)) if supports_images else ()
        return ("t", encode(_tool_result(message, compat)), parts)
    if isinstance(message, UserMessage):
        user = _user_message(message, supports_images)
        return ("u", None if user is None else encode(user), ())
    if isinstance(message, AssistantMessage):
        assistant = _assistant_message(message, compat, reasoning_on)
        return ("a", None if assistant is None else encode(assistant), ())
    return ("x", None, ())


def _image_part(image: ImageContent) -> JsonObject:
    return {"type": "image_url", "image_url": {"url": image_data_url(image)}}


def _user_message(msg: UserMessage, supports_images: bool) -> JsonObject | None:
    if isinstance(msg.content, str):
        return {"role": "user", "content": msg.content}
    parts: JsonArray = []
    for block in msg.content:
        if isinstance(block, TextContent):
            parts.append({"type": "text", "text": block.text})
        elif supports_images:
            parts.append(_image_part(block))
    if not parts:
        return None
    return {"role": "user", "content": parts}


def _assistant_message(msg: AssistantMessage, compat: Compat, reasoning_on: bool) -> JsonObject | None:
    texts = [b.text for b in msg.content if isinstance(b, TextContent) and b.text.strip()]
    thinking = [b for b in msg.content if isinstance(b, ThinkingContent) and b.thinking.strip()]
    calls = [b for b in msg.content if isinstance(b, ToolCall)]
    out: JsonObject = {"role": "assistant", "content": _assistant_content(texts, thinking, compat)}
    if thinking and not compat.requires_thinking_as_text:
        field_name = thinking[0].thinking_signature
        if field_name in REASONING_FIELDS:
            out[field_name] = "\n".join(b.thinking for b in thinking)
    if compat.requires_reasoning_content_on_assistant_messages and reasoning_on:
        out.setdefault("reasoning_content", "")
    if calls:
        _add_tool_calls(out, calls)
    if not out["content"] and not calls:
        return None  # nothing to say (an aborted reply with no content): servers reject it
    return out


def _assistant_content(texts: list[str], thinking: list[ThinkingContent], compat: Compat) -> JsonValue:
    """The text blocks (after the thinking, for a server that takes it as text) kept apart: glued
    together, "...first." + "Let me look" reads "...first.Let me look"."""
    if thinking and compat.requires_thinking_as_text:
        texts = ["\n\n".join(b.thinking for b in thinking), *texts]
    if not texts:
        return "" if compat.requires_assistant_after_tool_result else None
    if compat.assistant_content_as_string:
        return ASSISTANT_TEXT_SEPARATOR.join(texts)
    return [{"type": "text", "text": text} for text in texts]


def _add_tool_calls(out: JsonObject, calls: list[ToolCall]) -> None:
    out["tool_calls"] = [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)},
        }
        for call in calls
    ]
    details: JsonArray = [detail for call in calls if call.thought_signature
                          and isinstance(detail := _json_or_none(call.thought_signature), dict)]
    if details:
        out["reasoning_details"] = details


def _tool_result(result: ToolResultMessage, compat: Compat) -> JsonObject:
    text = tool_result_text(result)
    out: JsonObject = {
        "role": "tool",
        "content": text if text else IMAGE_ONLY_TOOL_RESULT if tool_result_images(result) else NO_TOOL_OUTPUT,
        "tool_call_id": result.tool_call_id,
    }
    if compat.requires_tool_result_name and result.tool_name:
        out["name"] = result.tool_name
    return out


def _has_tool_history(messages: list[Message]) -> bool:
    for msg in messages:
        if isinstance(msg, ToolResultMessage):
            return True
        if isinstance(msg, AssistantMessage) and any(isinstance(b, ToolCall) for b in msg.content):
            return True
    return False


def _add_anthropic_cache_breakpoint(messages: list[JsonObject]) -> None:
    """OpenRouter's Anthropic models cache only at ``cache_control`` markers: put one on the
    last user/assistant text (pi does the same)."""
    for msg in reversed(messages):
        if msg["role"] not in ("user", "assistant"):
            continue
        content = msg.get("content")
        if isinstance(content, str) and content:
            msg["content"] = [{"type": "text", "text": content, "cache_control": {"type": "ephemeral"}}]
            return
        if isinstance(content, list):
            for part in reversed(content):
                if isinstance(part, dict) and part.get("type") == "text":
                    part["cache_control"] = {"type": "ephemeral"}
                    return


def _json_or_none(text: str) -> JsonValue:
    try:
        return json.loads(text)
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------
# Stream decoding

_STOP_REASONS: dict[str, Literal["stop", "length", "toolUse"]] = {
    "stop": "stop",
    "eos": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "length": "length",
    "max_tokens": "length",
    "model_length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
    "tool_use": "toolUse",
}
_PLAIN_DELTA_KEYS = frozenset(("role", "content", "refusal"))
_ERROR_FINISH = {
    "content_filter": "The response was stopped by the provider's content filter (finish_reason: content_filter)",
    "safety": "The response was stopped by the provider's safety filter (finish_reason: safety)",
    "error": "The provider ended the response with an error (finish_reason: error)",
}


class CompletionsDecoder:
    """Decodes ``chat.completion.chunk`` events into builder calls."""

    __slots__ = ("builder", "done", "drop_toolcall_text", "finish_reason", "last_key", "model",
                 "pending_signatures", "tools")

    def __init__(self, model: Model, builder: MessageBuilder) -> None:
        self.model = model
        self.builder = builder
        self.tools: dict[int | str, int] = {}
        """Wire ``tool_calls[].index`` (or the call id when a server sends no index) -> content
        index of the call."""
        self.last_key: int | str | None = None
        self.pending_signatures: dict[str, str] = {}
        """Encrypted reasoning details that arrived before their tool call, by call id."""
        self.finish_reason: str | None = None
        self.done = False
        # NVIDIA NIM repeats structured tool calls as raw "<TOOLCALL>" text: that copy is dropped.
        self.drop_toolcall_text = model.provider == "nim"

    def feed(self, event: str, data: str) -> None:
        """One SSE event."""
        if event == "error":
            payload = parse_json_event(data) if data.lstrip().startswith(("{", "[")) else data
            error = payload.get("error", payload) if isinstance(payload, dict) else payload
            raise in_band_error(error)
        if data == "[DONE]":
            self.done = True
            return
        chunk = parse_json_event(data)
        if type(chunk) is not dict:
            return
        usage = chunk.get("usage")
        if usage:
            self._usage(usage)
        error = chunk.get("error")
        if error:
            raise _chunk_error(error)
        choices = chunk.get("choices")
        if not choices or type(choices) is not list:
            return
        choice = choices[0]
        if len(choices) > 1:  # n > 1 is never requested; keep choice 0 if a server sends more
            choice = next((c for c in choices if isinstance(c, dict) and c.get("index", 0) == 0), choice)
        if type(choice) is not dict:
            return
        delta = choice.get("delta")
        if delta and type(delta) is dict:
            self._delta(delta)
        reason = choice.get("finish_reason")
        if reason and type(reason) is str:
            self.finish_reason = reason

    def finish(self) -> None:
        """The body ended: close blocks and map ``finish_reason`` to the stop reason."""
        builder = self.builder
        if self.finish_reason is None and not self.done:
            raise ProviderError(
                "The stream ended before the response was complete (no finish_reason)", retryable=True
            )
        builder.close_all()
        reason = self.finish_reason or "stop"
        message = _ERROR_FINISH.get(reason)
        if message is not None:
            builder.output.error_message = message
            builder.set_stop_reason("error")
            return
        stop = _STOP_REASONS.get(reason, "stop")
        if stop == "stop" and builder.has_tool_calls:
            stop = "toolUse"  # Ollama and others say "stop" after tool calls
        builder.set_stop_reason(stop)

    # --- deltas ---------------------------------------------------------------------------
    def _delta(self, delta: JsonObject) -> None:
        builder = self.builder
        content = delta.get("content")
        if content and type(content) is str and not (self.drop_toolcall_text and "<TOOLCALL" in content):
            builder.text_delta(content)
        refusal = delta.get("refusal")
        if refusal and type(refusal) is str:
            builder.text_delta(refusal)
        if not _PLAIN_DELTA_KEYS.issuperset(delta):
            self._reasoning(delta)
            calls = delta.get("tool_calls")
            if calls and isinstance(calls, list):
                for call in calls:
                    if isinstance(call, dict):
                        self._tool_call(call)

    def _reasoning(self, delta: JsonObject) -> None:
        builder = self.builder
        for name in REASONING_FIELDS:
            text = delta.get(name)
            if text and isinstance(text, str):
                if builder.open_thinking_index is None:
                    builder.start_thinking(signature=name)
                builder.thinking_delta(text)
                break
        else:
            details = delta.get("reasoning_details")
            if details and isinstance(details, list):
                for detail in details:
                    if isinstance(detail, dict):
                        self._reasoning_detail(detail)
            return
        details = delta.get("reasoning_details")
        if details and isinstance(details, list):
            for detail in details:
                if isinstance(detail, dict) and detail.get("type") == "reasoning.encrypted":
                    self._reasoning_detail(detail)

    def _reasoning_detail(self, detail: JsonObject) -> None:
        kind = detail.get("type")
        if kind == "reasoning.encrypted":
            call_id = detail.get("id")
            if isinstance(call_id, str) and call_id and detail.get("data"):
                signature = json.dumps(detail, ensure_ascii=False)
                for block in self.builder.output.content:
                    if isinstance(block, ToolCall) and block.id == call_id:
                        block.thought_signature = signature
                        return
                self.pending_signatures[call_id] = signature
            return
        text = detail.get("text") if kind == "reasoning.text" else detail.get("summary")
        if text and isinstance(text, str):
            builder = self.builder
            if builder.open_thinking_index is None:
                builder.start_thinking(signature="reasoning")
            builder.thinking_delta(text)

    def _tool_call(self, call: JsonObject) -> None:
        function = call.get("function")
        if type(function) is not dict:
            function = {}
        call_id = call.get("id")
        key = call.get("index")
        if type(key) is not int:  # no index: an id starts a call, a fragment continues the last
            key = call_id if isinstance(call_id, str) and call_id else self.last_key
        index = self.tools.get(key) if key is not None else None
        block = self.builder.open_tool_call(index) if index is not None else None
        if index is None or block is None or (call_id and block.id != call_id):
            # a new call (also one reusing an index: some servers send every call at index 0)
            index, key = self._open_call(call_id if isinstance(call_id, str) else None, function, key)
        else:
            name = function.get("name")
            if name and isinstance(name, str) and not block.name:
                block.name = name
        self.last_key = key
        arguments = function.get("arguments")
        if arguments:
            if type(arguments) is not str:  # a few servers send the object itself
                arguments = json.dumps(arguments, ensure_ascii=False)
            self.builder.tool_call_delta(index, arguments)

    def _open_call(self, call_id: str | None, function: JsonObject, key: int | str | None) -> tuple[int, int | str]:
        builder = self.builder
        new_id = call_id or f"call_{uuid.uuid4().hex[:24]}"
        name = function.get("name")
        index = builder.start_tool_call(new_id, name if isinstance(name, str) else "")
        if key is None:
            key = new_id
        self.tools[key] = index
        signature = self.pending_signatures.pop(new_id, None)
        opened = builder.open_tool_call(index) if signature is not None else None
        if opened is not None:
            opened.thought_signature = signature
        return index, key

    def _usage(self, raw: JsonValue) -> None:
        if not isinstance(raw, dict):
            return
        usage = self.builder.output.usage
        prompt = _int(raw.get("prompt_tokens"))
        details = raw.get("prompt_tokens_details") or {}
        cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
        if not cached:
            cached = _int(raw.get("prompt_cache_hit_tokens"))
        cache_write = _int(details.get("cache_write_tokens")) if isinstance(details, dict) else 0
        usage.input = max(0, prompt - cached - cache_write)
        usage.output = _int(raw.get("completion_tokens"))
        usage.cache_read = cached
        usage.cache_write = cache_write
        usage.total_tokens = usage.input + usage.output + cached + cache_write


def _chunk_error(error: JsonValue) -> ProviderError:
    exc = in_band_error(error)
    if isinstance(error, dict):
        metadata = error.get("metadata")
        raw = metadata.get("raw") if isinstance(metadata, dict) else None
        if isinstance(raw, str) and raw:  # OpenRouter puts the upstream provider's words here
            exc = ProviderError(f"{exc.message}\n{raw}", status=exc.status, retryable=exc.retryable)
    return exc


def _int(value: JsonValue) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


ADAPTER = OpenAICompletionsAdapter()
