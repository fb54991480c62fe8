"""Keys kept out of what baton itself writes: log files, tracebacks, one-line errors.

Tool results, hook output and provider errors are redacted where they enter the transcript
(:mod:`agent.redaction`, :mod:`providers.redact`); this module covers the exits that do not pass
there. Every log record — message and traceback — is formatted by :class:`RedactingFormatter`
(``$BATON_HOME/logs/rpc.log``, ``acp.log``, and Python's last-resort handler that prints to
stderr when no log is configured), and an exception that escapes to the interpreter is printed
through :func:`redacting_excepthook`.
"""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from types import TracebackType
from typing import TYPE_CHECKING

from baton.providers.redact import REDACTED, redact, secret_matcher

if TYPE_CHECKING:
    from rich.segment import Segment


class RedactingFormatter(logging.Formatter):
    """A :class:`logging.Formatter` whose output (traceback included) has keys redacted."""

    def format(self, record: logging.LogRecord) -> str:
        """The formatted record, redacted."""
        return redact(super().format(record))


def redacting_excepthook(
    kind: type[BaseException], value: BaseException, tb: TracebackType | None
) -> None:
    """Print an uncaught exception's traceback as Python does, with keys redacted."""
    text = "".join(traceback.format_exception(kind, value, tb))
    try:
        sys.stderr.write(redact(text))
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _thread_excepthook(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "?"
    try:
        sys.stderr.write(f"Exception in thread {name}:\n")
    except (OSError, ValueError):
        return
    redacting_excepthook(args.exc_type, args.exc_value or args.exc_type(), args.exc_traceback)


def redact_segments(segments: list[Segment]) -> list[Segment]:
    """Rendered Rich segments with keys redacted, styles kept; a key spread over several
    segments (wrapped, highlighted) is found in their joined text."""
    from rich.segment import Segment

    spans = secret_matcher().spans("".join(s.text for s in segments))
    if not spans:
        return segments
    out: list[Segment] = []
    at = 0
    span = 0
    for segment in segments:
        text, kept = segment.text, []
        for offset, char in enumerate(text):
            where = at + offset
            while span < len(spans) and where >= spans[span][1]:
                span += 1
            if span < len(spans) and spans[span][0] <= where < spans[span][1]:
                if where == spans[span][0]:
                    kept.append(REDACTED)
                continue
            kept.append(char)
        at += len(text)
        out.append(Segment("".join(kept), segment.style, segment.control))
    return out


def install() -> None:
    """Route uncaught exceptions (main and other threads) and last-resort log records
    through redaction. Idempotent."""
    sys.excepthook = redacting_excepthook
    threading.excepthook = _thread_excepthook
    last_resort = logging.lastResort
    if last_resort is not None and not isinstance(last_resort.formatter, RedactingFormatter):
        last_resort.setFormatter(RedactingFormatter())
