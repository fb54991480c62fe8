"""The ``baton`` command ends without tearing the interpreter down, losing nothing on the way."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.tui.cli_harness import baton_command, baton_env

# Output buffered as a user's would be (this machine may set PYTHONUNBUFFERED).
BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def _run(script: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, timeout=60,
                          env=BUFFERED)


def test_exit_now_runs_exit_handlers_flushes_output_and_keeps_the_code() -> None:
    done = _run("""
        import atexit, sys
        from baton.tui.cli.main import exit_now
        atexit.register(lambda: print(" and the handler ran", end=""))
        print("buffered output", end="")
        sys.stderr.write("buffered error")
        exit_now(3)
        print("never")
    """)
    assert done.returncode == 3
    assert done.stdout == b"buffered output and the handler ran"
    assert done.stderr == b"buffered error"


def test_exit_now_into_a_closed_pipe_is_quiet() -> None:
    # baton -p ... | head -c0: the reader is gone before the buffered answer is flushed
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys
        from baton.tui.cli.main import exit_now
        sys.stdin.read()  # until the test closed the pipe's other end
        sys.stdout.write("y" * 100)
        exit_now(0)
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=BUFFERED)
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    child.stdout.close()
    child.stdin.close()
    assert child.wait(60) == 0
    assert child.stderr.read() == b"", "no 'Exception ignored ... BrokenPipeError' noise"
    child.stderr.close()


def test_python_m_baton_exits_with_mains_code() -> None:
    done = _run("import runpy, sys; sys.argv = ['baton', '--version']; runpy.run_module('baton', run_name='__main__')")
    assert done.returncode == 0 and done.stdout.startswith(b"baton ")
    bad = subprocess.run([sys.executable, "-m", "baton", "--no-such-flag"], capture_output=True, timeout=60)
    assert bad.returncode == 2 and b"--no-such-flag" in bad.stderr


def test_a_listing_cut_short_by_its_reader_ends_quietly(tmp_path: Path) -> None:
    # baton --list-models | head -1: the reader leaves after one line; no traceback, exit 0
    home = tmp_path / "home"
    home.mkdir()
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)  # smaller than the listing: baton writes after the close
    child = subprocess.Popen(baton_command("--list-models"), stdout=write_end, stderr=subprocess.PIPE,
                             env=baton_env(home))
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        first = reader.readline()
    assert child.stderr is not None
    err = child.stderr.read()
    assert child.wait(timeout=60) == 0
    assert first.startswith(b"model") and b"Traceback" not in err and b"BrokenPipe" not in err
