"""Figures for MCP servers (issue: extensions from the ecosystem).

1. First paint with 3 configured MCP servers that each take 2 s to start: the real ``baton``
   command in a pseudo-terminal (offline demo model), time until the editor has painted and until
   a typed key is echoed, with and without the servers, runs interleaved. Target: unchanged
   (<= +20 ms). The servers are ``sleep 2`` in front of the SDK test server, and baton imports
   the SDK only after its first paint.
   1b. The in-process part, free of start-up noise: the time the session spends on MCP before
   it can paint (reading the configuration, setting up the manager), and whether the SDK is
   imported by then (it must not be).
2. Tool-call overhead over the SDK's own client: the stdio test server called N times through
   the SDK's ``Client.call_tool`` directly and through baton's ``McpTool.execute`` (connection,
   argument handling, result mapping): (a) separate servers, runs interleaved; (b) one server,
   the two calls alternating, overhead = median of the paired differences. Target: <= 2 ms.

Run: ``python benchmarks/bench_mcp.py [--calls N] [--runs N]``. The machine may be shared:
figures are medians of interleaved runs, and noisy when other work competes for the CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_tui import startup_once  # noqa: E402
from tests.tools.mcp.helpers import SERVER_APP  # noqa: E402


def bench_first_paint(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        plain, with_mcp, work = Path(tmp) / "plain", Path(tmp) / "mcp", Path(tmp) / "work"
        for path in (plain, with_mcp, work):
            path.mkdir()
        server = f"sleep 2; exec {shlex.quote(sys.executable)} {shlex.quote(str(SERVER_APP))} stdio"
        (with_mcp / "mcp.json").write_text(json.dumps({"mcpServers": {
            f"slow{i}": {"command": "sh", "args": ["-c", server], "env": {"MCP_TEST_MARKERS": tmp}}
            for i in range(3)}}))
        startup_once(plain, work)  # warm caches
        startup_once(with_mcp, work)
        time.sleep(8)
        figures: dict[str, list[tuple[float, float]]] = {"plain": [], "mcp": []}
        for _ in range(runs):
            figures["plain"].append(startup_once(plain, work))
            figures["mcp"].append(startup_once(with_mcp, work))
            # The harness gives baton 5 s to quit; closing servers still in their handshake takes
            # the SDK's 2 s grace, and a killed baton leaves them to exit on their own: let them
            # finish before the next run, so they do not load the machine during it.
            time.sleep(8)
    paint = {k: statistics.median(p for p, _ in v) for k, v in figures.items()}
    keys = {k: statistics.median(a for _, a in v) for k, v in figures.items()}
    print(f"1. first paint, median of {runs} interleaved runs: no MCP {paint['plain'] * 1000:.0f} ms, "
          f"3 slow MCP servers {paint['mcp'] * 1000:.0f} ms ({(paint['mcp'] - paint['plain']) * 1000:+.0f} ms; "
          f"target <= +20 ms); key echoed {keys['plain'] * 1000:.0f} ms vs {keys['mcp'] * 1000:.0f} ms "
          f"({(keys['mcp'] - keys['plain']) * 1000:+.0f} ms)")


async def _sdk_calls(calls: int, markers: str) -> list[float]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=[str(SERVER_APP), "stdio"],
                                   env={**os.environ, "MCP_TEST_MARKERS": markers})
    with open(os.devnull, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            await client.call_tool("add", {"a": 1, "b": 2})  # warm
            return await _timed(calls, lambda i: client.call_tool("add", {"a": i, "b": 2}))


async def _baton_calls(calls: int, markers: str, log_dir: Path) -> list[float]:
    from baton.tools.mcp.config import McpServerConfig
    from baton.tools.mcp.connection import McpConnection
    from baton.tools.mcp.tool import make_mcp_tool

    config = McpServerConfig("bench", "stdio", command=sys.executable, args=[str(SERVER_APP), "stdio"],
                             env={"MCP_TEST_MARKERS": markers})
    connection = McpConnection(config, log_dir, cwd=Path.cwd())
    connection.start()
    try:
        assert await connection.wait_ready(120), connection.error
        tool = make_mcp_tool(connection, next(t for t in connection.tools if t.name == "add"), 120)
        signal = asyncio.Event()
        await tool.execute("warm", {"a": 1, "b": 2}, signal)
        return await _timed(calls, lambda i: tool.execute(f"c{i}", {"a": i, "b": 2}, signal))
    finally:
        await connection.stop()


async def _alternating(calls: int, markers: str, log_dir: Path) -> tuple[list[float], list[float]]:
    """One server, one connection: each round calls through the SDK client directly, then through
    baton's tool, so both see the same server and the same machine load."""
    from baton.tools.mcp.config import McpServerConfig
    from baton.tools.mcp.connection import McpConnection
    from baton.tools.mcp.tool import make_mcp_tool

    config = McpServerConfig("bench", "stdio", command=sys.executable, args=[str(SERVER_APP), "stdio"],
                             env={"MCP_TEST_MARKERS": markers})
    connection = McpConnection(config, log_dir, cwd=Path.cwd())
    connection.start()
    sdk: list[float] = []
    ours: list[float] = []
    try:
        assert await connection.wait_ready(120), connection.error
        client = connection._client
        tool = make_mcp_tool(connection, next(t for t in connection.tools if t.name == "add"), 120)
        signal = asyncio.Event()
        for i in range(calls + 10):
            start = time.perf_counter()
            await client.call_tool("add", {"a": i, "b": 2})
            middle = time.perf_counter()
            await tool.execute(f"c{i}", {"a": i, "b": 2}, signal)
            end = time.perf_counter()
            if i >= 10:  # warm-up calls left out
                sdk.append(middle - start)
                ours.append(end - middle)
    finally:
        await connection.stop()
    return sdk, ours


def bench_pre_paint_work(repeats: int = 200) -> None:
    """What MCP costs a session before the app can paint: reading the configuration and setting
    up the manager; the SDK itself is imported later, in the background."""
    from baton.sessions.extensions import SessionExtensions
    from baton.sessions.options import SessionOptions
    from baton.sessions.settings import load_settings

    with tempfile.TemporaryDirectory() as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        (home / "mcp.json").write_text(json.dumps({"mcpServers": {
            f"s{i}": {"command": "sh", "args": ["-c", "sleep 2"], "env": {"A": "${HOME}"}} for i in range(3)}}))
        os.environ["BATON_HOME"] = str(home)
        settings = load_settings(project_dir=work)
        options = SessionOptions(cwd=work, start_mcp=False)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            extensions = SessionExtensions.create(work, settings, trust_project=None, options=options)
            times.append(time.perf_counter() - start)
        assert len(extensions.mcp.connections) == 3
    loaded = "mcp" in sys.modules
    print(f"1b. MCP work in-process before the first paint (3 servers configured): "
          f"{statistics.median(times) * 1000:.2f} ms median; SDK imported before paint: {loaded}")


async def _timed(calls: int, make: object) -> list[float]:
    out = []
    for i in range(calls):
        start = time.perf_counter()
        await make(i)  # type: ignore[operator]
        out.append(time.perf_counter() - start)
    return out


def bench_call_overhead(calls: int, rounds: int = 3) -> None:
    sdk: list[float] = []
    ours: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):  # interleaved, so drifting machine load hits both alike
            sdk += asyncio.run(_sdk_calls(calls, tmp))
            ours += asyncio.run(_baton_calls(calls, tmp, Path(tmp) / "logs"))
    sdk_ms, our_ms = statistics.median(sdk) * 1000, statistics.median(ours) * 1000
    print(f"2a. MCP tool call, separate servers (stdio, median of {len(sdk)}): SDK Client.call_tool "
          f"{sdk_ms:.2f} ms, baton McpTool.execute {our_ms:.2f} ms: {our_ms - sdk_ms:+.2f} ms per call")
    with tempfile.TemporaryDirectory() as tmp:
        sdk, ours = asyncio.run(_alternating(calls, tmp, Path(tmp) / "logs"))
    diffs = [o - s for s, o in zip(sdk, ours, strict=True)]
    print(f"2b. MCP tool call, same server, alternating (median of {len(sdk)}): SDK {statistics.median(sdk) * 1000:.2f}"
          f" ms, baton {statistics.median(ours) * 1000:.2f} ms: overhead {statistics.median(diffs) * 1000:+.2f} ms "
          f"per call (median of paired differences; target <= 2 ms)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    bench_pre_paint_work()
    bench_first_paint(args.runs)
    bench_call_overhead(args.calls)


if __name__ == "__main__":
    main()
