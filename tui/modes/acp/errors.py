"""Protocol errors raised by baton's ACP methods (turned into JSON-RPC error responses)."""

from __future__ import annotations

from typing import Any

from baton.providers.errors import BatonError

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002


class AcpError(BatonError):
    """A JSON-RPC error with a message the editor can show."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` object."""
        out: dict[str, Any] = {"code": self.code, "message": str(self)}
        if self.data is not None:
            out["data"] = self.data
        return out
