"""Figures for the key redaction every tool result passes (issue 23). Run:
``python benchmarks/bench_redaction.py``.

* matcher only: ``SecretMatcher.redact`` on a 100 kB result (source code and random base64
  text) for 1, 4 and 16 keys of realistic lengths, holding none of them (the common case) and
  holding one key base64-encoded and one line-split;
* the whole path: ``agent.redaction.redact_result`` on a 100 kB bash-like result, key set
  gathered from the environment and models.json as on every tool result, matcher cached;
* building a matcher for a new key set (once per set).

Target: well under 1 ms per 100 kB with a few keys. Timings on a shared machine are noisy; the
script prints medians of many runs.
"""

from __future__ import annotations

import base64
import os
import random
import statistics
import string
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from baton.agent.redaction import redact_result  # noqa: E402
from baton.agent.tool import AgentToolResult  # noqa: E402
from baton.providers.secret_forms import SecretMatcher  # noqa: E402

SIZE = 100_000
ALPHABET = string.ascii_letters + string.digits


def _key(rng: random.Random, prefix: str, length: int) -> str:
    return prefix + "".join(rng.choice(ALPHABET + "-_") for _ in range(length))


def _keys(count: int) -> list[str]:
    rng = random.Random(count)
    shapes = [("sk-ant-api03-", 95), ("sk-proj-", 156), ("AIza", 35), ("ghp_", 36)]
    return [_key(rng, *shapes[i % len(shapes)]) for i in range(count)]


def _code_text() -> str:
    source = "".join(p.read_text() for p in sorted((ROOT / "agent").glob("*.py")))
    return (source * (SIZE // len(source) + 1))[:SIZE]


def _base64_text() -> str:
    data = base64.encodebytes(random.Random(7).randbytes(SIZE * 3 // 4)).decode()
    return data[:SIZE]


def _median_us(fn: object, runs: int = 200) -> float:
    call = fn  # type: ignore[assignment]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()  # type: ignore[operator]
        times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def bench_matcher() -> None:
    texts = {"code": _code_text(), "base64": _base64_text()}
    for count in (1, 4, 16):
        keys = _keys(count)
        matcher = SecretMatcher(keys)
        for name, text in texts.items():
            clean = _median_us(lambda m=matcher, t=text: m.redact(t))
            print(f"matcher, {count:2} key(s), 100 kB {name:6} without a key: {clean:7.0f} µs")
        hidden = texts["code"][: SIZE // 2] + base64.b64encode(b"x" + keys[0].encode()).decode() + "\n"
        hidden += keys[-1][:20] + "\n" + keys[-1][20:] + "\n" + texts["code"][SIZE // 2:]
        hit = _median_us(lambda m=matcher, t=hidden[:SIZE]: m.redact(t))
        assert keys[0] not in matcher.redact(hidden) and keys[-1][20:] not in matcher.redact(hidden)
        print(f"matcher, {count:2} key(s), 100 kB code   with two keys: {hit:7.0f} µs")


def bench_build() -> None:
    for count in (1, 4, 16):
        keys = _keys(count)
        built = _median_us(lambda k=keys: SecretMatcher(k), runs=50)
        print(f"building a matcher for {count:2} key(s): {built:7.0f} µs")


def bench_whole_path() -> None:
    with tempfile.TemporaryDirectory() as home:
        os.environ["BATON_HOME"] = home
        for index, key in enumerate(_keys(4)):
            os.environ[f"BENCH_{index}_API_KEY"] = key
        text = _code_text()
        result = AgentToolResult.text(text, {"command": "cat big.py", "exitCode": 0})
        redact_result(result)  # builds and caches the matcher
        whole = _median_us(lambda: redact_result(result))
        small = AgentToolResult.text(text[:2000], {"command": "ls"})
        tiny = _median_us(lambda: redact_result(small), runs=2000)
    print(f"redact_result, 4 keys in the environment, 100 kB bash result: {whole:7.0f} µs")
    print(f"redact_result, 4 keys in the environment, 2 kB bash result:   {tiny:7.0f} µs")


if __name__ == "__main__":
    bench_matcher()
    bench_build()
    bench_whole_path()
