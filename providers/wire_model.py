"""The base of every pydantic wire model (pi's camelCase JSON), apart from the message model so
that a module needing only the base (the model descriptions read when an ACP session is answered)
does not import every message class."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from baton.providers.json_types import JsonObject


class _Wire(BaseModel):
    """Base for wire models: camelCase aliases, extras kept, population by attribute name."""

    model_config = ConfigDict(
        populate_by_name=True,
        extra="allow",
        ser_json_inf_nan="constants",
    )

    def to_json_dict(self) -> JsonObject:
        """pi's JSON form of this object (camelCase keys, absent optionals omitted)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
