"""A stdio MCP server's stderr, written to its log file with keys redacted.

The server writes into a pipe; a daemon thread reads it and appends what it read to the log
(``$BATON_HOME/logs/mcp-<name>.log``) through :mod:`providers.redact`. A key the server prints
— one its entry's ``env`` handed it, say — is redacted in every form, also when it arrives in two
reads: a tail that may begin a key waits for the next read.
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import TextIO

from baton.providers.redact import redact, secret_matcher

_READ_SIZE = 64 * 1024


class RedactedStderr:
    """``writer`` is the file to give the server as its stderr; the log is closed at EOF."""

    def __init__(self, log: TextIO) -> None:
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w")
        self._thread = threading.Thread(target=self._pump, args=(read_fd, log), name="mcp-stderr", daemon=True)
        self._thread.start()

    def release(self) -> None:
        """Close this process's end of the pipe (the server has its own copy once started):
        the log ends when the server's stderr closes."""
        with contextlib.suppress(OSError):
            self.writer.close()

    def _pump(self, read_fd: int, log: TextIO) -> None:
        pending = ""
        try:
            with os.fdopen(read_fd, "rb") as source:
                while chunk := source.read1(_READ_SIZE):
                    text = pending + chunk.decode("utf-8", errors="replace")
                    try:
                        ready, pending = secret_matcher().split_open(text)
                    except Exception:
                        ready, pending = text, ""
                    if ready:
                        log.write(redact(ready))
                        log.flush()
                if pending:
                    log.write(redact(pending))
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError, ValueError):
                log.close()
