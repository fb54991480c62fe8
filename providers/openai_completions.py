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
from typing import Any, Literal

from baton.providers.adapter import HttpRequest, MessageBuilder, ProviderError
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
    accepted_efforts,
    clamp_thinking_level,
    effort_for_level,
    lowest_effort,
    supports_temperature,
)
from baton.providers.options import StreamOptions
from baton.providers.tool_ids import IdNormalizer, is_mistral, normalize_completions, normalize_mistral
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


def detect_compat(model: Model) -> Compat:
    """The compat flags implied by the provider name and base URL (pi's detection, plus local
    servers, which get the plain ``system`` role and no ``store``)."""
    provider = model.provider.lower()
    url = model.base_url.lower()
    is_zai = provider == "zai" or "api.z.ai" in url
    is_deepseek = provider == "deepseek" or "deepseek.com" in url
    is_openrouter = provider == "openrouter" or "openrouter.ai" in url
    is_grok = provider == "xai" or "api.x.ai" in url
    is_mistral = provider == "mistral" or "mistral.ai" in url
    is_local = provider in ("ollama", "lmstudio", "llama.cpp", "llamacpp", "vllm") or any(
        host in url for host in ("localhost", "127.0.0.1", "0.0.0.0", "[::1]")
    )
    non_standard = (
        is_zai or is_deepseek or is_grok or is_mistral or is_local
        or provider in ("cerebras", "opencode")
        or any(host in url for host in ("cerebras.ai", "chutes.ai", "opencode.ai"))
    )
    thinking_format: ThinkingFormat = (
        "zai" if is_zai else "openrouter" if is_openrouter else "deepseek" if is_deepseek else "openai"
    )
    return Compat(
        supports_store=not non_standard,
        supports_developer_role=not non_standard,
        # Grok 4 took no effort; the Grok models whose accepted efforts the catalog lists do
        supports_reasoning_effort=not is_zai and (not is_grok or accepted_efforts(model) is not None),
        supports_usage_in_streaming=True,
        max_tokens_field="max_tokens" if (is_mistral or "chutes.ai" in url) else "max_completion_tokens",
        requires_tool_result_name=is_mistral,
        requires_assistant_after_tool_result=False,  # Mistral dropped this rule in Dec 2024 (pi)
        requires_thinking_as_text=is_mistral,
        requires_reasoning_content_on_assistant_messages=is_deepseek and model.reasoning,
        thinking_format=thinking_format,
        supports_strict_mode=True,
        assistant_content_as_string=not (provider == "openai" or "api.openai.com" in url),
    )


def resolve_compat(model: Model) -> Compat:
    """``model.compat`` (pi's camelCase keys) over the auto-detected flags; unknown keys and
    values of the wrong type are ignored."""
    detected = detect_compat(model)
    if not model.compat:
        return detected
    overrides: dict[str, Any] = {}
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
        return HttpRequest(url, headers, build_body(model, context, options, compat))

    def create_decoder(self, model: Model, builder: MessageBuilder) -> CompletionsDecoder:
        """A fresh decoder for one response."""
        return CompletionsDecoder(model, builder)


def build_body(model: Model, context: Context, options: StreamOptions, compat: Compat) -> dict[str, Any]:
    """The Chat Completions request body (``stream: true``)."""
    messages = convert_messages(model, context, compat)
    if model.provider == "openrouter" and model.id.startswith("anthropic/") and options.cache_retention != "none":
        _add_anthropic_cache_breakpoint(messages)
    body: dict[str, Any] = {"model": model.id, "messages": messages, "stream": True}
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


def _apply_thinking(body: dict[str, Any], model: Model, options: StreamOptions, compat: Compat) -> None:
    if not model.reasoning:
        return
    level = clamp_thinking_level(model, options.thinking) if options.thinking else "off"
    enabled = level != "off"
    # an explicit compat map first, then the efforts the catalog says the model accepts (none
    # to choose from: send none and let the model think as it does)
    known = accepted_efforts(model) is not None
    effort = compat.reasoning_effort_map.get(level) or effort_for_level(model, level) or (None if known else level)
    fmt = compat.thinking_format
    if fmt == "zai":
        body["thinking"] = {"type": "enabled" if enabled else "disabled"}
    elif fmt == "qwen":
        body["enable_thinking"] = enabled
    elif fmt == "qwen-chat-template":
        body["chat_template_kwargs"] = {"enable_thinking": enabled}
    elif fmt == "openrouter":
        if enabled:
            body["reasoning"] = {"effort": effort} if effort else {"enabled": True}
    elif fmt == "deepseek":
        body["thinking"] = {"type": "enabled" if enabled else "disabled"}
        if enabled and effort and compat.supports_reasoning_effort:
            body["reasoning_effort"] = effort
    elif enabled and effort and compat.supports_reasoning_effort:
        body["reasoning_effort"] = effort
    elif options.thinking == "off" and compat.supports_reasoning_effort and lowest_effort(model) == "none":
        body["reasoning_effort"] = "none"  # the model thinks unless told not to (Groq's Qwen, Mistral Small 4)


def _tool_choice(choice: str | dict[str, Any]) -> str | dict[str, Any]:
    """``auto`` / ``none`` / ``required`` pass through (``any`` means ``required``); any other
    string names the one function the model must call."""
    if isinstance(choice, dict):
        return choice
    if choice in ("auto", "none", "required"):
        return choice
    if choice == "any":
        return "required"
    return {"type": "function", "function": {"name": choice}}


def convert_tool(tool: Tool, compat: Compat) -> dict[str, Any]:
    """A function tool definition."""
    function: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
    }
    if compat.supports_strict_mode:
        function["strict"] = False
    return {"type": "function", "function": function}


def convert_messages(model: Model, context: Context, compat: Compat) -> list[dict[str, Any]]:
    """The wire ``messages``: system prompt first, then the transcript."""
    out: list[dict[str, Any]] = []
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
            images: list[dict[str, Any]] = []
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


def _image_part(image: ImageContent) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": image_data_url(image)}}


def _user_message(msg: UserMessage, supports_images: bool) -> dict[str, Any] | None:
    if isinstance(msg.content, str):
        return {"role": "user", "content": msg.content}
    parts: list[dict[str, Any]] = []
    for block in msg.content:
        if isinstance(block, TextContent):
            parts.append({"type": "text", "text": block.text})
        elif supports_images:
            parts.append(_image_part(block))
    if not parts:
        return None
    return {"role": "user", "content": parts}


def _assistant_message(msg: AssistantMessage, compat: Compat, reasoning_on: bool) -> dict[str, Any] | None:
    texts = [b.text for b in msg.content if isinstance(b, TextContent) and b.text.strip()]
    thinking = [b for b in msg.content if isinstance(b, ThinkingContent) and b.thinking.strip()]
    calls = [b for b in msg.content if isinstance(b, ToolCall)]
    out: dict[str, Any] = {"role": "assistant"}
    if thinking and compat.requires_thinking_as_text:
        texts.insert(0, "\n\n".join(b.thinking for b in thinking))
    # Blocks stay apart: glued together, "...first." + "Let me look" reads "...first.Let me look".
    if not texts:
        out["content"] = "" if compat.requires_assistant_after_tool_result else None
    elif compat.assistant_content_as_string:
        out["content"] = ASSISTANT_TEXT_SEPARATOR.join(texts)
    else:
        out["content"] = [{"type": "text", "text": text} for text in texts]
    if thinking and not compat.requires_thinking_as_text:
        field_name = thinking[0].thinking_signature
        if field_name in REASONING_FIELDS:
            out[field_name] = "\n".join(b.thinking for b in thinking)
    if compat.requires_reasoning_content_on_assistant_messages and reasoning_on:
        out.setdefault("reasoning_content", "")
    if calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)},
            }
            for call in calls
        ]
        details = [_json_or_none(call.thought_signature) for call in calls if call.thought_signature]
        details = [d for d in details if isinstance(d, dict)]
        if details:
            out["reasoning_details"] = details
    if not out["content"] and not calls:
        return None  # nothing to say (an aborted reply with no content): servers reject it
    return out


def _tool_result(result: ToolResultMessage, compat: Compat) -> dict[str, Any]:
    text = tool_result_text(result)
    out: dict[str, Any] = {
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


def _add_anthropic_cache_breakpoint(messages: list[dict[str, Any]]) -> None:
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
                if part.get("type") == "text":
                    part["cache_control"] = {"type": "ephemeral"}
                    return


def _json_or_none(text: str) -> Any:
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
        if not isinstance(chunk, dict):
            return
        usage = chunk.get("usage")
        if usage:
            self._usage(usage)
        error = chunk.get("error")
        if error:
            raise _chunk_error(error)
        choices = chunk.get("choices")
        if not choices:
            return
        choice = choices[0]
        if len(choices) > 1:  # n > 1 is never requested; keep choice 0 if a server sends more
            choice = next((c for c in choices if c.get("index", 0) == 0), choice)
        delta = choice.get("delta")
        if delta:
            self._delta(delta)
        reason = choice.get("finish_reason")
        if reason:
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
    def _delta(self, delta: dict[str, Any]) -> None:
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
            if calls:
                for call in calls:
                    self._tool_call(call)

    def _reasoning(self, delta: dict[str, Any]) -> None:
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

    def _reasoning_detail(self, detail: dict[str, Any]) -> None:
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

    def _tool_call(self, call: dict[str, Any]) -> None:
        builder = self.builder
        function = call.get("function") or {}
        call_id = call.get("id")
        key: int | str | None = call.get("index")
        if not isinstance(key, int):  # no index: an id starts a call, a fragment continues the last
            key = call_id if isinstance(call_id, str) and call_id else self.last_key
        index = self.tools.get(key) if key is not None else None
        block = builder.open_tool_call(index) if index is not None else None
        if block is not None and call_id and block.id != call_id:
            block = None  # a new call reusing the index (some servers send every call at index 0)
        if block is None:
            new_id = call_id if isinstance(call_id, str) and call_id else f"call_{uuid.uuid4().hex[:24]}"
            index = builder.start_tool_call(new_id, function.get("name") or "")
            if key is None:
                key = new_id
            self.tools[key] = index
            signature = self.pending_signatures.pop(new_id, None)
            if signature is not None:
                opened = builder.open_tool_call(index)
                if opened is not None:
                    opened.thought_signature = signature
        else:
            name = function.get("name")
            if name and not block.name:
                block.name = name
        self.last_key = key
        arguments = function.get("arguments")
        if arguments and index is not None:
            if not isinstance(arguments, str):  # a few servers send the object itself
                arguments = json.dumps(arguments, ensure_ascii=False)
            builder.tool_call_delta(index, arguments)

    def _usage(self, raw: Any) -> None:
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


def _chunk_error(error: Any) -> ProviderError:
    exc = in_band_error(error)
    if isinstance(error, dict):
        metadata = error.get("metadata")
        raw = metadata.get("raw") if isinstance(metadata, dict) else None
        if isinstance(raw, str) and raw:  # OpenRouter puts the upstream provider's words here
            exc = ProviderError(f"{exc.message}\n{raw}", status=exc.status, retryable=exc.retryable)
    return exc


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


ADAPTER = OpenAICompletionsAdapter()
