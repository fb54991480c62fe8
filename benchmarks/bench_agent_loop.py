"""Agent loop overhead per event: a faux reply of N text deltas (chunk_size 1, no delay)
relayed to one subscriber, compared with draining the same provider stream directly.

Run: ``python benchmarks/bench_agent_loop.py [--deltas 10000] [--repeat 5]``. Prints the
agent's time per event, the bare provider stream's, and the difference (the loop's overhead).
Target (issue 4): overhead <= 20 µs/event.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from baton.agent import Agent
from baton.providers.dispatch import stream
from baton.providers.faux import FauxProvider, FauxResponse, faux_model
from baton.providers.messages import Context, UserMessage

API = "faux-bench"


async def _agent_run(provider: FauxProvider, text: str) -> tuple[float, int]:
    provider.add(FauxResponse(content=[text], chunk_size=1, delay=0.0))
    agent = Agent(model=faux_model("bench", api=API))
    count = 0

    def on_event(_event: object) -> None:
        nonlocal count
        count += 1

    agent.subscribe(on_event)
    start = time.perf_counter()
    await agent.prompt("go")
    return time.perf_counter() - start, count


async def _bare_stream(provider: FauxProvider, text: str) -> tuple[float, int]:
    provider.add(FauxResponse(content=[text], chunk_size=1, delay=0.0))
    context = Context(messages=[UserMessage(content="go")])
    start = time.perf_counter()
    count = 0
    async for _event in stream(faux_model("bench", api=API), context):
        count += 1
    return time.perf_counter() - start, count


async def main(deltas: int, repeat: int) -> None:
    text = "x" * deltas
    with FauxProvider(API, chunk_size=1) as provider:
        await _agent_run(provider, "warm up")
        agent_times, bare_times = [], []
        agent_events = bare_events = 0
        for _ in range(repeat):
            elapsed, agent_events = await _agent_run(provider, text)
            agent_times.append(elapsed)
            elapsed, bare_events = await _bare_stream(provider, text)
            bare_times.append(elapsed)
    agent_best, bare_best = min(agent_times), min(bare_times)
    per_agent = agent_best / agent_events * 1e6
    per_bare = bare_best / bare_events * 1e6
    print(f"text deltas:              {deltas}")
    print(f"agent events:             {agent_events} (one subscriber)")
    print(f"agent run (best of {repeat}):   {agent_best * 1e3:8.2f} ms  = {per_agent:6.2f} µs/event "
          f"(median {statistics.median(agent_times) * 1e3:.2f} ms)")
    print(f"bare provider stream:     {bare_best * 1e3:8.2f} ms  = {per_bare:6.2f} µs/event")
    print(f"loop overhead:            {per_agent - per_bare:6.2f} µs/event (target <= 20)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.deltas, args.repeat))
