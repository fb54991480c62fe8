"""Base class for tool parameter models, rendering the JSON schema the way models like it.

Pydantic renders ``x: int | None = None`` as ``anyOf: [{type: integer}, {type: null}]`` with
``default: null``, puts nested models under ``$defs`` and adds titles. Models (and some
providers' schema validators, e.g. Gemini's) do better with the plain form pi sends:
``{type: integer}`` left out of ``required``, nested objects inline, no titles.
:class:`ToolParams` produces that. Parameters use pi's camelCase names as aliases (``oldText``,
``ignoreCase``) and accept either spelling on input.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.json_schema import DEFAULT_REF_TEMPLATE, GenerateJsonSchema, JsonSchemaMode

from baton.providers.json_types import JsonMapping, JsonObject, JsonValue


def _inline(node: JsonValue, defs: JsonMapping) -> JsonValue:
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        found = defs.get(ref.removeprefix("#/$defs/"))
        target: JsonObject = dict(found) if isinstance(found, dict) else {}
        target.update({k: v for k, v in node.items() if k != "$ref"})
        return _inline(target, defs)
    return {key: _inline(value, defs) for key, value in node.items()}


def _simplify_object(schema: JsonObject) -> None:
    schema.pop("title", None)
    properties = schema.get("properties")
    for prop in properties.values() if isinstance(properties, dict) else ():
        if not isinstance(prop, dict):
            continue
        prop.pop("title", None)
        options = prop.get("anyOf")
        if isinstance(options, list):
            concrete = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
            if len(concrete) == 1 and len(concrete) < len(options) and isinstance(concrete[0], dict):
                del prop["anyOf"]
                prop.update({k: v for k, v in concrete[0].items() if k not in prop})
        if "default" in prop and prop["default"] is None:
            del prop["default"]
        items = prop.get("items")
        if isinstance(items, dict):
            _simplify_object(items)
            items.pop("description", None)


class ToolParams(BaseModel):
    """Parameters of one tool call (aliases = pi's JSON names; unknown keys are ignored)."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    @classmethod
    def model_json_schema(
        cls,
        by_alias: bool | None = True,
        ref_template: str = DEFAULT_REF_TEMPLATE,
        schema_generator: type[GenerateJsonSchema] = GenerateJsonSchema,
        mode: JsonSchemaMode = "validation",
        **kwargs: Any,  # pydantic's own keywords, passed on as they came
    ) -> JsonObject:
        """The plain JSON schema described in the module docstring (always camelCase names)."""
        generated: JsonObject = super().model_json_schema(True, ref_template, schema_generator, mode, **kwargs)
        defs = generated.pop("$defs", {})
        schema = _inline(generated, defs if isinstance(defs, dict) else {})
        assert isinstance(schema, dict)  # an object schema stays one
        schema.pop("description", None)
        _simplify_object(schema)
        return schema
