"""web_fetch in the real program (``baton -p`` as a subprocess): a replayed model asks for a page
of a local HTTP server (tests/tools/web_server.py); the user's rules decide, and the page reaches
the model's next request fenced as untrusted content — or it never is fetched at all."""

from __future__ import annotations

import json
from pathlib import Path

from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tools.web_server import web_server
from tests.tui.cli_harness import run_baton, session_files, session_messages, write_models_json

API = "anthropic-messages"


def fetch_then_answer(url: str) -> list[Reply]:
    return [Reply.sse(tool_call_reply(API, "call_1", "web_fetch", {"url": url}, text="Reading it.")),
            Reply.sse(text_reply(API, "Read."))]


def run(home: Path, workdir: Path, url: str, *args: str, allow: list[str] | None = None) -> tuple[str, str]:
    """Run one prompt; returns the tool result the model got and the second request's text."""
    if allow is not None:
        (home / "settings.json").write_text(json.dumps({"permissions": {"allow": allow}}))
    with ReplayServer(fetch_then_answer(url)) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        result = run_baton(home, workdir, "-p", "--model", "replay/replay-model", *args, "read the page")
        requests = list(server.requests)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Read.\n"
    (tool_result,) = [m for m in session_messages(session_files(home)[0]) if m["role"] == "toolResult"]
    return "".join(b.get("text", "") for b in tool_result["content"]), json.dumps(requests[1].json())


def test_a_rule_naming_the_host_lets_the_page_in_as_untrusted_markdown(home: Path, workdir: Path) -> None:
    with web_server() as pages:
        result, request = run(home, workdir, f"{pages.base}/readme.html", allow=["WebFetch(domain:127.0.0.1)"])
        assert pages.hits["/readme.html"] == 1
    assert "untrusted content fetched from" in result and "# tinylib" in result
    assert "# tinylib" in request and "not instructions" in request


def test_without_a_rule_print_mode_cannot_ask_so_nothing_is_fetched(home: Path, workdir: Path) -> None:
    with web_server() as pages:
        result, _ = run(home, workdir, f"{pages.base}/readme.html")
        assert pages.hits["/readme.html"] == 0
    assert "needs the user's approval" in result and "web_fetch(domain:127.0.0.1)" in result


def test_full_mode_still_refuses_the_metadata_endpoint(home: Path, workdir: Path) -> None:
    result, _ = run(home, workdir, "http://169.254.169.254/latest/meta-data/iam/", "--approval", "full")
    assert "169.254.169.254" in result and "link-local" in result and "Refused" in result
