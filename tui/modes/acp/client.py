"""What baton asks of the editor: session updates, permission, and its view of files."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acp.connection import Connection

    from baton.sessions.permissions.policy import Policy
    from baton.tui.modes.acp.transport import StdioTransport


class AcpClient:
    """The editor on the other end of the connection, with the capabilities it announced."""

    def __init__(self, transport: StdioTransport) -> None:
        self.transport = transport
        self.connection: Connection | None = None
        self.capabilities: dict[str, Any] = {}

    def update(self, session_id: str, update: dict[str, Any]) -> None:
        """Send a ``session/update`` notification (written at once, in order)."""
        self.transport.send_now({
            "jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session_id, "update": update},
        })

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """A request to the editor; raises ``acp.RequestError`` when it answers with an error."""
        if self.connection is None:
            raise ConnectionError("the editor connection is not ready")
        return await self.connection.send_request(method, params)

    def _fs(self, key: str) -> bool:
        fs = self.capabilities.get("fs") or {}
        return bool(fs.get(key))

    @property
    def can_read_files(self) -> bool:
        """The editor offered ``fs/read_text_file``."""
        return self._fs("readTextFile")

    @property
    def can_write_files(self) -> bool:
        """The editor offered ``fs/write_text_file``."""
        return self._fs("writeTextFile")


FileCheck = Callable[[str, str], bool]
"""``check(kind, path)``: whether the editor may ``"read"`` or ``"write"`` the absolute ``path``."""


class EditorFileAccess:
    """The file tools' backend (:class:`tools.file_access.FileAccess`) through the editor, so
    that reads see unsaved buffers and writes land in the editor's view of the file.

    The editor opens paths itself, so it only gets the plain ones (``check``, see
    :func:`editor_file_check`); anything else is read or written on the disk by the tool, with
    exactly the checks of a local read or write."""

    def __init__(self, client: AcpClient, session_id: str, check: FileCheck = lambda kind, path: True) -> None:
        self.client = client
        self.session_id = session_id
        self.check = check

    async def read_text(self, path: str) -> str | None:
        """The editor's text of ``path`` (``None``: read the disk, e.g. the editor cannot)."""
        if not self.client.can_read_files or not self.check("read", path):
            return None
        try:
            result = await self.client.request("fs/read_text_file", {"sessionId": self.session_id, "path": path})
        except Exception:
            return None  # the editor could not read it: the disk decides (and reports errors)
        content = result.get("content") if isinstance(result, dict) else None
        return content if isinstance(content, str) else None

    async def write_text(self, path: str, content: str) -> bool:
        """Write through the editor; ``False`` when it cannot (the disk is written instead)."""
        if not self.client.can_write_files or not self.check("write", path):
            return False
        params = {"sessionId": self.session_id, "path": path, "content": content}
        await self.client.request("fs/write_text_file", params)
        return True


def editor_file_check(policy: Policy | None, cwd: str) -> FileCheck:
    """What the editor may open for the tools, judged when the tool is about to do it (the
    permission gate judged the call earlier; a folder swapped for a symlink since must not send
    the editor elsewhere): a path inside the workspace with no symlink below the workspace's
    root, not protected (writes), and matched by no deny or ask rule."""
    from baton.sessions.permissions.paths import Workspace, fast_realpath, is_within

    workspace = policy.workspace if policy is not None else Workspace.for_dir(cwd)

    def check(kind: str, path: str) -> bool:
        lexical = os.path.normpath(path)
        if not os.path.isabs(lexical) or not is_within(lexical, workspace.given):
            return False
        rel = lexical[len(workspace.given):].lstrip("/")
        expected = os.path.join(workspace.root, rel) if rel else workspace.root
        real = fast_realpath(lexical)
        if real != expected:
            return False  # a symlink on the way
        if kind == "write" and workspace.protected_match(real) is not None:
            return False
        if policy is not None:
            tool = "write" if kind == "write" else "read"
            if policy.match("deny", tool, {"path": path}) or policy.match("ask", tool, {"path": path}):
                return False
        return True

    return check
