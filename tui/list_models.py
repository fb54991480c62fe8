"""``baton --list-models [search]``: the models baton can use, with their capabilities."""

from __future__ import annotations

import sys

from baton.tui.cli_args import EXIT_OK


def _fmt_tokens(n: int) -> str:
    for scale, suffix in ((1_000_000, "M"), (1000, "K")):
        if n >= scale:
            value = f"{n / scale:.1f}".removesuffix(".0")
            return value + suffix
    return str(n)


def list_models_command(search: str) -> int:
    """Print the catalog (plus local Ollama models and the demo model), filtered by ``search``."""
    from baton.providers.catalog import find_models, has_api_key, list_models, models_json_errors
    from baton.providers.demo import demo_model
    from baton.providers.ollama import discover_ollama_models
    from baton.providers.redact import redact

    models = find_models(search) if search else list_models()
    local = discover_ollama_models()
    demo = demo_model()
    extra = [m for m in [*local, demo] if not search or search.lower() in m.ref.lower()]
    rows = [("model", "context", "max out", "thinking", "images", "key")]
    for model in [*models, *extra]:
        keyed = model.provider in ("demo", "ollama") or has_api_key(model.provider)
        rows.append((
            model.ref,
            _fmt_tokens(model.context_window),
            _fmt_tokens(model.max_tokens),
            "yes" if model.reasoning else "no",
            "yes" if model.supports_images else "no",
            "yes" if keyed else "-",
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    table = "\n".join("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows)
    print(redact(table))  # models.json names what it likes; a key shows nowhere
    if len(rows) == 1:
        print(redact(f"no models match {search!r}"), file=sys.stderr)
    for error in models_json_errors():
        print(redact(f"baton: models.json: {error}"), file=sys.stderr)
    return EXIT_OK
