"""Elicitation: an MCP server asks the user a question (``elicitation/create``, form mode).

The question is the server's, and the front end shows it as such ("MCP server 'x' asks"): a
server may ask for anything, a password included, and baton cannot know whether it needs it.
What baton guarantees: the form has at most :data:`MAX_FIELDS` fields of the spec's primitive
kinds (text, number, integer, yes/no, one of a list), the texts shown are cut, the answers are
checked against the fields before they leave, and a key baton knows never reaches the server
(answers pass :func:`providers.redact.redact`, like everything else baton sends out). URL mode
(open a web page) is refused: baton opens no page for a server. A front end with no one to ask
(print and JSON modes) refuses with that reason; one that cannot show forms refuses them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from baton.providers.json_types import JsonObject, JsonValue
from baton.providers.redact import redact

if TYPE_CHECKING:
    from mcp_types import ElicitRequestParams, ElicitResult, ErrorData

MAX_FIELDS = 20
MAX_MESSAGE_CHARS = 2000
MAX_TEXT_CHARS = 200
MAX_ANSWER_CHARS = 10_000
FieldKind = Literal["string", "number", "integer", "boolean", "enum"]
_KINDS: dict[object, FieldKind] = {"string": "string", "number": "number", "integer": "integer", "boolean": "boolean"}


class ElicitationRefused(Exception):
    """The question is not put to the user; the message says why (the server is told)."""


@dataclass(frozen=True, slots=True)
class FormField:
    """One field of the server's form."""

    name: str
    kind: FieldKind
    title: str
    description: str = ""
    required: bool = False
    options: tuple[str, ...] = ()
    default: JsonValue = None


@dataclass(frozen=True, slots=True)
class ElicitationQuestion:
    """What a server asks: its message and its form (no fields: a yes/no question)."""

    server: str
    message: str
    fields: tuple[FormField, ...] = ()


@dataclass(frozen=True, slots=True)
class ElicitationAnswer:
    """``accept`` with the values typed (text, parsed by :func:`checked_values`), ``decline`` or ``cancel``."""

    action: Literal["accept", "decline", "cancel"]
    values: dict[str, str] = field(default_factory=dict)


Elicitor = Callable[[ElicitationQuestion], Awaitable[ElicitationAnswer]]
"""A front end's way of asking (the TUI's form, ACP's permission question)."""


def _cut(text: object, limit: int) -> str:
    value = " ".join(str(text or "").split()) if limit <= MAX_TEXT_CHARS else str(text or "")
    return value if len(value) <= limit else value[: limit - 1] + "…"


def question_from(server: str, message: str, schema: JsonObject) -> ElicitationQuestion:
    """The server's request as a question; raises :class:`ElicitationRefused` for a form baton
    does not show (too many fields, nested or unknown kinds)."""
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required_names = schema.get("required")
    required = set(required_names) if isinstance(required_names, list) else set()
    if len(properties) > MAX_FIELDS:
        raise ElicitationRefused(f"the form has {len(properties)} fields; baton shows at most {MAX_FIELDS}")
    fields: list[FormField] = []
    for name, spec in properties.items():
        if not isinstance(spec, dict):
            raise ElicitationRefused(f"the field {name!r} has no schema")
        options = spec.get("enum")
        kind = spec.get("type")
        if isinstance(options, list):
            fields.append(FormField(name, "enum", _cut(spec.get("title") or name, MAX_TEXT_CHARS),
                                    _cut(spec.get("description"), MAX_TEXT_CHARS), name in required,
                                    tuple(_cut(o, MAX_TEXT_CHARS) for o in options[:50]), spec.get("default")))
        elif kind in _KINDS:
            fields.append(FormField(name, _KINDS[kind], _cut(spec.get("title") or name, MAX_TEXT_CHARS),
                                    _cut(spec.get("description"), MAX_TEXT_CHARS), name in required,
                                    default=spec.get("default")))
        else:
            raise ElicitationRefused(f"the field {name!r} is of a kind baton does not show ({kind!r})")
    return ElicitationQuestion(server, _cut(message, MAX_MESSAGE_CHARS), tuple(fields))


def checked_values(question: ElicitationQuestion, typed: dict[str, str]) -> dict[str, str | int | float | bool]:
    """The typed answers as the form's kinds; raises ``ValueError`` naming the first bad field."""
    values: dict[str, str | int | float | bool] = {}
    for form_field in question.fields:
        text = typed.get(form_field.name, "").strip()
        if not text:
            if form_field.required:
                raise ValueError(f"{form_field.title} is required")
            continue
        if len(text) > MAX_ANSWER_CHARS:
            raise ValueError(f"{form_field.title} is longer than {MAX_ANSWER_CHARS} characters")
        if form_field.kind == "boolean":
            lowered = text.lower()
            if lowered not in ("y", "yes", "true", "n", "no", "false"):
                raise ValueError(f"{form_field.title}: answer yes or no")
            values[form_field.name] = lowered in ("y", "yes", "true")
        elif form_field.kind == "integer":
            try:
                values[form_field.name] = int(text)
            except ValueError:
                raise ValueError(f"{form_field.title}: a whole number, please") from None
        elif form_field.kind == "number":
            try:
                values[form_field.name] = float(text)
            except ValueError:
                raise ValueError(f"{form_field.title}: a number, please") from None
        elif form_field.kind == "enum":
            if text not in form_field.options:
                raise ValueError(f"{form_field.title}: one of {', '.join(form_field.options)}")
            values[form_field.name] = text
        else:
            values[form_field.name] = redact(text)  # a key the user typed by mistake stays home
    return values


async def answer(elicitor: Elicitor | None, server: str, params: ElicitRequestParams) -> ElicitResult | ErrorData:
    """The SDK's answer to an ``elicitation/create`` from ``server``."""
    from mcp_types import INVALID_REQUEST, ElicitRequestFormParams, ElicitResult, ErrorData

    try:
        if not isinstance(params, ElicitRequestFormParams):
            raise ElicitationRefused("baton opens no web page for a server (URL mode)")
        if elicitor is None:
            raise ElicitationRefused("baton cannot ask the user in this mode (print or JSON)")
        raw = params.requested_schema
        schema: JsonObject = dict(raw) if isinstance(raw, dict) else raw.model_dump(mode="json", by_alias=True)
        question = question_from(server, params.message, schema)
        reply = await elicitor(question)
        if reply.action != "accept":
            return ElicitResult(action=reply.action)
        return ElicitResult(action="accept", content=checked_values(question, reply.values))
    except (ElicitationRefused, ValueError) as exc:
        return ErrorData(code=INVALID_REQUEST, message=f"baton refused the question: {exc}")
