"""A large bracketed paste typed into the first frame, before the app is up: the installed
``baton`` on a 120x40 pty, the paste written as soon as the frame shows; the time until the app
shows the paste's last line and the CPU baton used (from start, so start-up is included).

Run: ``python benchmarks/bench_paste_early.py [--megabytes 10] [--runs N]``. Before the early-keys
work, 10 MB froze it (the frame's echo was quadratic and Textual's parser took a paste one
character at a time).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import select
import signal
import statistics
import struct
import sys
import tempfile
import termios
import time
from pathlib import Path

TIMEOUT_S = 300.0
APP_STARTED = b"\x1b[?1000h"
"""Textual turns mouse reporting on as the app starts; the frame never does."""


def measure(megabytes: float) -> tuple[float, float]:
    """(seconds from the frame to the paste on the app's screen, baton's CPU seconds)."""
    work = Path(tempfile.mkdtemp(prefix="bench-paste-"))
    env = {"HOME": str(work), "BATON_HOME": str(work / "home"), "PATH": os.environ.get("PATH", ""),
           "TERM": "xterm-256color", "LANG": "C.UTF-8"}
    baton = str(Path(sys.executable).with_name("baton"))
    pid, master = os.forkpty()
    if pid == 0:  # the child
        os.chdir(work)
        os.execve(baton, ["baton", "--model", "demo/baton-demo"], env)
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    try:
        out = b""
        while b"essage baton" not in out:
            if select.select([master], [], [], 0.1)[0]:
                out += os.read(master, 65536)
        line = b"y" * 79 + b"\r"
        data = b"\x1b[200~" + line * int(megabytes * 1e6 / len(line)) + b"PASTE-END\x1b[201~"
        start = time.monotonic()
        os.set_blocking(master, False)
        written, seen, app_up = 0, b"", False
        while time.monotonic() - start < TIMEOUT_S:
            ready, writable, _ = select.select([master], [master] if written < len(data) else [], [], 0.1)
            if writable:
                try:
                    written += os.write(master, data[written:written + 65536])
                except BlockingIOError:
                    pass
            if ready:
                try:
                    seen = (seen + os.read(master, 1 << 20))[-100_000:]
                except (BlockingIOError, OSError):
                    pass
                if not app_up and APP_STARTED in seen:  # the frame's own echo shows the paste too
                    app_up, seen = True, seen[seen.index(APP_STARTED):]
            if written == len(data) and app_up and b"PASTE-END" in seen:
                break
        else:
            raise RuntimeError(f"the paste did not show within {TIMEOUT_S} s ({written} of {len(data)} bytes taken)")
        elapsed = time.monotonic() - start
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return elapsed, (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
    finally:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
        os.close(master)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--megabytes", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=1)
    options = parser.parse_args()
    results = [measure(options.megabytes) for _ in range(options.runs)]
    for index, label in enumerate(("paste on screen after (s)", "baton CPU incl. start-up (s)")):
        values = [result[index] for result in results]
        print(f"{options.megabytes:g} MB early paste: {label}: best {min(values):.2f}  median "
              f"{statistics.median(values):.2f}  ({len(values)} runs)")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} (on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
