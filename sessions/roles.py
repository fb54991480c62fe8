"""Model roles: which model does which job (``models`` in settings.json).

A role names a model of any provider: ``default`` (the session's own), ``fast`` (exploring,
cheap work), ``smart`` (the hardest decisions) and ``advisor`` (a second opinion). Subagents
name their model as a role, as ``provider/id``, as a Claude Code alias (``opus``, ``sonnet``,
``haiku``: the newest catalog model of the family) or as ``inherit`` (the calling agent's model).

The API is two functions and one error:

- :func:`resolve_model_spec` turns any such name into a :class:`Model`, or raises
  :class:`RoleError` saying what to fix;
- :func:`role_bindings` lists the four roles with what each resolves to now (``/model``);
- :class:`RoleError` (a :class:`ConfigurationError`) is the only error either raises.

Unset roles fall back: ``default`` to ``default_model``, then to the session's model;
``fast`` and ``smart`` to the ``default`` role. ``advisor`` has no fallback: a second opinion
from the same model is none, so asking for it unset is an error.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TypeAlias

from baton.providers.errors import ConfigurationError
from baton.providers.models import Model
from baton.sessions.settings import Settings

Role: TypeAlias = Literal["default", "fast", "smart", "advisor"]
ROLES: tuple[Role, ...] = ("default", "fast", "smart", "advisor")
INHERIT = "inherit"
"""The spec meaning "the calling agent's model"."""


class RoleError(ConfigurationError):
    """A role or model name that cannot be resolved to a model (the message says why)."""


@dataclass(frozen=True, slots=True)
class RoleBinding:
    """One role as it stands: the configured name (``None``: unset), the model it resolves to
    (``None``: none, with ``problem`` saying why) and where that came from."""

    role: Role
    configured: str | None
    model: Model | None
    source: str
    """``settings`` (``models.<role>``), ``default_model``, ``session`` or ``default role``."""
    problem: str | None = None

    def describe(self) -> str:
        """``fast: anthropic/claude-haiku-4-5 (settings)`` or ``advisor: not set``."""
        if self.model is not None:
            return f"{self.role}: {self.model.ref} ({self.source})"
        return f"{self.role}: {self.problem or 'not set'}"


def configured_role(settings: Settings, role: Role) -> str | None:
    """The name ``models.<role>`` holds (stripped; ``None`` when unset or blank)."""
    value = getattr(settings.models, role)
    return value.strip() or None if isinstance(value, str) else None


def resolve_model_spec(spec: str, settings: Settings, current: Model, extra: Iterable[Model] = ()) -> Model:
    """The model ``spec`` names: ``inherit`` (``current``), a role (``default``, ``fast``,
    ``smart``, ``advisor``), a Claude Code alias, ``provider/id`` or a bare id one provider
    offers. ``extra`` are the session's models beyond the catalog (``--model`` objects).
    Raises :class:`RoleError` for an unknown name, an unset advisor or a role naming an
    unknown model. Whether the model has a key is not checked here: the request says so."""
    wanted = spec.strip()
    lowered = wanted.lower()
    if not wanted or lowered == INHERIT:
        return current
    if lowered in ROLES:
        return _role_model(lowered, settings, current, list(extra))
    return _model_named(wanted, list(extra), f"model {wanted!r}")


def role_bindings(settings: Settings, current: Model, extra: Iterable[Model] = ()) -> list[RoleBinding]:
    """Every role with the model it resolves to now, in :data:`ROLES` order (never raises)."""
    models = list(extra)
    out: list[RoleBinding] = []
    for role in ROLES:
        configured = configured_role(settings, role)
        try:
            model = _role_model(role, settings, current, models)
        except RoleError as exc:
            out.append(RoleBinding(role, configured, None, "settings", str(exc) if configured else None))
            continue
        out.append(RoleBinding(role, configured, model, _source(role, settings, configured)))
    return out


def _source(role: Role, settings: Settings, configured: str | None) -> str:
    if configured:
        return "settings"
    if role != "default":
        return "default role"
    return "default_model" if settings.default_model else "session"


def _role_model(role: Role, settings: Settings, current: Model, extra: list[Model]) -> Model:
    configured = configured_role(settings, role)
    if configured is not None:
        if configured.lower() == INHERIT:
            return current
        if configured.lower() in ROLES:
            raise RoleError(f"models.{role} names a role ({configured!r}); give it provider/id")
        return _model_named(configured, extra, f"models.{role} ({configured!r})")
    if role == "advisor":
        raise RoleError("No advisor model is configured: set models.advisor in settings.json (provider/id)")
    if role != "default":
        return _role_model("default", settings, current, extra)
    if settings.default_model:
        return _model_named(settings.default_model, extra, f"default_model ({settings.default_model!r})")
    return current


def _model_named(ref: str, extra: list[Model], what: str) -> Model:
    from baton.sessions.models import find_model

    model = find_model(ref, extra)
    if model is not None:
        return model
    from baton.providers.catalog import ModelNotFoundError, get_model

    try:
        return get_model(ref)
    except ModelNotFoundError as exc:
        raise RoleError(f"{what} is no known model or role: {exc}") from exc
    except Exception as exc:  # a broken catalog: say so rather than crash the caller
        raise RoleError(f"{what}: the model catalog cannot be read ({exc})") from exc
