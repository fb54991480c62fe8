"""The process registry, the command environment and the full-output files (issue 11)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from baton.tools import temp_files
from baton.tools.processes import descendants, kill_all, register_group, registered_groups
from baton.tools.tool_env import tool_environment
from tests.process_helpers import kill_sleepers, needs_proc, sleepers


@needs_proc
def test_kill_all_ends_a_registered_group_after_its_shell_exited() -> None:
    marker = f"36.{os.getpid() % 10000}"
    shell = subprocess.Popen(["sh", "-c", f"sleep {marker}1 & sleep {marker}2 & exit 0"], start_new_session=True)
    try:
        register_group(shell.pid)
        shell.wait()
        time.sleep(0.1)
        assert len(sleepers(marker)) == 2  # the background jobs outlived their shell
        assert shell.pid in registered_groups()
        kill_all(grace=0.5)
        time.sleep(0.1)
        assert sleepers(marker) == []
    finally:
        kill_sleepers(marker)


_ESCAPE = """
import subprocess, sys, time
from baton.tools.processes import become_subreaper, descendants, kill_all
assert become_subreaper()
subprocess.run("setsid sleep {marker}1 >/dev/null 2>&1 & (sleep {marker}2 &)", shell=True)
time.sleep(0.3)
print(len(descendants()), flush=True)
kill_all(grace=0.3)
"""


@needs_proc
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux only")
def test_a_subreaper_keeps_setsid_and_double_fork_escapees_and_ends_them() -> None:
    marker = f"37.{os.getpid() % 10000}"
    try:
        done = subprocess.run([sys.executable, "-c", _ESCAPE.format(marker=marker)], capture_output=True,
                              text=True, timeout=30)
        time.sleep(0.1)
        left = sleepers(marker)
    finally:
        kill_sleepers(marker)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) >= 2  # both escapees were re-parented to the subreaper
    assert left == []


def test_descendants_of_a_process_without_children_is_empty() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        assert descendants(child.pid) == []
        if Path("/proc/self/stat").exists():
            assert child.pid in descendants()
    finally:
        child.kill()
        child.wait()


def test_command_environment_drops_credentials_but_keeps_what_pass_env_lists() -> None:
    base = {"PATH": "/bin", "OPENAI_API_KEY": "a", "my_api_key": "b", "GITHUB_TOKEN": "c", "NPM_TOKEN": "d",
            "GEMINI_API_KEY": "e", "TOKENIZERS_PARALLELISM": "true", "HOME": "/h"}
    env = tool_environment(base, keep=["NPM_TOKEN"])
    assert env == {"PATH": "/bin", "NPM_TOKEN": "d", "TOKENIZERS_PARALLELISM": "true", "HOME": "/h"}


def test_a_variable_models_json_names_later_is_dropped_from_the_next_command(baton_home: Path) -> None:
    # Which names are credentials is remembered per name: a models.json that starts naming a
    # variable as a key must still take it out of the next command's environment.
    base = {"PATH": "/bin", "ACME_CREDS": "s3cr3t-value"}
    assert tool_environment(base) == base
    (baton_home / "models.json").write_text(
        '{"providers": {"acme": {"baseUrl": "http://127.0.0.1:9", "api": "openai-completions", '
        '"apiKey": "ACME_CREDS", "models": [{"id": "m"}]}}}')
    assert tool_environment(base) == {"PATH": "/bin"}


def test_full_output_files_and_their_cleanup(baton_home: Path) -> None:
    fd, path = temp_files.new_temp_file("baton-bash-")
    os.close(fd)
    assert Path(path).parent == baton_home / "tmp" and Path(path).exists()
    assert (baton_home / "tmp").stat().st_mode & 0o777 == 0o700
    old = baton_home / "tmp" / "baton-bash-left.log"
    old.write_text("x")
    os.utime(old, (time.time() - 90_000, time.time() - 90_000))
    assert temp_files.remove_stale_files() == 1 and not old.exists()
    assert Path(path).exists()  # a day has not passed for this one
    temp_files.remove_own_files()
    assert not Path(path).exists() and temp_files.own_files() == []
