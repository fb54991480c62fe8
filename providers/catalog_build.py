"""Rebuild the bundled model catalog (``catalog_data.json``) from public model data.

One command::

    python -m baton.providers.catalog_build MODELS_DEV [--pi MODELS_GENERATED_TS] [--out FILE]

``MODELS_DEV`` is either a checkout of models.dev's repository or its API answer saved to a file:

    git clone --depth 1 https://github.com/anomalyco/models.dev /tmp/models.dev
    # or: curl -o /tmp/models-dev.json https://models.dev/api.json

``--pi`` is pi's generated model list, for the request rules it records:

    curl -o /tmp/pi-models.ts \\
      https://raw.githubusercontent.com/earendil-works/pi/main/packages/ai/src/models.generated.ts

The output replaces ``catalog_data.json`` (commit it); the report on standard error gives the
count per provider, the newest model of each, and where the two sources disagree.

Which source wins
-----------------
models.dev is the record of model *facts*; pi's list is generated from models.dev and adds the
*request rules* pi learnt against the APIs. So:

- **Which models exist**: models.dev. A model gone from models.dev has been retired (or marked
  ``deprecated``) and is left out even while pi still lists it; models only pi lists are not
  added, since pi's file can lag behind (the one this catalog was built from dates from March
  2026, the models.dev data from July 2026 onwards).
- **Prices (cache reads and writes included), context window, max output, input modalities,
  reasoning flag, release date, knowledge cut-off, name**: models.dev. pi copies them from
  models.dev with a delay, and on OpenRouter pi takes the router's own listing, whose
  ``max_completion_tokens`` (often 4096) is the cheapest route's, not the model's. Where
  models.dev gives an input limit (OpenAI: 272K of a 400K window) that is the context window:
  a request can carry no more, and compaction must happen before it.
- **Request rules (``compat``)**: pi, for the flags pi sets (``thinkingFormat``,
  ``supportsDeveloperRole``...), over the provider's defaults; models.dev's own statements win
  where it makes them: the effort values a model accepts (``reasoningEfforts``, which also decide
  ``supportsXhigh``), temperature refused (``supportsTemperature: false``), and reasoning text to
  send back (``interleaved``).
- **Where requests go (``api``, ``baseUrl``, ``envVars``)**: neither; baton's own table
  (:data:`baton.providers.models_dev.PROVIDERS`).

The same conversion (:func:`baton.providers.models_dev.convert`) serves ``baton --update-models``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict

from baton.providers.catalog_data import BuiltinProviderEntry
from baton.providers.json_types import JsonObject, JsonValue
from baton.providers.models_dev import PROVIDERS, ModelEntry, SourceError, convert, load_repository

DEFAULT_OUT = Path(__file__).with_name("catalog_data.json")
COMMENT = (
    "Built-in model catalog for baton, written by `python -m baton.providers.catalog_build` from "
    "models.dev's data (facts) and pi's generated model list (request rules); do not edit by hand. "
    "Prices in US dollars per million tokens. envVars: the environment variables holding the "
    "provider's API key, first one preferred."
)


class CatalogDocument(TypedDict):
    """``catalog_data.json``: the comment that says where it comes from, and the providers."""

    _comment: str
    providers: dict[str, BuiltinProviderEntry]


def load_models_dev(path: Path) -> object:
    """models.dev's data in its API shape, from a checkout (a folder) or a saved API answer."""
    if path.is_dir():
        return load_repository(path)
    try:
        data: JsonValue = json.loads(path.read_text(encoding="utf-8"))
        return data
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"{path}: cannot read: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise SourceError(f"{path}: not JSON (line {exc.lineno}: {exc.msg})") from exc


def build(models_dev: object, pi: dict[str, JsonObject] | None = None) -> tuple[CatalogDocument, list[str]]:
    """The catalog document and the report lines (notes and disagreements)."""
    converted, notes = convert(models_dev)
    report = [f"left out: {note}" for note in notes]
    providers: dict[str, BuiltinProviderEntry] = {}
    for spec in PROVIDERS:
        models = converted.get(spec.name)
        if models is None:
            report.append(f"{spec.name}: not in the models.dev data; provider left out")
            continue
        if pi is not None:
            report += _apply_pi(spec.name, models, pi.get(spec.source) or {})
        providers[spec.name] = {
            "name": spec.title,
            "api": spec.api,
            "baseUrl": spec.base_url,
            "envVars": list(spec.env_vars),
            "models": models,
        }
    return {"_comment": COMMENT, "providers": providers}, report


def _apply_pi(provider: str, models: list[ModelEntry], pi_models: JsonObject) -> list[str]:
    """pi's compat flags onto the models both list; one line per fact the two disagree on."""
    lines = []
    for model in models:
        theirs = pi_models.get(str(model["id"]))
        if not isinstance(theirs, dict):
            continue
        pi_compat, ours = theirs.get("compat"), model.get("compat")
        if isinstance(pi_compat, dict) and pi_compat:
            model["compat"] = {**pi_compat, **(ours if isinstance(ours, dict) else {})}
        for key in ("contextWindow", "maxTokens", "reasoning"):
            if key in theirs and theirs[key] != model[key]:
                lines.append(f"{provider}/{model['id']}: {key} models.dev={model[key]} pi={theirs[key]}")
        pi_cost, cost = theirs.get("cost"), model["cost"]
        if not isinstance(pi_cost, dict) or not isinstance(cost, dict):
            continue
        for key, value in cost.items():
            other = pi_cost.get(key)
            if isinstance(other, int | float) and isinstance(value, int | float) and abs(float(other) - value) > 1e-6:
                lines.append(f"{provider}/{model['id']}: cost.{key} models.dev={value:g} pi={other:g}")
    gone = sorted(set(pi_models) - {str(m["id"]) for m in models})
    if gone:
        lines.append(f"{provider}: only pi lists (left out): {', '.join(gone)}")
    return lines


def dump(document: CatalogDocument) -> str:
    """The catalog as JSON text, one model per line (so a refresh reads well as a diff)."""
    out = ["{", f' "_comment": {json.dumps(document["_comment"])},', ' "providers": {']
    providers = list(document["providers"].items())
    for p_index, (name, entry) in enumerate(providers):
        out.append(f"  {json.dumps(name)}: {{")
        for key, value in (("name", entry["name"]), ("api", entry["api"]), ("baseUrl", entry["baseUrl"]),
                           ("envVars", entry["envVars"])):
            out.append(f"   {json.dumps(key)}: {json.dumps(value)},")
        out.append('   "models": [')
        models = entry["models"]
        for m_index, model in enumerate(models):
            out.append(f"    {json.dumps(model)}{',' if m_index < len(models) - 1 else ''}")
        out.append("   ]")
        out.append(f"  }}{',' if p_index < len(providers) - 1 else ''}")
    out += [" }", "}", ""]
    return "\n".join(out)


def summary(document: CatalogDocument) -> list[str]:
    """``provider: N models, newest: id (date)`` per provider."""
    lines = []
    for name, entry in document["providers"].items():
        models = entry["models"]
        newest = models[0] if models else None
        what = f"{newest['id']} ({newest.get('releaseDate', '?')})" if newest else "-"
        lines.append(f"{name}: {len(models)} models, newest: {what}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: rebuild, write, report; 1 with one line on a bad source."""
    parser = argparse.ArgumentParser(prog="python -m baton.providers.catalog_build", description=__doc__.split("\n")[0])
    parser.add_argument("models_dev", type=Path, help="models.dev checkout (folder) or saved api.json")
    parser.add_argument("--pi", type=Path, help="pi's packages/ai/src/models.generated.ts")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write (default: the bundled catalog)")
    parser.add_argument("--verbose", action="store_true", help="list every disagreement and left-out record")
    args = parser.parse_args(argv)
    try:
        pi = None
        if args.pi:
            from baton.providers.pi_models import parse

            pi = parse(args.pi.read_text(encoding="utf-8"))
        document, report = build(load_models_dev(args.models_dev), pi)
    except (SourceError, OSError) as exc:
        print(f"catalog_build: {exc}", file=sys.stderr)
        return 1
    args.out.write_text(dump(document), encoding="utf-8")
    for line in summary(document):
        print(line, file=sys.stderr)
    shown = report if args.verbose else report[:20]
    for line in shown:
        print(f"  {line}", file=sys.stderr)
    if len(report) > len(shown):
        print(f"  ... {len(report) - len(shown)} more (--verbose)", file=sys.stderr)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
