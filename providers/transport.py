"""The shared streaming driver: one HTTP POST, server-sent events in, the event protocol out.

:func:`run_wire_adapter` runs any :class:`~providers.adapter.WireAdapter` as an asyncio task:
build the request, POST it with the event loop's shared keep-alive client, decode SSE
incrementally, feed the adapter's decoder, and end with exactly one ``done`` or ``error``.
Everything that is not protocol-specific lives here, once, for every adapter:

* retries of rate limits, overload, 5xx and dropped connections *before any content streamed*,
  with exponential backoff honouring ``Retry-After`` / ``retry-after-ms`` (abortable);
* the idle timeout: nothing for ``options.idle_timeout`` seconds ends the stream as an error; a
  keep-alive comment (``: OPENROUTER PROCESSING`` while a model thinks) counts as a sign of life
  but never as content, and comments alone hold a stream open at most ``options.keepalive_limit``
  seconds (and never past the request's time limit);
* the time limit of the whole request (``options.request_timeout``, retries included): a
  stream that drips forever ends as an error naming the limit;
* abort (``options.signal``): the HTTP response is closed at once, the stream ends ``aborted``
  with the partial content kept;
* failures of any kind become an ``error`` event; nothing raises out of the stream.

Two optional adapter hooks (see :class:`~providers.adapter.WireAdapter`) let a protocol that is
not SSE, or that signs its requests, run here unchanged: ``create_frame_decoder()`` replaces the
SSE framing of the response body, and ``sign(request)`` sees each attempt's final request.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import time
import weakref
from collections.abc import AsyncIterable, Callable

import httpx

from baton.providers.adapter import (
    REQUEST_TIME_LIMIT,
    RETRY_AFTER_TOO_LONG,
    FrameDecoder,
    HttpRequest,
    MessageBuilder,
    ProviderError,
    WireAdapter,
)
from baton.providers.api_keys import get_api_key, missing_key_error
from baton.providers.events import AssistantMessageEventStream, DoneEvent, ErrorEvent, StartEvent
from baton.providers.json_depth import MAX_LINE_DEPTH, clamp_depth
from baton.providers.json_types import JsonObject, JsonValue
from baton.providers.messages import ABORTED_MESSAGE, AssistantMessage, Context, Usage
from baton.providers.models import Model, calculate_cost
from baton.providers.net_backend import install_asyncio_backend
from baton.providers.options import USE_DEFAULT_KEY, StreamOptions
from baton.providers.redact import redact_secrets, register_secret
from baton.providers.sse import SseDecoder

logger = logging.getLogger(__name__)


RETRYABLE_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
"""HTTP statuses worth another attempt (plus any 5xx, and bodies that say "overloaded")."""

BATCH_SECONDS = 0.033
"""While events drip in quickly (the stream waited less than this for a small chunk), it waits
this long after handling one, so that the events arriving meanwhile are handed on together:
each wake-up of the loop costs far more CPU than the event it carries (measured: ~300 us per
event when each arrives alone, 5 ms apart; a third of that with this wait). An event is
therefore handed on at most 1/30 s late; the screen shows streamed text 10 times a second.
A stream slower than one event per 33 ms is never made to wait."""
BATCH_WAITED = 0.0005
"""A chunk that came sooner than this after it was asked for was already there (no waiting)."""
BATCH_BYTES = 4096
"""A chunk this big or bigger is handled without the wait: the stream is behind, not dripping."""
_MAX_ERROR_BODY = 64 * 1024
_USER_AGENT = "baton"

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
    weakref.WeakKeyDictionary()
)


# ---------------------------------------------------------------------------------------------
# The shared client


def shared_client() -> httpx.AsyncClient:
    """The running event loop's HTTP/1.1 keep-alive client (created on first use).

    One client per loop: connections are bound to the loop that opened them, so a client is
    never shared across loops. Close it with :func:`aclose_shared_client` before the loop ends
    (tests do this in a fixture; the CLI when it shuts down).
    """
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        from baton.providers.tls import shared_tls_context  # ssl loads with the first client

        client = httpx.AsyncClient(
            verify=shared_tls_context(),  # one per process, its CA bundle read at the first handshake
            http1=True,
            http2=False,
            follow_redirects=False,
            limits=httpx.Limits(max_connections=64, max_keepalive_connections=16, keepalive_expiry=60),
        )
        install_asyncio_backend(client)  # each streamed event costs half the CPU it does through anyio
        _clients[loop] = client
    return client


async def aclose_shared_client() -> None:
    """Close the running loop's shared client, if one was opened (idempotent)."""
    client = _clients.pop(asyncio.get_running_loop(), None)
    if client is not None:
        await client.aclose()


# ---------------------------------------------------------------------------------------------
# The driver


def run_wire_adapter(
    adapter: WireAdapter, model: Model, context: Context, options: StreamOptions
) -> AssistantMessageEventStream:
    """Start streaming one assistant message through ``adapter`` and return the event stream.

    ``context`` is already transformed for ``model``. Must be called with a running event loop;
    the work runs in a task kept on ``stream.task``. Never raises.
    """
    stream = AssistantMessageEventStream()
    run = _Run(adapter, model, context, options, stream)
    stream.task = asyncio.get_running_loop().create_task(run.run(), name=f"baton-stream-{model.ref}")
    return stream


class _Aborted(Exception):
    """The signal was set before the request went out."""


class _Run:
    """One streaming request from start to its terminal event."""

    def __init__(
        self,
        adapter: WireAdapter,
        model: Model,
        context: Context,
        options: StreamOptions,
        stream: AssistantMessageEventStream,
    ) -> None:
        self.adapter = adapter
        self.model = model
        self.context = context
        self.options = options
        self.stream = stream
        self.output = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        self.builder = MessageBuilder(self.output, stream.push)
        self.aborted = False
        self.api_key: str | None = options.api_key if isinstance(options.api_key, str) else None

    async def run(self) -> None:
        """The task body: never raises except to propagate a foreign cancellation."""
        self.stream.push(StartEvent(self.output))
        signal = self.options.signal
        watcher: asyncio.Task[None] | None = None
        if signal is not None:
            if signal.is_set():
                self._finish_aborted()
                return
            watcher = asyncio.get_running_loop().create_task(self._watch(signal, asyncio.current_task()))
        try:
            request = self._build_request()
            await self._attempts_in_time(request)
            self._finish_ok()
        except asyncio.CancelledError:
            self._finish_aborted()
            task = asyncio.current_task()
            if not self.aborted:
                raise  # cancelled from outside: the stream is ended, let the canceller see it
            if task is not None:
                task.uncancel()
        except _Aborted:
            self._finish_aborted()
        except ProviderError as exc:
            self._finish_error(exc.message)
        except Exception as exc:
            self._finish_error(_describe_unexpected(exc))
        finally:
            if watcher is not None:
                watcher.cancel()

    async def _watch(self, signal: asyncio.Event, task: asyncio.Task[object] | None) -> None:
        await signal.wait()
        if task is not None and not self.stream.closed:
            self.aborted = True
            task.cancel()

    # --- request ----------------------------------------------------------------------------
    def _build_request(self) -> HttpRequest:
        api_key = self.options.api_key
        if api_key is USE_DEFAULT_KEY:
            api_key = get_api_key(self.model.provider)
        self.api_key = api_key
        if not api_key:
            missing = missing_key_error(self.model, self.options.headers or {})
            if missing is not None:
                raise missing
        register_secret(api_key)  # from now on it is redacted wherever it shows up
        request = self.adapter.build_request(self.model, self.context, self.options, api_key)
        if self.options.on_payload is not None:
            self.options.on_payload(request.body)
        return request

    async def _attempts_in_time(self, request: HttpRequest) -> None:
        limit = self.options.request_timeout
        deadline = asyncio.timeout(limit if limit is not None and limit > 0 else None)
        try:
            async with deadline:
                await self._attempts(request)
        except TimeoutError:
            if not deadline.expired():
                raise
            assert limit is not None
            raise ProviderError(
                f"Request stopped after {limit:g} s, {REQUEST_TIME_LIMIT} (retry.requestTimeoutMs)"
            ) from None

    async def _attempts(self, request: HttpRequest) -> None:
        options = self.options
        body = request.encoded if request.encoded is not None else _request_body(request.body)
        headers = httpx.Headers(
            {"content-type": "application/json", "accept": "text/event-stream", "user-agent": _USER_AGENT}
        )
        headers.update(request.headers)
        timeout = httpx.Timeout(
            connect=options.timeout, read=options.idle_timeout, write=options.timeout, pool=options.timeout
        )
        attempts = max(1, options.max_retries)
        attempt = 0
        while True:
            attempt += 1
            try:
                await self._attempt(request.url, headers, body, timeout)
                return
            except ProviderError as exc:
                exc.message = self._redact(exc.message)
                if not exc.retryable or self.builder.content_started or attempt >= attempts:
                    raise
                delay = _backoff(options, attempt, exc.retry_after)
                if delay is None:
                    raise ProviderError(
                        f"{exc.message} ({RETRY_AFTER_TOO_LONG} {exc.retry_after:g} s, "
                        f"more than the {options.max_retry_delay:g} s limit)",
                        status=exc.status, retryable=True, retry_after=exc.retry_after,
                    ) from exc
                self._reset_output()
                if options.on_retry is not None:
                    try:
                        options.on_retry(attempt, attempts, delay, exc.message)
                    except Exception:
                        logger.exception("on_retry callback failed")
                await asyncio.sleep(delay)

    async def _attempt(
        self, url: str, headers: httpx.Headers, body: bytes, timeout: httpx.Timeout
    ) -> None:
        client = shared_client()
        http_request = client.build_request("POST", url, headers=headers, content=body, timeout=timeout)
        sign: Callable[[httpx.Request], None] | None = getattr(self.adapter, "sign", None)
        if sign is not None:
            sign(http_request)  # per attempt: a signature may carry the time it was made
        try:
            response = await client.send(http_request, stream=True)
        except httpx.TimeoutException as exc:
            message = f"Connection to {_host(url)} timed out: {_exc_text(exc)}"
            raise ProviderError(message, retryable=True) from exc
        except httpx.TransportError as exc:
            message = f"Connection error ({_host(url)}): {_exc_text(exc)}"
            raise ProviderError(message, retryable=True) from exc
        try:
            if response.status_code >= 400:
                raise await _http_error(response)
            await self._consume(response)
        finally:
            await response.aclose()

    async def _consume(self, response: httpx.Response) -> None:
        decoder = self.adapter.create_decoder(self.model, self.builder)
        create_frames: Callable[[], FrameDecoder] | None = getattr(self.adapter, "create_frame_decoder", None)
        frames = create_frames() if create_frames is not None else SseDecoder()
        feed = decoder.feed
        idle, keepalive = self.options.idle_timeout, self.options.keepalive_limit
        clock = time.monotonic
        last_event = last_alive = asked = clock()
        comments = 0
        try:
            async for chunk in _body_chunks(response):
                now = clock()
                events = frames.feed(chunk)
                if events:
                    last_event = last_alive = now
                    for event, data in events:
                        feed(event, data)
                    if len(chunk) < BATCH_BYTES and BATCH_WAITED < now - asked < BATCH_SECONDS:
                        # A small chunk the stream had to wait for, briefly: events are dripping
                        # in fast. Let the next few gather; they are then taken one after the
                        # other without waiting (see BATCH_SECONDS).
                        await asyncio.sleep(BATCH_SECONDS)
                else:
                    # Bytes but no event: a keep-alive comment is a sign of life (up to a limit), a
                    # fragment of an event is not.
                    seen = getattr(frames, "comments", 0)
                    if seen != comments:
                        comments, last_alive = seen, now
                    if now - last_alive > idle:
                        raise _idle_error(idle)
                    if now - last_event > keepalive:
                        raise ProviderError(f"Stream idle: only keep-alive comments for {keepalive:g} s",
                                            retryable=True)
                asked = clock()
        except httpx.ReadTimeout as exc:
            raise _idle_error(idle) from exc
        except httpx.TransportError as exc:
            raise ProviderError(f"Connection lost while streaming: {_exc_text(exc)}", retryable=True) from exc
        for event, data in frames.close():
            feed(event, data)
        if isinstance(frames, SseDecoder) and frames.stray:  # lines outside the SSE framing
            _raise_stray_error(frames.stray)
        decoder.finish()

    def _reset_output(self) -> None:
        """Before a retry: forget whatever a failed attempt recorded (no content was emitted)."""
        self.output.usage = Usage()
        self.output.stop_reason = "stop"
        self.output.error_message = None

    # --- endings ----------------------------------------------------------------------------
    def _finalize_usage(self) -> None:
        usage = self.output.usage
        if usage.total_tokens is None:
            usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
        calculate_cost(self.model, usage)

    def _finish_ok(self) -> None:
        self.builder.close_all()
        self._finalize_usage()
        output = self.output
        reason = output.stop_reason
        if reason == "stop" or reason == "length" or reason == "toolUse":
            self.stream.push(DoneEvent(reason, output))
        elif reason == "aborted":
            self._finish_aborted()
        else:
            if not output.error_message:
                output.error_message = f"{self.model.provider} ended the response with an error"
            output.error_message = self._redact(output.error_message)
            self.stream.push(ErrorEvent("error", output))

    def _redact(self, message: str) -> str:
        return redact_secrets(message, [self.api_key])

    def _finish_error(self, message: str) -> None:
        self._close_blocks()
        self._finalize_usage()
        self.output.stop_reason = "error"
        self.output.error_message = self._redact(message)
        self.stream.push(ErrorEvent("error", self.output))

    def _finish_aborted(self) -> None:
        self._close_blocks()
        self._finalize_usage()
        self.output.stop_reason = "aborted"
        self.output.error_message = ABORTED_MESSAGE
        self.stream.push(ErrorEvent("aborted", self.output))

    def _close_blocks(self) -> None:
        # Ends what is open so every *_start has its *_end; a block that cannot be closed (a
        # decoder left it inconsistent) must not stop the terminal event from going out.
        try:
            self.builder.close_all()
        except Exception:
            pass


# ---------------------------------------------------------------------------------------------
# Helpers


def _backoff(options: StreamOptions, attempt: int, retry_after: float | None) -> float | None:
    """Seconds to wait before attempt ``attempt + 1``; ``None`` when the server asks for more
    than ``options.max_retry_delay`` (waiting that long silently is worse than failing)."""
    if retry_after is not None:
        if retry_after > options.max_retry_delay:
            return None
        return max(0.0, retry_after)
    return min(options.retry_base_delay * (2 ** (attempt - 1)), options.max_retry_delay)


def parse_retry_after(headers: httpx.Headers) -> float | None:
    """The server's requested wait in seconds (``retry-after-ms``, or ``retry-after`` as seconds
    or an HTTP date), or ``None``."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_text_from_body(text: str) -> str:
    """The provider's own error message from an error body: ``error.message``, ``message``,
    a string ``error``, else the raw text (JSON or not)."""
    stripped = text.strip()
    try:
        payload: JsonValue = json.loads(stripped)
    except ValueError:
        return stripped
    if isinstance(payload, list) and payload:
        payload = payload[0]
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict):
            message = error.get("message")
            if isinstance(message, str) and message:
                return message
        elif isinstance(error, str) and error:
            return error
        message = payload.get("message")
        if isinstance(message, str) and message:
            return message
    return stripped


async def _http_error(response: httpx.Response) -> ProviderError:
    status = response.status_code
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size >= _MAX_ERROR_BODY:
                break
    except httpx.HTTPError:
        pass
    text = b"".join(chunks)[:_MAX_ERROR_BODY].decode("utf-8", "replace")
    detail = error_text_from_body(text) if text.strip() else (response.reason_phrase or "")
    retryable = status in RETRYABLE_STATUSES or status >= 500 or "overloaded" in text.lower()
    message = f"{status} {detail}".rstrip()
    retry_after = parse_retry_after(response.headers)
    return ProviderError(message, status=status, retryable=retryable, retry_after=retry_after)


def _raise_stray_error(lines: list[str]) -> None:
    """A JSON error object written outside the SSE framing (Gemini does this mid-stream) ends the
    stream with the provider's own message; other stray lines are ignored."""
    text = "\n".join(lines).strip()
    if not text.startswith(("{", "[")):
        return
    try:
        payload: JsonValue = json.loads(text)
    except ValueError:
        return
    if isinstance(payload, list) and payload:
        payload = payload[0]
    if not isinstance(payload, dict) or "error" not in payload:
        return
    error = payload["error"]
    code = error.get("code") if isinstance(error, dict) else None
    status = error.get("status") if isinstance(error, dict) else None
    message = error_text_from_body(text)
    if isinstance(status, str) and status and status not in message:
        message = f"{message} ({status})"
    http = code if isinstance(code, int) and not isinstance(code, bool) else None
    if http is not None:
        message = f"{http} {message}"
    retryable = http is not None and (http in RETRYABLE_STATUSES or http >= 500)
    raise ProviderError(message, status=http, retryable=retryable)


def _request_body(payload: JsonObject) -> bytes:
    """The JSON body, always valid: ``NaN`` and the infinities (from an old session file) are
    sent as ``null``, which every provider accepts, instead of making every request unsendable;
    "replace": so is a lone surrogate (undecodable tool output)."""
    try:
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(clamp_depth(payload, 4 * MAX_LINE_DEPTH), ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "replace")


def _body_chunks(response: httpx.Response) -> AsyncIterable[bytes]:
    """The body's chunks as they arrive. An identity-encoded body (every SSE stream in practice)
    is read from the transport's stream itself: ``aiter_bytes`` adds three generator layers per
    chunk (its decoder, ``aiter_raw``'s re-chunking, the client's bound stream) that only matter
    for a compressed body or a fixed chunk size. The transport's stream still maps httpcore's
    errors to httpx's (timeouts, dropped connections); the response is closed by the caller."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    inner = getattr(response.stream, "_stream", None)  # httpx's BoundAsyncStream wraps the transport's
    if encoding not in ("", "identity") or not isinstance(inner, httpx.AsyncByteStream):
        return response.aiter_bytes()
    response.is_stream_consumed = True
    return inner


def _idle_error(idle: float) -> ProviderError:
    return ProviderError(f"Stream idle: no data received for {idle:g} s", retryable=True)


def _describe_unexpected(exc: Exception) -> str:
    if isinstance(exc, ValueError) and type(exc).__name__ == "JSONDecodeError":
        return f"Malformed JSON in the provider's stream: {exc}"
    if isinstance(exc, RecursionError):  # an adapter's json.loads on an event a thousand levels deep
        return "Malformed JSON in the provider's stream: an event is nested too deeply to read"
    return f"Unexpected error while streaming: {type(exc).__name__}: {exc}"


def _exc_text(exc: Exception) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _host(url: str) -> str:
    try:
        return httpx.URL(url).host or url
    except Exception:
        return url
