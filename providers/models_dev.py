"""models.dev's model data turned into baton catalog entries.

models.dev (https://models.dev, repository ``anomalyco/models.dev``, formerly ``sst/models.dev``)
publishes one record per model and provider: name, limits, modalities, reasoning, prices (cache
reads and writes included), release date and knowledge cut-off. It comes in two shapes, both read
here:

- the public API (``https://models.dev/api.json``): ``{provider id: {"models": {model id:
  record}}}``, what ``baton --update-models`` downloads;
- the repository: ``providers/<provider>/models/<id>.toml`` per model, ``models/<lab>/<id>.toml``
  for facts shared by every host of a model (pulled in with ``base_model``), read by
  :func:`load_repository` into the API shape (as models.dev's own generator does).

:func:`convert` turns the API shape into baton's catalog shape for the providers in
:data:`PROVIDERS`, keeping only the models baton can drive (text in and out, tool calls) and
validating every value (the data may come from the network). Provider settings that decide where a
request and its key go (``api``, ``baseUrl``, ``envVars``) never come from this data.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from baton.providers.catalog_overlay import DATE, EFFORT_NAMES, MODEL_ID
from baton.providers.json_types import JsonObject, JsonValue

ModelEntry = JsonObject
"""One model in baton's catalog shape (pi's camelCase keys: ``contextWindow``, ``cost``...)."""


@dataclass(frozen=True)
class ProviderSpec:
    """A provider baton ships: where its models.dev data is and how baton talks to it."""

    name: str
    """baton's provider name (``anthropic``, ``openrouter``...)."""
    title: str
    source: str
    """The provider's id at models.dev (and in pi's list)."""
    api: str
    base_url: str
    env_vars: tuple[str, ...]
    id_prefixes: tuple[str, ...] = ()
    """When given, only model ids starting with one of these are kept (OpenRouter's hundreds)."""
    exclude: tuple[str, ...] = ()
    """Regular expressions: model ids matching one are left out (not chat models, retired)."""
    compat: JsonObject = field(default_factory=dict)
    """Compat flags every model of the provider gets (the host's request rules)."""


_NOT_CHAT = (r"embed", r"(^|[-/])tts", r"whisper", r"transcribe", r"realtime", r"audio", r"image",
             r"imagine", r"moderation", r"ocr", r"guard", r"search", r"deep-research", r"computer-use",
             r"live", r"robotics", r"veo", r"imagen", r"lyria", r"orpheus", r"safeguard")

PROVIDERS: tuple[ProviderSpec, ...] = (
    ProviderSpec("anthropic", "Anthropic", "anthropic", "anthropic-messages", "https://api.anthropic.com",
                 ("ANTHROPIC_API_KEY",), exclude=(r"_prompt_greater_than", r"-fast$")),
    ProviderSpec("openai", "OpenAI", "openai", "openai-responses", "https://api.openai.com/v1",
                 ("OPENAI_API_KEY",), exclude=(r"^gpt-3\.5", r"^gpt-4-", r"^gpt-4$", r"-fast$", r"^o1-pro$",
                                               r"^chatgpt-", r"^gpt-4o-20")),
    ProviderSpec("google", "Google", "google", "google-generative-ai",
                 "https://generativelanguage.googleapis.com/v1beta", ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
                 exclude=(r"^gemma-", r"customtools", r"^nano-banana", r"^aqa$")),
    ProviderSpec("openrouter", "OpenRouter", "openrouter", "openai-completions", "https://openrouter.ai/api/v1",
                 ("OPENROUTER_API_KEY",),
                 id_prefixes=("anthropic/", "openai/gpt-5", "openai/gpt-oss", "google/gemini-", "x-ai/",
                              "deepseek/", "qwen/qwen3", "moonshotai/", "z-ai/", "mistralai/", "minimax/"),
                 exclude=(r":free$", r":exacto$", r"-fast$", r"^openai/gpt-5[^/]*-chat", r"^google/gemini-2\.0")),
    ProviderSpec("xai", "xAI", "xai", "openai-completions", "https://api.x.ai/v1", ("XAI_API_KEY",),
                 exclude=(r"multi-agent", r"^grok-2", r"^grok-beta", r"^grok-vision")),
    ProviderSpec("groq", "Groq", "groq", "openai-completions", "https://api.groq.com/openai/v1",
                 ("GROQ_API_KEY",), exclude=(r"^groq/compound", r"^allam")),
    ProviderSpec("deepseek", "DeepSeek", "deepseek", "openai-completions", "https://api.deepseek.com",
                 ("DEEPSEEK_API_KEY",)),
    ProviderSpec("mistral", "Mistral", "mistral", "openai-completions", "https://api.mistral.ai/v1",
                 ("MISTRAL_API_KEY",), exclude=(r"^open-", r"^pixtral-12b", r"^mistral-nemo", r"^ministral-3b",
                                                r"^labs-", r"-fim-")),
    ProviderSpec("cerebras", "Cerebras", "cerebras", "openai-completions", "https://api.cerebras.ai/v1",
                 ("CEREBRAS_API_KEY",)),
    ProviderSpec("zai", "Z.AI", "zai", "openai-completions", "https://api.z.ai/api/paas/v4",
                 ("ZAI_API_KEY", "ZHIPU_API_KEY"), compat={"thinkingFormat": "zai"}),
    ProviderSpec("moonshotai", "Moonshot AI (Kimi)", "moonshotai", "openai-completions", "https://api.moonshot.ai/v1",
                 ("MOONSHOT_API_KEY",),
                 compat={"thinkingFormat": "zai", "supportsReasoningEffort": False, "supportsStore": False,
                         "supportsDeveloperRole": False}),
)
"""The providers of the bundled catalog, in the order they are listed and tried."""

_MAX_TOKENS = 100_000_000
_MAX_PRICE = 100_000.0


class SourceError(ValueError):
    """The data is not models.dev's shape (or not usable): the message says where."""


# ---------------------------------------------------------------------------------------------
# The repository's TOML files -> the API shape


def load_repository(root: Path, providers: tuple[str, ...] | None = None) -> dict[str, object]:
    """A models.dev checkout (``providers/``, ``models/``) as the API would serve it, for the
    ``providers`` named (default: those of :data:`PROVIDERS`)."""
    import tomllib

    wanted = providers if providers is not None else tuple(spec.source for spec in PROVIDERS)
    if not (root / "providers").is_dir():
        raise SourceError(f"{root}: not a models.dev checkout (no providers/ folder)")
    out: dict[str, object] = {}
    for provider in wanted:
        folder = root / "providers" / provider
        header = folder / "provider.toml"
        if not header.is_file():
            continue
        entry = tomllib.loads(header.read_text(encoding="utf-8"))
        entry["id"] = provider
        models: dict[str, object] = {}
        model_dir = folder / "models"
        for path in sorted(model_dir.rglob("*.toml")) if model_dir.is_dir() else ():
            if not path.is_file():
                continue  # a dangling link in the checkout
            model_id = path.relative_to(model_dir).as_posix().removesuffix(".toml")
            record = tomllib.loads(path.read_text(encoding="utf-8"))
            base = record.pop("base_model", None)
            omit = record.pop("base_model_omit", None) or []
            if base is not None:
                record = _with_base(root, str(base), record, omit, path)
            record["id"] = model_id
            models[model_id] = record
        entry["models"] = models
        out[provider] = entry
    return out


def _with_base(root: Path, base: str, record: dict[str, object], omit: list[str], path: Path) -> dict[str, object]:
    import tomllib

    base_path = root / "models" / f"{base}.toml"
    if not base_path.is_file():
        raise SourceError(f"{path}: base_model {base!r} not found at {base_path}")
    shared = tomllib.loads(base_path.read_text(encoding="utf-8"))
    for key in ("id", "benchmarks", "license", "links", "weights", "description"):
        shared.pop(key, None)
    merged = _merge_deep(shared, record)
    for dotted in omit:
        *parents, last = str(dotted).split(".")
        target: object = merged
        for part in parents:
            target = target.get(part) if isinstance(target, dict) else None
        if isinstance(target, dict):
            target.pop(last, None)
    return merged


def _merge_deep(base: dict[str, object], over: dict[str, object]) -> dict[str, object]:
    """``over`` on ``base``: tables merged key by key, everything else (lists too) replaced."""
    out = dict(base)
    for key, value in over.items():
        under = out.get(key)
        if isinstance(value, dict) and isinstance(under, dict):
            out[key] = _merge_deep(under, value)
        else:
            out[key] = value
    return out


# ---------------------------------------------------------------------------------------------
# The API shape -> baton's catalog shape


def convert(api: object, specs: tuple[ProviderSpec, ...] = PROVIDERS) -> tuple[dict[str, list[ModelEntry]], list[str]]:
    """baton's models per provider from models.dev's API shape, and one note per record left
    out for a bad value. Raises :class:`SourceError` when ``api`` is not that shape at all or
    holds none of the providers."""
    if not isinstance(api, dict):
        raise SourceError("the top level must be an object of providers")
    out: dict[str, list[ModelEntry]] = {}
    notes: list[str] = []
    for spec in specs:
        provider = api.get(spec.source)
        if provider is None:
            continue
        models = provider.get("models") if isinstance(provider, dict) else None
        if not isinstance(models, dict):
            raise SourceError(f"{spec.source}: \"models\" must be an object of model records")
        entries = []
        for key, record in models.items():
            try:
                entry = convert_model(spec, key, record)
            except SourceError as exc:
                notes.append(f"{spec.source}/{key}: {exc}")
                continue
            if entry is not None:
                entries.append(entry)
        out[spec.name] = sort_newest_first(entries)
    if not out:
        raise SourceError(f"none of the providers baton knows is there ({', '.join(s.source for s in specs)})")
    return out, notes


def sort_newest_first(entries: list[ModelEntry]) -> list[ModelEntry]:
    """Newest release first; among the same date, aliases (no date in the id) before snapshots,
    then by id."""
    entries = sorted(entries, key=lambda e: str(e["id"]))
    entries.sort(key=lambda e: bool(re.search(r"\d{8}$|-\d{2}-\d{4}$|-\d{4}$", str(e["id"]))))
    entries.sort(key=lambda e: str(e.get("releaseDate") or ""), reverse=True)
    return entries


def convert_model(spec: ProviderSpec, key: object, record: object) -> ModelEntry | None:
    """One model record in baton's shape; ``None`` for a model baton cannot drive or does not
    list (no tool calls, not text, deprecated, excluded by the provider's rules)."""
    if not isinstance(record, dict):
        raise SourceError("a model record must be an object")
    model_id = record.get("id", key)
    if not isinstance(model_id, str) or not MODEL_ID.fullmatch(model_id):
        raise SourceError(f"unusable model id {str(model_id)[:60]!r}")
    if spec.id_prefixes and not model_id.startswith(spec.id_prefixes):
        return None
    if any(re.search(pattern, model_id) for pattern in (*_NOT_CHAT, *spec.exclude)):
        return None
    if record.get("tool_call") is not True or record.get("status") == "deprecated":
        return None
    modalities = _object(record.get("modalities"), "modalities")
    inputs = _strings(modalities.get("input"), "modalities.input")
    if "text" not in inputs or "text" not in _strings(modalities.get("output"), "modalities.output"):
        return None
    limit = _object(record.get("limit"), "limit")
    context = _tokens(limit.get("context"), "limit.context")
    if "input" in limit:
        context = min(context, _tokens(limit.get("input"), "limit.input"))
    output = min(_tokens(limit.get("output"), "limit.output"), context)
    cost = _object(record.get("cost", {}), "cost")
    reasoning = record.get("reasoning") is True
    entry: ModelEntry = {
        "id": model_id,
        "name": _name(record.get("name"), model_id),
        "reasoning": reasoning,
        "input": ["text", "image"] if "image" in inputs else ["text"],
        "cost": {
            "input": _price(cost.get("input", 0), "cost.input"),
            "output": _price(cost.get("output", 0), "cost.output"),
            "cacheRead": _price(cost.get("cache_read", 0), "cost.cache_read"),
            "cacheWrite": _price(cost.get("cache_write", 0), "cost.cache_write"),
        },
        "contextWindow": context,
        "maxTokens": output,
    }
    for source_key, target in (("release_date", "releaseDate"), ("knowledge", "knowledge")):
        value = record.get(source_key)
        if value is not None:
            if not isinstance(value, str) or not DATE.fullmatch(value):
                raise SourceError(f"{source_key}: not a YYYY-MM(-DD) date")
            entry[target] = value
    compat = {**spec.compat, **_compat(spec, record, reasoning)}
    if compat:
        entry["compat"] = compat
    return entry


def _compat(spec: ProviderSpec, record: dict[str, object], reasoning: bool) -> JsonObject:
    """Request rules the record states: the effort values accepted (which also say whether
    ``xhigh`` can be offered), temperature refused, reasoning text to send back."""
    compat: JsonObject = {}
    if record.get("temperature") is False:
        compat["supportsTemperature"] = False
    if not reasoning:
        return compat
    efforts: list[str] = []
    options = record.get("reasoning_options")
    for option in options if isinstance(options, list) else ():
        if isinstance(option, dict) and option.get("type") == "effort":
            values = option.get("values")
            if isinstance(values, list):
                efforts += [v for v in values if isinstance(v, str) and v in EFFORT_NAMES]
    if efforts:
        ordered = [name for name in EFFORT_NAMES if name in efforts]
        compat["reasoningEfforts"] = list[JsonValue](ordered)
        if "xhigh" in ordered or "max" in ordered:
            compat["supportsXhigh"] = True
    interleaved = record.get("interleaved")
    if (spec.api == "openai-completions" and isinstance(interleaved, dict)
            and interleaved.get("field") == "reasoning_content"):
        compat["requiresReasoningContentOnAssistantMessages"] = True
    return compat


def _object(value: object, where: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise SourceError(f"{where}: must be an object")
    return value


def _strings(value: object, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SourceError(f"{where}: must be a list of strings")
    return value


def _tokens(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SourceError(f"{where}: must be a number of tokens")
    if not 0 < value <= _MAX_TOKENS:
        raise SourceError(f"{where}: {value} is out of range")
    return int(value)


def _price(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SourceError(f"{where}: must be a price in dollars per million tokens")
    if not 0 <= value <= _MAX_PRICE:
        raise SourceError(f"{where}: {value} is out of range")
    return float(value)


def _name(value: object, model_id: str) -> str:
    """A display name without control characters (it is printed on the terminal)."""
    if not isinstance(value, str):
        return model_id
    cleaned = "".join(ch for ch in value if ch.isprintable())[:80].strip()
    return cleaned or model_id
