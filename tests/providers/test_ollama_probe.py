"""The Ollama probe at every interactive start: plain http loads no CA bundle, https verifies."""

from __future__ import annotations

import json
import ssl

from baton.providers.ollama import discover_ollama_models, probe_verify
from tests.replay_server import RecordedRequest, ReplayServer, Reply


def _tags(request: RecordedRequest) -> Reply:
    if request.path == "/api/tags":
        return Reply(chunks=[json.dumps({"models": [{"name": "qwen2.5-coder:0.5b"}]}).encode()],
                     headers={"content-type": "application/json"})
    return Reply.json_error(404, {"error": "no detail"})


def test_plain_http_probe_parses_no_ca_bundle_and_trusts_nothing() -> None:
    verify = probe_verify("http://localhost:11434")
    assert isinstance(verify, ssl.SSLContext)
    assert verify.cert_store_stats()["x509_ca"] == 0  # the default context holds ~140 CAs
    assert verify.verify_mode == ssl.CERT_REQUIRED and verify.check_hostname  # TLS would be refused


def test_https_probe_keeps_httpx_default_verification() -> None:
    assert probe_verify("https://ollama.example.com") is True
    assert probe_verify("HTTPS://ollama.example.com") is True


def test_discovery_over_plain_http_still_lists_the_models() -> None:
    with ReplayServer(_tags) as server:
        models = discover_ollama_models(server.url)
    assert [model.id for model in models] == ["qwen2.5-coder:0.5b"]
    assert models[0].provider == "ollama"
