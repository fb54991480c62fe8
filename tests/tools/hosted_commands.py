"""Running a command in a long-lived sandbox host, for the tests of the host and of what it is
started with."""

from __future__ import annotations

import asyncio
import os

from baton.tools.sandbox import Sandbox
from baton.tools.sandbox_host import SandboxHosts


async def run(hosts: SandboxHosts, sandbox: Sandbox, command: str, env: dict[str, str] | None = None,
              cwd: str | None = None) -> tuple[int | None, str]:
    """Run ``command`` with bash in ``hosts`` under ``sandbox``: its exit status and its output."""
    read_fd, write_fd = os.pipe()
    try:
        process = await hosts.spawn(sandbox.bwrap_args(), ["/bin/bash", "-c", command], cwd or sandbox.workspace,
                                    env if env is not None else dict(os.environ), write_fd)
    finally:
        os.close(write_fd)
    status = await process.wait()
    chunks = []
    while chunk := await asyncio.to_thread(os.read, read_fd, 1 << 16):
        chunks.append(chunk)
    os.close(read_fd)
    return status, b"".join(chunks).decode("utf-8", "surrogateescape")
