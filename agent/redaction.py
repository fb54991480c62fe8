"""Tool results without keys: the second wall behind the sandbox, applied where results enter
the transcript.

Every result and every streamed update of every tool (bash, read, grep, MCP tools, a hook's
block reason, an error) passes :func:`redact_result` before any listener, gate, the model or the
session file sees it: the configured key values are replaced in every text block and in every
string of the details (:mod:`providers.redact`). A streamed update also holds back a tail that may
be the start of a key, so a key printed in two pieces never shows its first half.
"""

from __future__ import annotations

from baton.agent.tool import AgentToolResult
from baton.providers.messages import ImageContent, TextContent
from baton.providers.redact import redact_json, secret_matcher


def redact_result(result: AgentToolResult, *, partial: bool = False) -> AgentToolResult:
    """``result`` with keys redacted (a new result when anything changed; ``details`` are
    redacted in place). ``partial``: a streamed update whose last text block is still growing."""
    try:
        matcher = secret_matcher()
    except Exception:  # no matcher, no keys to look for: never fail a tool result over it
        return result
    if not matcher:
        return result
    content: list[TextContent | ImageContent] = []
    changed = False
    last_text = max((i for i, b in enumerate(result.content) if isinstance(b, TextContent)), default=-1)
    for index, block in enumerate(result.content):
        if isinstance(block, TextContent):
            grows = partial and index == last_text
            text = matcher.redact_partial(block.text) if grows else matcher.redact(block.text)
            if text is not block.text and text != block.text:
                block = block.model_copy(update={"text": text})
                changed = True
        elif isinstance(block, dict) and isinstance(block.get("text"), str):  # validated later
            text = matcher.redact(block["text"])
            if text is not block["text"]:
                block = {**block, "text": text}
                changed = True
        content.append(block)
    if result.details is not None:
        redact_json(result.details, matcher)
    if not changed:
        return result
    return AgentToolResult(content, result.details, result.is_error)
