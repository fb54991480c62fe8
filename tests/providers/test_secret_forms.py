"""The matcher behind key redaction: every form of a key is found, wherever it sits, and
nothing else is touched."""

from __future__ import annotations

import base64
import codecs
import textwrap
from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st

from baton.providers.redact import REDACTED, is_secret_name
from baton.providers.secret_forms import SecretMatcher
from tests.key_leaks import encodings

KEY_CHARS = st.characters(min_codepoint=33, max_codepoint=126)
keys = st.text(KEY_CHARS, min_size=8, max_size=120)
filler = st.text(st.characters(min_codepoint=32, max_codepoint=126) | st.sampled_from("\n\té€"), max_size=60)


def _clean(text: str, key: str) -> list[str]:
    flat = text.replace("\n", "").replace("\r", "")
    return [name for name, form in encodings(key).items() if form in flat]


@settings(max_examples=150, deadline=None)
@given(key=keys, before=st.binary(max_size=5), after=st.binary(max_size=5), width=st.integers(4, 80),
       urlsafe=st.booleans())
def test_base64_inside_a_longer_stream_in_any_alignment_and_wrapping(
    key: str, before: bytes, after: bytes, width: int, urlsafe: bool
) -> None:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    stream = encode(before + key.encode() + after).decode()
    wrapped = "\n".join(textwrap.wrap(stream, width))
    assert _clean(SecretMatcher([key]).redact(wrapped), key) == []


@settings(max_examples=150, deadline=None)
@given(key=keys, head=filler, tail=filler, form=st.sampled_from(["raw", "lower", "upper", "url", "hex", "HEX"]),
       width=st.integers(1, 40), crlf=st.booleans())
def test_every_plain_form_folded_over_lines(key: str, head: str, tail: str, form: str, width: int, crlf: bool) -> None:
    value = encodings(key)[form]
    folded = ("\r\n" if crlf else "\n").join(value[i:i + width] for i in range(0, len(value), width))
    text = head + folded + tail
    redacted = SecretMatcher([key]).redact(text)
    assert _clean(redacted, key) == []
    assert REDACTED in redacted


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=300), key=keys)
def test_text_without_the_key_is_returned_unchanged(text: str, key: str) -> None:
    if any(form.lower() in text.replace("\n", "").replace("\r", "").lower() for form in encodings(key).values()):
        return
    assert SecretMatcher([key]).redact(text) is text


def test_several_keys_and_the_text_around_them_stays() -> None:
    a, b = "sk-first-0123456789abcdef", "ghp_second9876543210ZYXW"
    text = f"a={a}\nb={codecs.encode(b.encode(), 'hex').decode()}\nc={quote(a, safe='')} end"
    assert SecretMatcher([a, b]).redact(text) == f"a={REDACTED}\nb={REDACTED}\nc={REDACTED} end"


def test_a_growing_text_holds_back_the_start_of_a_key() -> None:
    key = "sk-live-Abcdefghij0123456789"
    matcher = SecretMatcher([key])
    assert matcher.redact_partial("output: sk-live-Abcde") == "output: "
    assert matcher.redact_partial("output: sk-li") == "output: sk-li"  # five characters: no key
    assert matcher.redact_partial("output: " + key) == f"output: {REDACTED}"
    assert matcher.redact_partial("plain text\n") == "plain text\n"


def test_credential_names() -> None:
    for name in ("OPENAI_API_KEY", "GITHUB_TOKEN", "CLIENT_SECRET", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD",
                 "PASSWORD", "DJANGO_SECRET_KEY", "api_key"):
        assert is_secret_name(name), name
    for name in ("PATH", "HOME", "TOKENIZERS_PARALLELISM", "SECRETS_DIR", "KEYBOARD", "PASSWD_FILE"):
        assert not is_secret_name(name), name
    assert is_secret_name("CORP_GATEWAY", {"CORP_GATEWAY"})
