"""Fixtures shared by the provider tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from baton.providers.transport import aclose_shared_client


@pytest.fixture(autouse=True)
async def _close_shared_http_client() -> AsyncIterator[None]:
    """Close the event loop's shared HTTP client after each test, so no connection outlives
    the test's loop."""
    yield
    await aclose_shared_client()
