"""The response lines of pi's RPC protocol: ``{"id"?, "type": "response", "command", "success",
"data"? | "error"?}``, and :class:`RpcError`, whose message becomes a failed response's ``error``."""

from __future__ import annotations

from baton.providers.errors import BatonError
from baton.providers.json_types import JsonObject, JsonValue


class RpcError(BatonError):
    """A command failed: the message becomes the response's ``error``."""


def response(command: str, request_id: JsonValue, data: JsonValue = None, *, with_data: bool = False) -> JsonObject:
    """A success response (``data`` included when ``with_data`` or not ``None``)."""
    out: JsonObject = {"type": "response", "command": command, "success": True}
    if request_id is not None:
        out = {"id": request_id, **out}
    if with_data or data is not None:
        out["data"] = data
    return out


def error_response(command: str, request_id: JsonValue, message: str) -> JsonObject:
    """A failure response."""
    out: JsonObject = {"type": "response", "command": command, "success": False, "error": message}
    return {"id": request_id, **out} if request_id is not None else out
