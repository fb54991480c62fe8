"""``apiKey: "!command"``: a command that hangs is stopped with everything it started."""

from __future__ import annotations

import os
import time

import pytest

from baton.providers import models_json
from tests.process_helpers import kill_sleepers, needs_proc, sleepers


@needs_proc
def test_a_key_command_that_times_out_leaves_no_process(monkeypatch: pytest.MonkeyPatch) -> None:
    marker = f"34.{os.getpid() % 10000}"
    monkeypatch.setattr(models_json, "COMMAND_TIMEOUT", 0.5)
    models_json.clear_command_cache()
    started = time.monotonic()
    try:
        value = models_json.resolve_config_value(f"!sleep {marker}1 & sleep {marker}2; echo key",
                                                 "providers.corp.apiKey")
        elapsed = time.monotonic() - started
        time.sleep(0.2)
        left = sleepers(marker)
    finally:
        kill_sleepers(marker)
    assert value is None and elapsed < 5
    assert left == []
    assert len(models_json.command_errors) == 1
    assert "providers.corp.apiKey" in models_json.command_errors[0]
    assert "timed out" in models_json.command_errors[0]
    models_json.clear_command_cache()


def test_a_key_command_that_works_gives_its_output() -> None:
    models_json.clear_command_cache()
    assert models_json.resolve_config_value("!printf 'sk-from-command\\n'") == "sk-from-command"
    assert models_json.command_errors == []
    models_json.clear_command_cache()
