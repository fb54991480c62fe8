"""transform_messages on a 10,000-message mixed transcript and on a real 990-message pi session.

Run: ``python -m benchmarks.bench_transform``. Prints the time per call for each target protocol:
best and median wall time and best CPU time of several runs, and the first (cold) call.
``python -m benchmarks.bench_transform --profile [TARGET]`` instead profiles the warm calls on the
synthetic transcript for one target (default ``anthropic-messages``) with cProfile.
Targets: <= 25 ms for the 10,000 messages cross-provider, <= 5 ms for the real session (pi-ai:
5.1 ms and 0.93 ms on the same inputs).
The real session is read from ``../shared/fixtures/pi-sessions/before-compaction.jsonl``
(skipped with a note when absent).
"""

from __future__ import annotations

import cProfile
import json
import pstats
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from baton.providers.dispatch import id_normalizer_for
from baton.providers.messages import (
    MESSAGE_ADAPTER,
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from baton.providers.models import Model
from baton.providers.transform import TransformReport, transform_messages

SESSION = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "pi-sessions" / "before-compaction.jsonl"
RUNS = 15

TARGETS = {
    "anthropic-messages": Model(id="claude-sonnet-4-5", api="anthropic-messages", provider="anthropic",
                                input=["text", "image"]),
    "openai-responses": Model(id="gpt-5", api="openai-responses", provider="openai", input=["text", "image"]),
    "openai-completions": Model(id="deepseek-chat", api="openai-completions", provider="deepseek", input=["text"]),
    "google-generative-ai": Model(id="gemini-2.5-pro", api="google-generative-ai", provider="google",
                                  input=["text", "image"]),
}
SOURCES = [
    Model(id="claude-opus-4-5", api="anthropic-messages", provider="anthropic"),
    Model(id="gpt-5-codex", api="openai-responses", provider="openai"),
    Model(id="gpt-5", api="openai-responses", provider="github-copilot"),
    Model(id="gemini-2.5-flash", api="google-generative-ai", provider="google"),
    Model(id="kimi-k2", api="openai-completions", provider="moonshot"),
]


def _tool_id(source: Model, rng: random.Random, n: int) -> str:
    token = "".join(rng.choices("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", k=24))
    if source.provider == "github-copilot":
        return f"call_{token}|fc_{token * 18}+/=={n}"
    if source.api == "openai-responses":
        return f"call_{token}|fc_{n:08x}{token}"
    if source.api == "anthropic-messages":
        return f"toolu_{token}{n}"
    if source.api == "google-generative-ai":
        return f"read_{n}_{token}"
    return f"functions.read:{n}"


def synthetic_transcript(count: int = 10_000, seed: int = 1) -> list[Any]:
    """A long session that switched models every few dozen messages: thinking with signatures,
    signed text, parallel tool calls (some with thought signatures), images, aborted turns."""
    rng = random.Random(seed)
    messages: list[Any] = []
    serial = 0
    clock = 0
    source = SOURCES[0]
    while len(messages) < count:
        clock += 1
        if rng.random() < 0.03:
            source = rng.choice(SOURCES)
        if rng.random() < 0.12:
            content: Any = "continue" if rng.random() < 0.7 else [
                TextContent(text="see screenshot"), ImageContent(data="iVBORw0KGgo=", mime_type="image/png")
            ]
            messages.append(UserMessage(content=content, timestamp=clock))
            continue
        blocks: list[Any] = []
        if rng.random() < 0.6:
            blocks.append(ThinkingContent(thinking="Let me look at the file first. " * 3,
                                          thinking_signature="EqQBCkYIBxgCKkB" * 8))
        blocks.append(TextContent(text="Reading the file.",
                                  text_signature="msg_0abc" if source.api == "openai-responses" else None))
        calls = []
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            serial += 1
            call = ToolCall(id=_tool_id(source, rng, serial), name="read", arguments={"path": f"src/f{serial}.py"},
                            thought_signature="CiQB0e2Kb" * 4 if source.api == "google-generative-ai" else None)
            calls.append(call)
            blocks.append(call)
        stop = "aborted" if rng.random() < 0.02 else "toolUse"
        messages.append(AssistantMessage(content=blocks, api=source.api, provider=source.provider,
                                         model=source.id, stop_reason=stop, timestamp=clock))
        for call in calls:
            if stop == "aborted" or rng.random() < 0.02:
                continue
            extra = [ImageContent(data="iVBORw0KGgo=", mime_type="image/png")] if rng.random() < 0.05 else []
            messages.append(ToolResultMessage(tool_call_id=call.id, tool_name="read",
                                              content=[TextContent(text="file contents"), *extra], timestamp=clock))
    return messages[:count]


def real_session() -> list[Any] | None:
    if not SESSION.is_file():
        return None
    out = []
    for line in SESSION.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry.get("type") == "message" and entry["message"]["role"] in ("user", "assistant", "toolResult"):
            out.append(MESSAGE_ADAPTER.validate_python(entry["message"]))
    return out


@dataclass
class Figures:
    cold_ms: float
    """First call, with the id normalisers' caches empty."""
    best_ms: float
    median_ms: float
    best_cpu_ms: float
    report: TransformReport
    size: int

    def line(self, name: str) -> str:
        return (f"  -> {name:22} best {self.best_ms:6.2f} ms (CPU {self.best_cpu_ms:6.2f} ms), "
                f"median {self.median_ms:6.2f} ms, cold {self.cold_ms:6.2f} ms; {self.size:,} out; "
                f"{self.report.summary()}")


def measure(messages: list[Any], target: Model) -> Figures:
    normalize = id_normalizer_for(target)
    cache_clear = getattr(normalize, "cache_clear", None)
    if cache_clear is not None:
        cache_clear()
    walls: list[float] = []
    cpus: list[float] = []
    report = TransformReport()
    size = 0
    for _ in range(RUNS):
        report = TransformReport()
        start, start_cpu = time.perf_counter(), time.process_time()
        out = transform_messages(messages, target, normalize, report=report)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
        size = len(out)
        del out  # freed outside the timed region
    return Figures(walls[0] * 1000, min(walls) * 1000, statistics.median(walls) * 1000, min(cpus) * 1000,
                   report, size)


def profile(target_name: str) -> None:
    """cProfile of warm calls on the synthetic transcript (the profiler inflates function calls,
    so read it for where the time goes, not for the figure)."""
    transcript = synthetic_transcript()
    target = TARGETS[target_name]
    normalize = id_normalizer_for(target)
    transform_messages(transcript, target, normalize)  # warm the id normaliser's cache
    profiler = cProfile.Profile()
    for _ in range(RUNS):
        profiler.enable()
        out = transform_messages(transcript, target, normalize, report=TransformReport())
        profiler.disable()
        del out
    print(f"{RUNS} warm calls, synthetic transcript -> {target_name}")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


def main() -> None:
    if sys.argv[1:2] == ["--profile"]:
        profile(sys.argv[2] if len(sys.argv) > 2 else "anthropic-messages")
        return
    transcript = synthetic_transcript()
    print(f"synthetic transcript: {len(transcript):,} messages from {len(SOURCES)} models (target <= 25 ms)")
    for name, target in TARGETS.items():
        print(measure(transcript, target).line(name))
    session = real_session()
    if session is None:
        print(f"real session not found at {SESSION}; skipped")
        return
    print(f"real pi session: {len(session):,} messages, all from anthropic/claude-opus-4-5 (target <= 5 ms)")
    own = Model(id="claude-opus-4-5", api="anthropic-messages", provider="anthropic", input=["text", "image"])
    for name, target in {"same model": own, **TARGETS}.items():
        print(measure(session, target).line(name))


if __name__ == "__main__":
    main()
