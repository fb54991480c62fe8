"""``apiKey: "!command"``: a command that hangs is stopped with everything it started."""

from __future__ import annotations

import os
import time

import pytest

from baton.providers import config_values
from tests.process_helpers import kill_sleepers, needs_proc, sleepers


@needs_proc
def test_a_key_command_that_times_out_leaves_no_process(monkeypatch: pytest.MonkeyPatch) -> None:
    marker = f"34.{os.getpid() % 10000}"
    monkeypatch.setattr(config_values, "COMMAND_TIMEOUT", 0.5)
    config_values.clear_command_cache()
    started = time.monotonic()
    try:
        value = config_values.resolve_config_value(f"!sleep {marker}1 & sleep {marker}2; echo key",
                                                 "providers.corp.apiKey")
        elapsed = time.monotonic() - started
        time.sleep(0.2)
        left = sleepers(marker)
    finally:
        kill_sleepers(marker)
    assert value is None and elapsed < 5
    assert left == []
    assert len(config_values.command_errors) == 1
    assert "providers.corp.apiKey" in config_values.command_errors[0]
    assert "timed out" in config_values.command_errors[0]
    config_values.clear_command_cache()


def test_a_key_command_that_works_gives_its_output() -> None:
    config_values.clear_command_cache()
    assert config_values.resolve_config_value("!printf 'sk-from-command\\n'") == "sk-from-command"
    assert config_values.command_errors == []
    config_values.clear_command_cache()
