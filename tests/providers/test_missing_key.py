"""A built-in provider's remote API is never called without a key."""

from __future__ import annotations

from pathlib import Path

from baton.providers.catalog import get_model
from baton.providers.dispatch import complete
from baton.providers.messages import Context, UserMessage
from baton.providers.models import Model


async def test_builtin_provider_without_key_fails_at_once(baton_home: Path) -> None:
    model = get_model("anthropic/claude-sonnet-4-5")
    message = await complete(model, Context(messages=[UserMessage(content="hi")]), max_retries=1)
    assert message.stop_reason == "error"
    assert message.error_message is not None and "ANTHROPIC_API_KEY" in message.error_message


async def test_custom_provider_without_key_is_left_to_the_server(baton_home: Path) -> None:
    # A custom provider on an unreachable local port: the request is attempted (no key demanded).
    model = Model(id="m", api="openai-completions", provider="my-vllm", base_url="http://127.0.0.1:9/v1")
    message = await complete(model, Context(messages=[UserMessage(content="hi")]), max_retries=1)
    assert message.stop_reason == "error"
    assert message.error_message is not None and "API key" not in message.error_message
