"""Models the catalog does not list yet, and Claude Code's model aliases.

A new model usually arrives before the catalog knows it. Under a provider baton knows,
``anthropic/claude-opus-9`` is then used with the provider's protocol and the limits of its
nearest sibling (the known model of that provider whose id shares the most words with it; the
newest among equals): context window, output limit, thinking, image input and request rules
(``compat``). Its prices are unknown and stay zero; :attr:`Model.inferred_from` names the
sibling so the caller can say so once.
"""

from __future__ import annotations

import re

from baton.providers.models import Model, ModelCost

ALIASES = ("opus", "sonnet", "haiku")
"""Claude Code's model aliases: the newest Anthropic model of the family."""

_WORDS = re.compile(r"[a-z]+|\d+")
_DATED = re.compile(r"-\d{8}$")


def alias_target(alias: str, models: list[Model]) -> Model | None:
    """The newest ``anthropic`` model of the family ``alias`` names (a dated snapshot only when
    no alias id exists). ``models`` is in catalog order: newest first within a provider."""
    family = f"claude-{alias}-"
    candidates = [m for m in models if m.provider == "anthropic" and m.id.startswith(family)]
    undated = [m for m in candidates if not _DATED.search(m.id)]
    pool = undated or candidates
    if not pool:
        return None
    return max(pool, key=lambda m: m.release_date or "")


def infer_model(provider: str, model_id: str, models: list[Model]) -> Model | None:
    """``provider/model_id`` built from its nearest sibling among ``models``; ``None`` when
    ``provider`` is none of theirs (or the id is empty)."""
    siblings = [m for m in models if m.provider.lower() == provider.lower()]
    model_id = model_id.strip()
    if not siblings or not model_id:
        return None
    sibling = nearest_sibling(model_id, siblings)
    base = sibling or siblings[0]
    data: dict[str, object] = {
        "id": model_id,
        "name": model_id,
        "api": base.api,
        "provider": base.provider,
        "baseUrl": base.base_url,
        "headers": base.headers,
        "inferredFrom": sibling.ref if sibling else "",
    }
    if sibling is not None:
        data.update(
            reasoning=sibling.reasoning,
            input=list(sibling.input),
            contextWindow=sibling.context_window,
            maxTokens=sibling.max_tokens,
            compat=dict(sibling.compat) if sibling.compat else None,
        )
    model = Model.model_validate(data)
    model.cost = ModelCost()
    return model


def nearest_sibling(model_id: str, siblings: list[Model]) -> Model | None:
    """The sibling whose id starts with the most of ``model_id``'s words, then shares the most
    named words with it (``gpt-5.7-codex`` -> a codex model), then comes first (the newest);
    ``None`` when none shares even its first word."""
    words = _WORDS.findall(model_id.lower())
    names = {w for w in words if not w.isdigit()}
    best: Model | None = None
    best_score = (0, 0)
    for sibling in siblings:
        theirs = _WORDS.findall(sibling.id.lower())
        leading = 0
        for mine, other in zip(words, theirs, strict=False):
            if mine != other:
                break
            leading += 1
        score = (leading, len(names & {w for w in theirs if not w.isdigit()}))
        if score > best_score:
            best, best_score = sibling, score
    return best
