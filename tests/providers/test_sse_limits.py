"""The SSE decoder holds at most :data:`MAX_LINE` characters of one line or event, however the
bytes are chunked (issue 23: one endless line once grew to 1.16 GB)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.providers.sse import MAX_LINE, SseDecoder, SseLimitError


def feed_all(decoder: SseDecoder, data: bytes, sizes: list[int]) -> list[tuple[str, str]]:
    events: list[tuple[str, str]] = []
    position = 0
    index = 0
    while position < len(data):
        size = sizes[index % len(sizes)]
        index += 1
        events += decoder.feed(data[position:position + size])
        position += size
    return events + decoder.close()


@settings(max_examples=8, deadline=None)
@given(st.lists(st.integers(1 << 16, 3 << 20), min_size=1, max_size=4), st.sampled_from([b"data: ", b": ", b"x"]))
def test_a_line_past_the_cap_is_refused_however_it_is_chunked(sizes: list[int], head: bytes) -> None:
    data = head + b"z" * (MAX_LINE + 10)
    with pytest.raises(SseLimitError, match="longer than the 8 MiB limit") as caught:
        feed_all(SseDecoder(), data, sizes)
    assert caught.value.retryable is False


@settings(max_examples=5, deadline=None)
@given(st.lists(st.integers(1 << 16, 3 << 20), min_size=1, max_size=4))
def test_an_event_of_many_lines_past_the_cap_is_refused(sizes: list[int]) -> None:
    line = b"data: " + b"q" * (1 << 20) + b"\n"
    with pytest.raises(SseLimitError, match="an event"):
        feed_all(SseDecoder(), line * 9 + b"\n", sizes)


def test_events_up_to_the_cap_pass_whole() -> None:
    payload = "p" * (MAX_LINE - 10)
    events = feed_all(SseDecoder(), f"data: {payload}\n\ndata: next\n\n".encode(), [1 << 20])
    assert events == [("message", payload), ("message", "next")]


def test_many_lines_each_under_the_cap_are_fine() -> None:
    body = b"".join(b"data: " + b"r" * 1000 + b"\n\n" for _ in range(20_000))  # 20 MB in all
    assert len(feed_all(SseDecoder(), body, [65536])) == 20_000
