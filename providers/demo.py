"""``demo/baton-demo``: the built-in offline model a newcomer meets when no key is configured.

It is the faux provider driven by a small rule-based script: it greets and explains how to
configure a real model, and when asked ("list files", "read README.md", "run ls -la",
"find *.py", "grep TODO") it makes real tool calls on the current directory and then
summarises the real results — streamed token by token, like a real model.
"""

from __future__ import annotations

import re
import shlex
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from baton.providers.json_types import JsonObject
from baton.providers.models import Model

if TYPE_CHECKING:
    from baton.providers.faux import FauxBlock, FauxResponse
    from baton.providers.messages import Context, UserMessage

DEMO_PROVIDER = "demo"
DEMO_API = "baton-demo"
DEMO_MODEL_ID = "baton-demo"
DEMO_MODEL_REF = f"{DEMO_PROVIDER}/{DEMO_MODEL_ID}"

_GREETING = """\
Hi! I'm **baton's offline demo model** — no API key is configured, so nothing here talks to \
a real LLM. I can still show you the whole agent working: ask me to

- `list files` (or `list files in src`)
- `read README.md`
- `run git status` (any shell command)
- `find *.py` or `grep TODO`

and I'll make real tool calls on this directory.

**To use a real model**, set a key and restart baton:

```sh
export ANTHROPIC_API_KEY=...   # or OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY
baton --model anthropic/claude-sonnet-4-5
```

or describe any OpenAI-compatible server (Ollama, vLLM, LM Studio, OpenRouter) in \
`{home}/models.json`:

```json
{{"providers": {{"ollama": {{"baseUrl": "http://localhost:11434/v1",
  "api": "openai-completions", "apiKey": "ollama",
  "models": [{{"id": "qwen2.5-coder:14b"}}]}}}}}}
```

Then `/model` switches models mid-conversation — the transcript comes along.
"""


def greeting() -> str:
    """The demo's greeting, naming the real ``$BATON_HOME``."""
    from baton.providers.paths import baton_home_display

    return _GREETING.format(home=baton_home_display())


def demo_model() -> Model:
    """The demo model description."""
    return Model(
        id=DEMO_MODEL_ID,
        name="baton demo (offline)",
        api=DEMO_API,
        provider=DEMO_PROVIDER,
        base_url="",
        reasoning=False,
        input=["text", "image"],
        context_window=128_000,
        max_tokens=16_384,
    )


@dataclass
class DemoTurn:
    """What the demo model says next: text and at most one tool call."""

    text: str
    tool_name: str | None = None
    arguments: JsonObject = field(default_factory=dict)


_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(?:please\s+)?(?:list|show)\s+(?:the\s+)?files(?:\s+(?:in|under|of)\s+(?P<path>\S+))?", re.I), "ls"),
    (re.compile(r"^(?:please\s+)?ls(?:\s+(?P<path>\S+))?\s*$", re.I), "ls"),
    (re.compile(r"^(?:please\s+)?(?:read|cat|open|show)\s+(?:the\s+file\s+)?(?P<path>\S+)", re.I), "read"),
    (re.compile(r"^(?:please\s+)?(?:run|execute|exec)\s+(?P<command>.+)$", re.I | re.S), "bash"),
    (re.compile(r"^\$\s*(?P<command>.+)$", re.S), "bash"),
    (re.compile(r"^(?:please\s+)?find\s+(?:files\s+)?(?:named\s+|matching\s+)?(?P<pattern>\S+)", re.I), "find"),
    (re.compile(r"^(?:please\s+)?(?:grep|search(?:\s+for)?)\s+(?P<pattern>.+)$", re.I), "grep"),
)


def _user_text(message: UserMessage) -> str:
    from baton.providers.messages import TextContent  # not when only the model is described

    if isinstance(message.content, str):
        return message.content
    return "\n".join(b.text for b in message.content if isinstance(b, TextContent))


def _strip_quotes(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"`":
        return value[1:-1]
    return value


def plan_turn(context: Context) -> DemoTurn:
    """The demo's next turn for ``context`` (pure: the same context gives the same turn)."""
    from baton.providers.messages import ToolResultMessage, UserMessage

    tools = {tool.name for tool in context.tools or []}
    last = context.messages[-1] if context.messages else None
    if isinstance(last, ToolResultMessage):
        return _summarise(context)
    if not isinstance(last, UserMessage):
        return DemoTurn(greeting())
    request = _user_text(last).strip()
    # Attached files arrive wrapped as <file name=...>; the request is what follows them.
    request = re.sub(r'<file name="[^"]*">.*?</file>\s*', "", request, flags=re.S).strip()
    for pattern, tool in _PATTERNS:
        match = pattern.match(request)
        if not match:
            continue
        groups = {k: _strip_quotes(v) for k, v in match.groupdict().items() if v}
        if tool not in tools and "bash" in tools and tool in _BASH_FALLBACKS:
            return _bash_fallback(tool, groups)
        if tool not in tools:
            enabled = ", ".join(sorted(tools)) or "none"
            return DemoTurn(
                f"That needs the `{tool}` tool, which is not enabled in this session "
                f"(enabled: {enabled}). Start baton with `--tools {tool},...` to allow it."
            )
        return _tool_turn(tool, groups)
    return DemoTurn(greeting())


def _tool_turn(tool: str, groups: dict[str, str]) -> DemoTurn:
    if tool == "ls":
        path = groups.get("path", ".")
        return DemoTurn(f"Listing `{path}`.", "ls", {"path": path})
    if tool == "read":
        path = groups["path"]
        return DemoTurn(f"Reading `{path}`.", "read", {"path": path})
    if tool == "bash":
        command = groups["command"].strip()
        return DemoTurn(f"Running `{command}`:", "bash", {"command": command})
    if tool == "find":
        pattern = groups["pattern"]
        return DemoTurn(f"Looking for files matching `{pattern}`.", "find", {"pattern": pattern})
    pattern = groups["pattern"]
    try:
        words = shlex.split(pattern)
    except ValueError:
        words = [pattern]
    pattern = " ".join(words) if words else pattern
    return DemoTurn(f"Searching for `{pattern}`.", "grep", {"pattern": pattern, "literal": True})


_BASH_FALLBACKS = {"ls", "find", "grep"}


def _bash_fallback(tool: str, groups: dict[str, str]) -> DemoTurn:
    """The shell equivalent of a tool this session does not enable."""
    if tool == "ls":
        path = groups.get("path", ".")
        command = f"ls -la {shlex.quote(path)}"
    elif tool == "find":
        command = f"find . -name {shlex.quote(groups['pattern'])} -not -path './.git/*' | head -100"
    else:
        command = f"grep -rn --exclude-dir=.git -F {shlex.quote(groups['pattern'])} . | head -100"
    return DemoTurn(f"Running `{command}`:", "bash", {"command": command})


_SUMMARY_ITEMS = 5
_LISTED_ENTRIES = 20
_LS_LONG_LINE = re.compile(r"^[-dlbcps][-rwxsStT]{9}[@+.]?\s+\d+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(?P<name>.+)$")


def _listing_entries(lines: list[str]) -> list[str] | None:
    """The names in ``ls -l`` output (directories with a ``/``, ``.`` and ``..`` left out), or
    ``None`` when the lines are not such a listing."""
    body = lines[1:] if lines and lines[0].startswith("total ") else lines
    matches = [_LS_LONG_LINE.match(line) for line in body]
    if not body or not all(matches):
        return None
    names = []
    for line, match in zip(body, matches, strict=True):
        assert match is not None
        name = match.group("name")
        if name in (".", ".."):
            continue
        names.append(name + "/" if line.startswith("d") else name)
    return names


def _summarise(context: Context) -> DemoTurn:
    from baton.providers.messages import TextContent, ToolResultMessage

    results: list[ToolResultMessage] = []
    for message in reversed(context.messages):
        if not isinstance(message, ToolResultMessage):
            break
        results.append(message)
    parts: list[str] = []
    for result in reversed(results):
        # The tool box already shows the output: the demo names what came back in one line
        # (enough for print mode, which has no tool box) instead of repeating all of it.
        text = "\n".join(b.text for b in result.content if isinstance(b, TextContent)).rstrip()
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if result.is_error:
            parts.append(f"The `{result.tool_name}` tool reported an error: {(lines or [''])[0][:160]}")
            continue
        entries = _listing_entries(lines)
        if entries is not None:
            shown = ", ".join(f"`{name[:60]}`" for name in entries[:_LISTED_ENTRIES])
            more = ", …" if len(entries) > _LISTED_ENTRIES else ""
            noun = f"{len(entries)} entr{'ies' if len(entries) != 1 else 'y'}"
            parts.append(f"`{result.tool_name}` returned a listing of {noun}" + (f": {shown}{more}" if shown else "."))
            continue
        count = f"{len(lines)} line{'s' if len(lines) != 1 else ''}"
        first = ", ".join(f"`{line[:60]}`" for line in lines[:_SUMMARY_ITEMS])
        more = ", …" if len(lines) > _SUMMARY_ITEMS else ""
        parts.append(f"`{result.tool_name}` returned {count}" + (f": {first}{more}" if first else "."))
    parts.append("That was a real tool call on your files. Try another, or configure a real model "
                 "(see the greeting: type `help`).")
    return DemoTurn("\n\n".join(parts))


def _respond(context: Context, model: Model) -> FauxResponse:
    from baton.providers.faux import FauxResponse, faux_tool_call

    turn = plan_turn(context)
    content: list[FauxBlock] = [turn.text]
    if turn.tool_name is not None:
        content.append(faux_tool_call(turn.tool_name, turn.arguments, id=f"demo_{uuid.uuid4().hex[:16]}"))
    return FauxResponse(content=content)


def register() -> None:
    """Register the demo model's stream function (``providers.stream`` does this on first use)."""
    from baton.providers.faux import FauxProvider

    FauxProvider(DEMO_API, _respond, chunk_size=6, delay=0.003).register()
