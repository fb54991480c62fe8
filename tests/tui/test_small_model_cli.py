"""``baton -c --model SMALL -p …`` after a big read: compacted on the big model, then answered
by the small one (issue 25, item 7), driving the real program against a replay server."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import run_baton, session_files, session_messages, write_models_json

API = "openai-completions"


def _with_usage(body: bytes, prompt_tokens: int) -> bytes:
    """The reply reporting a context of ``prompt_tokens`` (as a real provider would)."""
    usage = f'"usage":{{"prompt_tokens":{prompt_tokens},"completion_tokens":20,"total_tokens":{prompt_tokens + 20}}}'
    out, count = re.subn(rb'"usage":\{[^}]*\}', usage.encode(), body)
    assert count == 1
    return out


def test_continue_on_an_8k_model_after_a_47k_read_compacts_on_the_big_one(home: Path, workdir: Path) -> None:
    (workdir / "big.py").write_text("".join(f"def function_number_{n}(value):  # a large module\n"
                                            for n in range(900)))
    replies = [
        Reply.sse(_with_usage(tool_call_reply(API, "call_1", "read", {"path": "big.py"}), 1_500)),
        Reply.sse(_with_usage(text_reply(API, "It defines 900 functions."), 14_000)),
        Reply.sse(text_reply(API, "## Goal\nUnderstand big.py")),
        Reply.sse(text_reply(API, "carrying on on the small model")),
    ]
    with ReplayServer(replies) as server:
        write_models_json(home, {
            "big": models_json_provider(API, server.url, "big-model"),
            "small": models_json_provider(API, server.url, "small-model", contextWindow=8_192, maxTokens=2_048),
        })
        first = run_baton(home, workdir, "-p", "--model", "big/big-model", "read big.py")
        assert first.returncode == 0, first.stderr
        second = run_baton(home, workdir, "-c", "--model", "small/small-model", "-p", "carry on")
        requests = [r.json() for r in server.requests]
    assert second.returncode == 0, second.stderr
    assert second.stdout == "carrying on on the small model\n"
    summary, answer = requests[2], requests[3]
    assert summary["model"] == "big-model" and "context summarization assistant" in json.dumps(summary)
    assert answer["model"] == "small-model"
    assert len(json.dumps(answer["messages"])) < 8_192 * 2  # a request well inside the 8k window
    assert "Understand big.py" in json.dumps(answer["messages"])
    stored = json.dumps(session_messages(session_files(home)[0]))
    assert "function_number_899(" in stored  # the session file keeps the whole result
