"""Discovery of models served by a local Ollama server (OpenAI-compatible endpoint)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from baton.providers.json_types import JsonObject
from baton.providers.models import Model

if TYPE_CHECKING:
    import ssl

    import httpx

DEFAULT_OLLAMA_URL = "http://localhost:11434"


def ollama_url() -> str:
    """The Ollama server to ask (``OLLAMA_HOST`` when set)."""
    host = os.environ.get("OLLAMA_HOST", "").strip()
    if not host:
        return DEFAULT_OLLAMA_URL
    if "://" not in host:
        host = f"http://{host}"
    return host.rstrip("/")


def discover_ollama_models(base_url: str | None = None, timeout: float = 0.5) -> list[Model]:
    """The models a running Ollama server offers, as ``ollama/<name>`` models speaking
    ``openai-completions``; an empty list when no server answers."""
    import httpx

    base = (base_url or ollama_url()).rstrip("/")
    try:
        with httpx.Client(timeout=timeout, verify=probe_verify(base)) as client:
            response = client.get(f"{base}/api/tags")
            response.raise_for_status()
            entries = response.json().get("models", [])
            return [_to_model(client, base, entry) for entry in entries if entry.get("name")]
    except (httpx.HTTPError, ValueError, AttributeError):
        return []


def probe_verify(base: str) -> ssl.SSLContext | bool:
    """The TLS setting of the probe: httpx's default for an ``https`` server; for plain ``http``
    (the usual ``localhost:11434``) a context that trusts no certificate. httpx builds a context
    for every client even when it never speaks TLS, and the default one parses the whole CA bundle
    (~1.5 MB of OpenSSL memory that stays with the process after the probe, on every start)."""
    if base.lower().startswith("https://"):
        return True
    import ssl

    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies certificates against an empty store


def _to_model(client: httpx.Client, base: str, entry: JsonObject) -> Model:
    name = str(entry["name"])
    context_window = 128_000
    capabilities: list[str] = []
    try:
        info = client.post(f"{base}/api/show", json={"model": name}).json()
        capabilities = list(info.get("capabilities") or [])
        for key, value in (info.get("model_info") or {}).items():
            if key.endswith(".context_length") and isinstance(value, int):
                context_window = value
    except Exception:  # /api/show is optional detail; the model is usable without it
        pass
    return Model(
        id=name,
        name=f"{name} (Ollama)",
        api="openai-completions",
        provider="ollama",
        base_url=f"{base}/v1",
        reasoning="thinking" in capabilities,
        input=["text", "image"] if "vision" in capabilities else ["text"],
        context_window=context_window,
        max_tokens=min(32_000, context_window),
        compat={"supportsDeveloperRole": False, "supportsReasoningEffort": False},
    )
