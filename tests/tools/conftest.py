"""Fixtures for the tool tests: a scratch working directory and a helper to call a tool."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from baton.agent.tool import AgentTool, AgentToolResult
from baton.tools.sandbox_host import SandboxHosts


@pytest.fixture(autouse=True)
def private_tempdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Temp files the tools create (bash's full-output logs) land in the test's own directory."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return temp


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    """An empty working directory for the tools."""
    work = tmp_path / "work"
    work.mkdir()
    return work


Call = Callable[..., Coroutine[Any, Any, AgentToolResult]]


@pytest.fixture
def call() -> Call:
    """``await call(tool, **args)`` runs the tool through ``execute`` (validation included)."""

    async def run(tool: AgentTool, signal: asyncio.Event | None = None, on_update: Any = None,
                  **args: Any) -> AgentToolResult:
        return await tool.execute("call-1", args, signal, on_update)

    return run


def text_of(result: AgentToolResult) -> str:
    """The text content of a result (text blocks joined)."""
    return "\n".join(block.text for block in result.content if block.type == "text")


@pytest.fixture
async def hosts() -> AsyncIterator[SandboxHosts]:
    """Long-lived sandbox hosts, closed after the test."""
    hosts = SandboxHosts()
    yield hosts
    await hosts.close()


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A private folder outside ``/tmp``, which the sandbox sees (its ``/tmp`` is its own)."""
    path = Path(tempfile.mkdtemp(prefix="baton-test-", dir="/var/tmp" if Path("/var/tmp").is_dir() else None))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
