"""Every error baton raises on purpose is a BatonError and reaches the user as one line."""

from __future__ import annotations

import pytest

from baton.agent.agent import AgentBusyError
from baton.providers.adapter import ProviderError as AdapterProviderError
from baton.providers.catalog import ModelNotFoundError, get_model
from baton.providers.errors import BatonError, ConfigurationError, ProviderError, SessionStorageError, ToolError
from baton.sessions.errors import (
    NoModelError,
    SessionBusyError,
    SessionFileError,
    SessionLockedError,
    SessionSaveError,
)
from baton.tools.edit_match import EditMatchError
from baton.tui.cli.args import EXIT_RUN_FAILED, EXIT_USAGE
from baton.tui.cli.errors import CliError, exit_code, one_line


def test_the_existing_errors_sit_on_their_branches() -> None:
    assert AdapterProviderError is ProviderError
    assert issubclass(ModelNotFoundError, ConfigurationError) and issubclass(ModelNotFoundError, LookupError)
    assert issubclass(NoModelError, ConfigurationError)
    assert all(issubclass(e, SessionStorageError) for e in (SessionFileError, SessionLockedError, SessionSaveError))
    assert issubclass(EditMatchError, ToolError) and issubclass(EditMatchError, ValueError)
    assert issubclass(SessionBusyError, AgentBusyError) and issubclass(AgentBusyError, RuntimeError)
    assert issubclass(CliError, BatonError)


def test_a_provider_error_keeps_its_status() -> None:
    error = ProviderError("rate limited", status=429, retryable=True, retry_after=2.0)
    assert (error.status, error.retryable, error.retry_after, str(error)) == (429, True, 2.0, "rate limited")


def test_a_real_lookup_failure_becomes_a_usage_line() -> None:
    with pytest.raises(BatonError) as caught:
        get_model("no-such-provider/no-such-model")
    assert exit_code(caught.value) == EXIT_USAGE
    line = one_line(caught.value)
    assert line.startswith("baton: ") and "\n" not in line


@pytest.mark.parametrize(
    ("error", "code", "line"),
    [
        (CliError("bad flag"), EXIT_USAGE, "baton: bad flag"),
        (CliError("export failed", EXIT_RUN_FAILED), EXIT_RUN_FAILED, "baton: export failed"),
        (SessionLockedError("locked by\n  pid 7"), EXIT_RUN_FAILED, "baton: locked by pid 7"),
        (NoModelError("no model"), EXIT_USAGE, "baton: no model"),
        (ProviderError("HTTP 500: boom", status=500), EXIT_RUN_FAILED, "baton: HTTP 500: boom"),
        (SessionStorageError(), EXIT_RUN_FAILED, "baton: SessionStorageError"),
    ],
)
def test_exit_code_and_line(error: BatonError, code: int, line: str) -> None:
    assert (exit_code(error), one_line(error)) == (code, line)
