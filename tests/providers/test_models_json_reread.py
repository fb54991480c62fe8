"""``read_models_json`` hands back the same object while the file is unchanged (redaction and the
catalog key their own caches on it) and a new one as soon as it may have changed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from baton.providers.models_json import read_models_json
from baton.providers.redact import configured_secrets


def write(home: Path, key: str) -> None:
    provider = {"baseUrl": "http://127.0.0.1:9", "api": "openai-completions", "apiKey": key, "models": [{"id": "m"}]}
    (home / "models.json").write_text(json.dumps({"providers": {"acme": provider}}))


def test_the_same_object_while_unchanged_a_new_one_after_a_same_size_rewrite(baton_home: Path) -> None:
    write(baton_home, "acme-first-key-0123456789")
    first = read_models_json()
    assert read_models_json() is first and first.api_key("acme") == "acme-first-key-0123456789"
    before = (baton_home / "models.json").stat()
    write(baton_home, "acme-other-key-0123456789")
    os.utime(baton_home / "models.json", ns=(before.st_atime_ns, before.st_mtime_ns))
    second = read_models_json()
    assert second is not first and second.api_key("acme") == "acme-other-key-0123456789"
    assert "acme-other-key-0123456789" in configured_secrets()
    assert "acme-first-key-0123456789" not in configured_secrets()


def test_a_new_baton_home_is_followed(baton_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(baton_home, "acme-first-key-0123456789")
    assert read_models_json().api_key("acme") == "acme-first-key-0123456789"
    other = tmp_path / "other-home"
    other.mkdir()
    write(other, "acme-moved-key-0123456789")
    monkeypatch.setenv("BATON_HOME", str(other))
    assert read_models_json().api_key("acme") == "acme-moved-key-0123456789"
    assert "acme-moved-key-0123456789" in configured_secrets()
    (other / "models.json").unlink()
    assert read_models_json().api_key("acme") is None
    assert "acme-moved-key-0123456789" not in configured_secrets()
