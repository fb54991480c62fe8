"""One sequence of attempt numbers for the retries of a request.

A request that fails before streaming is retried by the adapter (``source="provider"``); when
those attempts are spent, the session retries the turn (``source="session"``), one request per
retry. Each layer counts from 1, so the user read ``attempt 1/3, 2/3``, an error, then ``1/3``
again. :class:`RetryCount` numbers them together: ``1/6, 2/6, 3/6...``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class RetryCount:
    """Failed attempts since the last request that succeeded (or the last prompt)."""

    failed: int = 0
    first_round: int = 1
    """The attempts the adapter allowed the first request (it does not retry the session's)."""

    def reset(self) -> None:
        """A request succeeded, or a new prompt starts: the next failure is attempt 1."""
        self.failed = 0
        self.first_round = 1

    def count(self, source: str, max_attempts: int, session_retries: int) -> tuple[int, int]:
        """Count one failed attempt (the event's ``source`` and ``max_attempts``, and the retries
        the session allows); returns its number and the attempts allowed in all."""
        self.failed += 1
        if source == "provider":
            self.first_round = max(self.first_round, max_attempts)
        return self.failed, self.first_round + session_retries
