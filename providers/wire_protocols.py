"""The names of the wire protocols baton speaks, and the module that speaks each.

Only names: nothing here imports an adapter. :mod:`providers.dispatch` loads a protocol's module
on first use; :mod:`providers.models_json` checks a model's ``api`` against :func:`known_apis`.
Adding a protocol: docs/architecture.md, "Adding a wire protocol".
"""

from __future__ import annotations

WIRE_PROTOCOLS: dict[str, str] = {
    "openai-completions": "baton.providers.openai_completions",
    "openai-responses": "baton.providers.openai_responses",
    "anthropic-messages": "baton.providers.anthropic_messages",
    "google-generative-ai": "baton.providers.google_generative_ai",
}
"""Built-in wire protocols: API name -> the module whose ``ADAPTER`` speaks it (imported on first use)."""
IN_PROCESS_PROTOCOLS: dict[str, str] = {
    "baton-demo": "baton.providers.demo",
}
"""In-process providers registered on first use: each module has a ``register()`` function."""
SCRIPTED_API = "faux"
"""The scripted in-process provider's API (:mod:`providers.faux`, registered at run time)."""


def known_apis() -> tuple[str, ...]:
    """The API names a model definition may use: the wire protocols and the scripted provider."""
    return (*WIRE_PROTOCOLS, SCRIPTED_API)
