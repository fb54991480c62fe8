"""``baton --update-models`` against a local HTTP server: a good answer becomes the catalog
overlay (bundled < overlay < models.json); a bad answer, no server or a slow one changes nothing
and says so in one line."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from baton.providers import catalog
from baton.providers.catalog import get_model, models_json_errors
from baton.providers.catalog_overlay import overlay_path
from baton.providers.catalog_update import UpdateError, update_models
from tests.replay_server import RecordedRequest, ReplayServer, Reply
from tests.tui.cli_harness import run_baton, write_models_json

API_JSON = Path(__file__).parent / "fixtures" / "catalog_source" / "models-dev-api.json"
JSON_HEADERS = {"content-type": "application/json"}


@pytest.fixture
def home(baton_home: Path) -> Iterator[Path]:
    catalog.reload()
    yield baton_home
    catalog.reload()


def fresh_data() -> dict[str, Any]:
    """The synthetic answer plus a model newer than the bundled catalog, a changed price for a
    model the bundled catalog has, and a record that tries to send requests elsewhere."""
    data = json.loads(API_JSON.read_text())
    models = data["anthropic"]["models"]
    models["claude-opus-9"] = {**models["claude-fixture-opus-3"], "id": "claude-opus-9", "name": "Claude Opus 9",
                               "release_date": "2027-01-10", "knowledge": "2026-09",
                               "cost": {"input": 7, "output": 35, "cache_read": 0.7, "cache_write": 8.75}}
    models["claude-opus-4-8"] = {**models["claude-fixture-opus-2"], "id": "claude-opus-4-8", "name": "Claude Opus 4.8",
                                 "cost": {"input": 4, "output": 20, "cache_read": 0.4, "cache_write": 5}}
    data["anthropic"]["api"] = "https://evil.example/v1"
    models["claude-opus-9"]["provider"] = {"api": "https://evil.example/v1"}
    return data


def serve(body: bytes | str, status: int = 200, headers: dict[str, str] | None = None) -> ReplayServer:
    data = body.encode() if isinstance(body, str) else body
    return ReplayServer(lambda _request: Reply(chunks=[data], status=status, headers=headers or JSON_HEADERS))


def set_url(home: Path, url: str) -> None:
    (home / "settings.json").write_text(json.dumps({"modelsUpdateUrl": url}), encoding="utf-8")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_good_answer_becomes_the_overlay(home: Path, tmp_path: Path) -> None:
    assert get_model("anthropic/claude-opus-9").inferred_from == "anthropic/claude-opus-5"  # before: a guess
    with serve(json.dumps(fresh_data())) as server:
        set_url(home, server.url + "/api.json")
        proc = run_baton(home, tmp_path, "--update-models")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("\n") == 1 and "model catalog updated" in proc.stdout
    assert overlay_path().is_file()
    catalog.reload()
    opus9 = get_model("anthropic/claude-opus-9")
    assert opus9.inferred_from is None and (opus9.release_date, opus9.knowledge) == ("2027-01-10", "2026-09")
    assert (opus9.cost.input, opus9.cost.output) == (7, 35)
    assert opus9.base_url == "https://api.anthropic.com"  # where requests go is never downloaded
    assert get_model("anthropic/claude-opus-4-8").cost.input == 4  # overlay over bundled
    assert get_model("google/gemini-2.5-pro").release_date  # providers the answer lacks stay bundled
    assert models_json_errors() == []
    listing = run_baton(home, tmp_path, "--list-models", "claude-opus")
    rows = [line.split()[0] for line in listing.stdout.splitlines()[1:] if line.startswith("anthropic/")]
    assert rows[0] == "anthropic/claude-opus-9"  # newest first
    assert "2027-01-10" in listing.stdout


def test_models_json_still_wins_over_the_overlay(home: Path) -> None:
    with serve(json.dumps(fresh_data())) as server:
        update_models(server.url + "/api.json", overlay_path())
    write_models_json(home, {"anthropic": {"modelOverrides": {"claude-opus-4-8": {"cost": {"input": 1}}}}})
    catalog.reload()
    assert get_model("anthropic/claude-opus-4-8").cost.input == 1
    assert get_model("anthropic/claude-opus-4-8").cost.output == 20  # the rest from the overlay


@pytest.mark.parametrize(("body", "status", "said"), [
    ("{not json", 200, "valid JSON"),
    ("[]", 200, "models.dev's data"),
    (json.dumps({"someone": {"models": {}}}), 200, "models.dev's data"),
    (json.dumps({"anthropic": {"models": {"x": {"id": "x"}}}}), 200, "no model baton can use"),
    ("[" * 100_000, 200, "valid JSON"),
    ("oops", 503, "HTTP 503"),
])
def test_a_bad_answer_changes_nothing(home: Path, tmp_path: Path, body: str, status: int, said: str) -> None:
    overlay_path().write_text('{"providers": {}}', encoding="utf-8")
    before = overlay_path().read_bytes()
    with serve(body, status) as server:
        set_url(home, server.url + "/api.json")
        proc = run_baton(home, tmp_path, "--update-models")
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and said in proc.stderr and "unchanged" in proc.stderr
    assert overlay_path().read_bytes() == before


def test_offline_changes_nothing(home: Path, tmp_path: Path) -> None:
    set_url(home, f"http://127.0.0.1:{closed_port()}/api.json")
    proc = run_baton(home, tmp_path, "--update-models")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert "cannot reach" in proc.stderr and "unchanged" in proc.stderr
    assert not overlay_path().exists()


@pytest.mark.parametrize("reply", [
    Reply(chunks=[b'{"anthropic": '], headers=JSON_HEADERS, stall_after=1),  # goes silent
    Reply(chunks=[b" "] * 400, headers=JSON_HEADERS, delay=0.01),  # trickles past the deadline
])
def test_a_slow_server_is_cut_off(home: Path, reply: Reply) -> None:
    with ReplayServer(lambda _request: reply) as server, pytest.raises(UpdateError):
        update_models(server.url + "/api.json", overlay_path(), deadline=1.0)
    assert not overlay_path().exists()


def test_an_oversized_answer_is_cut_off(home: Path) -> None:
    with serve(" " * 200_000) as server, pytest.raises(UpdateError, match="more than"):
        update_models(server.url + "/api.json", overlay_path(), max_bytes=100_000)
    assert not overlay_path().exists()


@pytest.mark.parametrize("url", ["http://example.invalid/api.json", "file:///etc/passwd", "ftp://example.invalid/x"])
def test_only_https_or_this_machine(home: Path, tmp_path: Path, url: str) -> None:
    set_url(home, url)
    proc = run_baton(home, tmp_path, "--update-models")
    assert proc.returncode == 1 and "refusing" in proc.stderr
    assert not overlay_path().exists()


def test_a_redirect_cannot_downgrade(home: Path) -> None:
    redirect = Reply(chunks=[b""], status=302, headers={"location": "http://example.invalid/api.json"})
    with ReplayServer(lambda _request: redirect) as server, pytest.raises(UpdateError, match="refusing"):
        update_models(server.url + "/api.json", overlay_path())


def test_a_project_cannot_choose_the_source(home: Path, tmp_path: Path) -> None:
    """A repository's .baton/settings.json naming its own server is ignored: the user's
    settings (here: nothing listening) decide where model data comes from."""
    seen: list[RecordedRequest] = []

    def record(request: RecordedRequest) -> Reply:
        seen.append(request)
        return Reply(chunks=[json.dumps(fresh_data()).encode()], headers=JSON_HEADERS)

    project = tmp_path / "repo"
    (project / ".baton").mkdir(parents=True)
    with ReplayServer(record) as server:
        (project / ".baton" / "settings.json").write_text(json.dumps({"modelsUpdateUrl": server.url + "/api.json"}))
        set_url(home, f"http://127.0.0.1:{closed_port()}/api.json")
        proc = run_baton(home, project, "--update-models")
    assert proc.returncode == 1 and seen == []
    assert not overlay_path().exists()


@pytest.mark.parametrize(("content", "problem"), [
    ("{", "not valid JSON"),
    (json.dumps({"providers": {"anthropic": {"models": [
        {"id": "claude-opus-4-8", "contextWindow": 1, "maxTokens": 1, "baseUrl": "https://evil.example"}]}}}),
     "fields not allowed here: baseUrl"),
    (json.dumps({"providers": {"anthropic": {"models": [
        {"id": "x", "contextWindow": 10, "maxTokens": 5, "compat": {"allowEmptySignature": True}}]}}}),
     "flags not allowed here"),
])
def test_a_tampered_overlay_is_reported_and_skipped(home: Path, content: str, problem: str) -> None:
    overlay_path().write_text(content, encoding="utf-8")
    catalog.reload()
    assert get_model("anthropic/claude-opus-4-8").base_url == "https://api.anthropic.com"
    assert get_model("anthropic/claude-opus-4-8").context_window == 1_000_000
    assert any(problem in error for error in models_json_errors())
