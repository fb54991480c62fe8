"""Fixtures shared by the provider tests."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from baton.providers.transport import aclose_shared_client


@pytest.fixture(autouse=True)
async def _close_shared_http_client() -> AsyncIterator[None]:
    """Close the event loop's shared HTTP client after each test, so no connection outlives
    the test's loop."""
    yield
    await aclose_shared_client()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate and its key for 127.0.0.1 and localhost (skips without openssl)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    done = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        capture_output=True, check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"openssl could not make a certificate: {done.stderr.decode(errors='replace')[-200:]}")
    return cert, key
