"""``baton --list-models [search]``: the models baton can use, with their capabilities."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from baton.tui.cli.args import EXIT_OK, EXIT_RUN_FAILED

if TYPE_CHECKING:
    from baton.providers.models import Model


def _fmt_tokens(n: int) -> str:
    for scale, suffix in ((1_000_000, "M"), (1000, "K")):
        if n >= scale:
            value = f"{n / scale:.1f}".removesuffix(".0")
            return value + suffix
    return str(n)


def newest_first(models: list[Model]) -> list[Model]:
    """``models`` grouped by provider (in the order they first appear), newest first within
    each (models without a release date keep their place after the dated ones)."""
    order: dict[str, int] = {}
    for model in models:
        order.setdefault(model.provider, len(order))
    dated = sorted(models, key=lambda m: m.release_date or "", reverse=True)
    return sorted(dated, key=lambda m: order[m.provider])


def list_models_command(search: str) -> int:
    """Print the catalog (plus local Ollama models and the demo model), filtered by ``search``."""
    from baton.providers.api_keys import has_api_key
    from baton.providers.catalog import find_models, list_models, models_json_errors
    from baton.providers.demo import demo_model
    from baton.providers.ollama import discover_ollama_models
    from baton.providers.redact import redact

    models = newest_first(find_models(search)) if search else list_models()
    local = discover_ollama_models()
    demo = demo_model()
    extra = [m for m in [*local, demo] if not search or search.lower() in m.ref.lower()]
    rows = [("model", "released", "knowledge", "context", "max out", "thinking", "images", "key")]
    for model in [*models, *extra]:
        keyed = model.provider in ("demo", "ollama") or has_api_key(model.provider)
        rows.append((
            model.ref,
            model.release_date or "-",
            model.knowledge or "-",
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


def update_models_command() -> int:
    """``baton --update-models``: download models.dev's data into the catalog overlay; one line
    either way (nothing changes on a failure)."""
    from baton.providers.catalog import reload
    from baton.providers.catalog_overlay import overlay_path
    from baton.providers.catalog_update import DEFAULT_URL, UpdateError, update_models
    from baton.sessions.settings import load_settings

    settings = load_settings()  # the user's own settings: a project does not pick the source
    url = settings.models_update_url or DEFAULT_URL
    try:
        result = update_models(url, overlay_path())
    except UpdateError as exc:
        print(f"baton: --update-models: {exc}; the model catalog is unchanged", file=sys.stderr)
        return EXIT_RUN_FAILED
    reload()
    skipped = f", {result.skipped} records skipped" if result.skipped else ""
    print(f"baton: model catalog updated from {url}: {result.models} models of {result.providers} "
          f"providers{skipped} ({result.path})")
    return EXIT_OK
