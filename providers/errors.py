"""The project's exceptions as one tree, rooted at :class:`BatonError` (in the spirit of httpx's
``_exceptions.py``). It lives in the lowest layer so that every layer may raise and catch it.

Hierarchy (the defining module in brackets when it is not this one)::

    BatonError                        anything baton refuses or fails to do, on purpose
    ├── ConfigurationError            bad settings, model reference or command-line input
    │   ├── ModelNotFoundError        [providers.catalog] no model matches a reference (also LookupError)
    │   └── NoModelError              [sessions.errors] no model resolved for a new session
    ├── ProviderError                 the provider failed: HTTP status, in-band error, broken stream
    ├── SessionStorageError           a session file cannot be read, written, found or locked
    │   ├── SessionFileError          [sessions.errors]
    │   ├── SessionSaveError          [sessions.errors]
    │   ├── SessionLockedError        [sessions.errors]
    │   └── SessionNotFoundError      [sessions.errors]
    ├── ToolError                     a tool failed; the model reads the message verbatim
    │   └── EditMatchError            [tools.edit_match] an edit's old text does not match
    ├── SessionError                  [sessions.errors] base of the sessions layer's errors
    ├── AgentBusyError                [agent.agent] the agent is running (also RuntimeError)
    ├── UnknownMessageRoleError       [agent.messages] a stored message of no known role (also ValueError)
    ├── SandboxHostError              [tools.sandbox_host] the long-lived sandbox could not start a command
    ├── McpCallError                  [tools.mcp.connection] an MCP tool call could not be made or finish
    ├── ContextTooLargeError          [sessions.context_fit] the context cannot fit the model's window
    ├── SkillError                    [sessions.skills] an unknown or unreadable skill
    ├── AttachmentError               [tui.cli.attachments] a file that cannot be attached
    ├── RpcError                      [tui.modes.rpc_responses] an RPC command failed (the response's error)
    ├── AcpError                      [tui.modes.acp.errors] a JSON-RPC error for the editor
    └── CliError                      [tui.cli.errors] a one-line CLI failure with its exit code

The CLI prints any :class:`BatonError` that reaches it as one line, ``baton: <message>``
(``tui/cli/errors.py``); anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class BatonError(Exception):
    """Base class of every exception baton raises on purpose."""


class ConfigurationError(BatonError):
    """The user's configuration or input cannot be used (settings, model reference, arguments)."""


class ProviderError(BatonError):
    """A failure the provider reported (HTTP error body, in-band error event, bad stream).

    ``status`` is the HTTP status when there was one; ``retryable`` marks rate limits, overload, 5xx
    and dropped connections; ``retry_after`` is the server's requested wait in seconds, when it gave one.
    """

    def __init__(
        self, message: str, *, status: int | None = None, retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class SessionStorageError(BatonError):
    """A session file cannot be read, found or locked."""


class ToolError(BatonError):
    """Raised by a tool to fail with a message the model reads verbatim (``details`` go to the UI)."""

    def __init__(self, message: str, details: object = None) -> None:
        super().__init__(message)
        self.details = details
