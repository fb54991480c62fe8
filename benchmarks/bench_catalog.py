"""Cold load of the model catalog, each run in a fresh process with an empty ``$BATON_HOME``:
importing ``baton.providers.catalog``, the first ``list_models()`` (reading
``catalog_data.json`` and building every ``Model``; what the first lookup at start-up costs),
then one ``get_model``. With ``--overlay``, a downloaded overlay as large as the bundled data is
in place too.

Run: ``python -m benchmarks.bench_catalog [N] [--overlay]``. Prints the median of N runs (20).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_CODE = r"""
import time
t0 = time.perf_counter()
from baton.providers import catalog
t1 = time.perf_counter()
models = catalog.list_models()
t2 = time.perf_counter()
catalog.get_model("anthropic/claude-sonnet-4-5")
t3 = time.perf_counter()
print(len(models), (t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000)
"""


def _write_overlay(home: Path) -> None:
    from baton.providers.catalog_build import DEFAULT_OUT

    bundled = json.loads(DEFAULT_OUT.read_text(encoding="utf-8"))["providers"]
    document = {"providers": {name: {"models": entry["models"]} for name, entry in bundled.items()}}
    (home / "catalog-overlay.json").write_text(json.dumps(document), encoding="utf-8")


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    runs = int(args[0]) if args else 20
    rows = []
    with tempfile.TemporaryDirectory() as home:
        if "--overlay" in sys.argv:
            _write_overlay(Path(home))
        env = {**os.environ, "BATON_HOME": home}
        for _ in range(runs):
            out = subprocess.run([sys.executable, "-c", _CODE], env=env, capture_output=True, text=True, check=True)
            rows.append([float(x) for x in out.stdout.split()])
    print(f"{int(rows[0][0])} models, median of {runs} fresh processes:")
    for index, label in ((1, "import baton.providers.catalog"), (2, "first list_models()"), (3, "get_model()")):
        print(f"  {label:>31}: {statistics.median(r[index] for r in rows):6.2f} ms")


if __name__ == "__main__":
    main()
