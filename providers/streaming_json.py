"""Best-effort parsing of JSON that is still arriving: streamed tool-call arguments.

:class:`StreamingJsonParser` is an incremental parser: each fragment is scanned once, completed
values are inserted into the value being built, and only the open tail (an unfinished string,
number or literal) is provisional. Its value after every fragment follows partial-json-parser's
semantics (what pi shows while a tool call streams):

- an unfinished string appears as the prefix received so far (an unfinished escape sequence
  is left out until it completes);
- an unfinished number appears as its longest valid prefix (``1.`` -> ``1``; ``-`` -> absent);
- an unfinished ``true``/``false``/``null`` appears as that value;
- an unfinished key, or a key without a value yet, is absent;
- open objects and arrays appear with what they hold so far.

Nesting is capped (``max_depth``, default :data:`~providers.json_depth.MAX_VALUE_DEPTH`): an
object or array that would open deeper makes the input hopeless (``{}``) and sets
:attr:`StreamingJsonParser.too_deep`, so no value nested past the cap ever exists, not even
while it streams.

Unlike partial-json-parser, which trims the whole input first, whitespace received at the end
of an open string is part of its value. Input that cannot become JSON (or whose top level is not
an object) gives ``{}``, as pi does.
Leniencies shared with pi's repair step: raw control characters inside strings are accepted
and an invalid escape such as ``\\d`` keeps its backslash.

Cost is linear in the total input. The one value that grows by small pieces, a long string,
is extended in place: CPython appends to a string nobody else references without copying it.
When some caller keeps a reference to that string (so appending would copy it every time),
the parser stops extending it on every fragment and instead extends it once the unseen part
reaches an eighth of it; the value then lags the input by at most that eighth until
:meth:`StreamingJsonParser.finish`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Protocol

from baton.providers.json_depth import MAX_VALUE_DEPTH, JsonTooDeepError, loads_bounded
from baton.providers.json_types import JsonArray, JsonObject, JsonValue

_START, _OBJ_OPEN, _KEY, _COLON, _VALUE, _ARR_OPEN, _AFTER = 0, 1, 2, 3, 4, 5, 6
_STRING, _NUMBER, _LITERAL, _DONE, _ERROR = 7, 8, 9, 10, 11

_WS = re.compile(r"[ \t\n\r]*")
_STR_RUN = re.compile(r'[^"\\]+')
_NUM_CHARS = re.compile(r"[0-9eE+\-.]*")
_NUM_FULL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NUM_PREFIX = re.compile(
    r"-?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]+(?:[eE][+-]?[0-9]*)?|\.|[eE][+-]?[0-9]*)?)?"
)
_INTEGER = re.compile(r"-?[0-9]+")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_LOW_SURROGATE_PREFIX = re.compile(r"\\(?:u(?:[dD](?:[c-fC-F][0-9a-fA-F]{0,2})?)?)?")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_LITERALS: dict[str, tuple[str, bool | None]] = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}

_LAG_MIN = 4096
"""Strings shorter than this are simply copied when shared (cheap); longer ones may lag."""
_LAG_FRACTION = 8
"""A lagging string is brought up to date once the unseen part reaches 1/8 of its length."""


def parse_streaming_json(text: str) -> JsonObject:
    """Best-effort parse of possibly incomplete JSON; never raises.

    Complete JSON object -> that object; an incomplete one -> the partial value (see the module
    docstring); empty, hopeless, too deeply nested or non-object input -> ``{}``.
    """
    if not text or text.isspace():
        return {}
    try:
        value = loads_bounded(text, MAX_VALUE_DEPTH)
    except JsonTooDeepError:
        return {}
    except ValueError:
        parser = StreamingJsonParser()
        parser.feed(text)
        return parser.finish()
    return value if isinstance(value, dict) else {}


class StreamingJsonParser:
    """Incremental parser for one JSON object arriving in fragments.

    :meth:`feed` returns the best value so far, :meth:`finish` the final one. The returned dict
    is the parser's live value: later fragments keep growing it in place, so copy it if you need
    a frozen snapshot. It is current after every fragment, except that a long string the caller
    keeps a reference to may lag by up to an eighth (see the module docstring). Never raises.
    """

    def __init__(self, max_depth: int = MAX_VALUE_DEPTH) -> None:
        self._max_depth = max_depth
        self.too_deep = False
        """The input opened an object or array deeper than ``max_depth`` (the value is ``{}``)."""
        self._state = _START
        self._root: JsonObject = {}
        """The value being built (still empty before the object opens)."""
        self._stack: list[JsonObject | JsonArray] = []
        self._key = ""
        self._slot_open = False
        """A provisional element sits at the end of the innermost list."""
        self._carry = ""
        """Unprocessed input: an escape sequence not yet complete."""
        self._key_parts: list[str] = []
        self._str_is_key = False
        self._str = ""
        self._no_string: JsonObject = {}
        self._str_container: _Slots = self._no_string
        """Where the open string value sits: its object, or a :class:`_ListSlot` of its array
        (``_no_string`` while none is open)."""
        self._str_slot = ""
        """The open string value's key in its object."""
        self._tail: list[str] | None = None
        self._tail_len = 0
        self._token = ""
        self._literal = ""
        self._literal_value: bool | None = None

    # --- public ---------------------------------------------------------------------------
    def feed(self, fragment: str) -> JsonObject:
        """Consume ``fragment`` and return the best value so far."""
        if (
            self._state == _STRING
            and not self._str_is_key
            and not self._carry
            and '"' not in fragment
            and "\\" not in fragment
        ):
            if fragment:
                self._grow(fragment)
            return self._root
        if fragment:
            if self._carry:
                fragment = self._carry + fragment
                self._carry = ""
            self._consume(fragment, False)
        return self.value

    def finish(self) -> JsonObject:
        """The input has ended: settle any pending escape and return the final value."""
        if self._carry:
            carry, self._carry = self._carry, ""
            self._consume(carry, True)
        if self._state == _STRING and not self._str_is_key and self._tail is not None:
            self._grow("", flush=True)
        return self.value

    @property
    def value(self) -> JsonObject:
        """The current value (``{}`` before the object opens or after malformed input)."""
        if self._state == _ERROR or self._state == _START:
            return {}
        return self._root

    # --- scanning -------------------------------------------------------------------------
    def _fail(self) -> int:
        self._state = _ERROR
        self._root = {}
        self._stack = []
        self._str_container = self._no_string
        self._str = ""
        return sys.maxsize

    def _consume(self, text: str, final: bool) -> None:
        i = 0
        n = len(text)
        structure = self._STRUCTURE
        while i < n:
            state = self._state
            if state == _STRING:
                i = self._scan_string(text, i, final)
            elif state == _NUMBER:
                i = self._scan_number(text, i)
            elif state == _LITERAL:
                i = self._scan_literal(text, i)
            else:
                c = text[i]
                if c in " \t\n\r":
                    space = _WS.match(text, i)
                    i = space.end() if space is not None else i + 1
                else:
                    i = structure[state](self, c, i)

    # Each handler below sees one structural character ``c`` at ``i`` in its state and returns
    # where scanning goes on: ``i + 1`` past it, ``i`` when a number or literal starts there,
    # past the end after malformed input.

    def _at_start(self, c: str, i: int) -> int:
        if c != "{":
            return self._fail()
        self._root = {}
        self._stack = [self._root]
        self._key = ""
        self._state = _OBJ_OPEN
        return i + 1

    def _at_key(self, c: str, i: int) -> int:
        if c == '"':
            self._str_is_key = True
            self._key_parts = []
            self._state = _STRING
        elif c == "}" and self._state == _OBJ_OPEN:
            self._close()
        else:
            return self._fail()
        return i + 1

    def _at_colon(self, c: str, i: int) -> int:
        if c != ":":
            return self._fail()
        self._state = _VALUE
        return i + 1

    def _at_value(self, c: str, i: int) -> int:
        if c == '"':
            self._open_string_value()
        elif c == "{" or c == "[":
            return self._open_container(c, i)
        elif c in "-0123456789":
            self._token = ""
            self._state = _NUMBER
            return i
        elif c in "tfn":
            self._literal, self._literal_value = _LITERALS[c]
            self._token = ""
            self._state = _LITERAL
            self._put(self._literal_value, True)
            return i
        elif c == "]" and self._state == _ARR_OPEN:
            self._close()
        else:
            return self._fail()
        return i + 1

    def _open_container(self, c: str, i: int) -> int:
        if len(self._stack) >= self._max_depth:
            self.too_deep = True
            return self._fail()
        child: dict[str, JsonValue] | list[JsonValue] = {} if c == "{" else []
        self._put(child, False)
        self._stack.append(child)
        if c == "{":
            self._key = ""
            self._state = _OBJ_OPEN
        else:
            self._state = _ARR_OPEN
        return i + 1

    def _at_after(self, c: str, i: int) -> int:
        is_dict = type(self._stack[-1]) is dict
        if c == ",":
            self._state = _KEY if is_dict else _VALUE
        elif (c == "}" and is_dict) or (c == "]" and not is_dict):
            self._close()
        else:
            return self._fail()
        return i + 1

    def _at_end(self, c: str, i: int) -> int:
        """``_DONE``: only whitespace may follow; ``_ERROR``: nothing matters any more."""
        return self._fail()

    _STRUCTURE: tuple[Callable[[StreamingJsonParser, str, int], int], ...] = (
        _at_start, _at_key, _at_key, _at_colon, _at_value, _at_value, _at_after,  # _START ... _AFTER
        _at_end, _at_end, _at_end, _at_end, _at_end,  # _STRING, _NUMBER, _LITERAL: scanned above
    )
    """The structural handler of each state, indexed by the state's number."""

    def _put(self, value: JsonValue, provisional: bool) -> None:
        """Place a value in the innermost container (replacing a provisional one)."""
        top = self._stack[-1]
        if isinstance(top, dict):
            top[self._key] = value
        else:
            if self._slot_open:
                top[-1] = value
            else:
                top.append(value)
            self._slot_open = provisional

    def _close(self) -> None:
        self._stack.pop()
        self._slot_open = False
        self._state = _AFTER if self._stack else _DONE

    def _complete_value(self) -> None:
        self._slot_open = False
        self._state = _AFTER

    # --- numbers and literals -------------------------------------------------------------
    def _scan_number(self, text: str, i: int) -> int:
        digits = _NUM_CHARS.match(text, i)
        end = digits.end() if digits is not None else i
        token = self._token + text[i:end]
        self._token = token
        if not _NUM_PREFIX.fullmatch(token):
            return self._fail()
        if end < len(text):  # a delimiter follows: the number is complete
            if not _NUM_FULL.fullmatch(token):
                return self._fail()
            number = _number(token)
            if number is None:
                return self._fail()
            self._put(number, False)
            self._complete_value()
            return end
        prefix = _NUM_FULL.match(token)
        if prefix is not None:
            number = _number(prefix.group())
            if number is None:
                return self._fail()
            self._put(number, True)
        return end

    def _scan_literal(self, text: str, i: int) -> int:
        need = self._literal[len(self._token) :]
        got = text[i : i + len(need)]
        if not need.startswith(got):
            return self._fail()
        self._token += got
        if len(self._token) == len(self._literal):
            self._put(self._literal_value, False)
            self._complete_value()
        return i + len(got)

    # --- strings --------------------------------------------------------------------------
    def _open_string_value(self) -> None:
        self._str_is_key = False
        self._put("", True)
        top = self._stack[-1]
        if isinstance(top, dict):
            self._str_container = top
            self._str_slot = self._key
        else:
            self._str_container = _ListSlot(top, len(top) - 1)
        self._str = ""
        self._tail = None
        self._tail_len = 0
        self._state = _STRING

    def _scan_string(self, text: str, i: int, final: bool) -> int:
        parts: list[str] = []
        n = len(text)
        closed = False
        while i < n:
            run = _STR_RUN.match(text, i)
            if run is not None:
                parts.append(run.group())
                i = run.end()
                if i >= n:
                    break
            if text[i] == '"':
                i += 1
                closed = True
                break
            i = self._scan_escape(text, i, parts, final)
        if self._str_is_key:
            self._key_parts.extend(parts)
            if closed:
                self._key = "".join(self._key_parts)
                self._key_parts = []
                self._state = _COLON
        else:
            if parts:
                self._grow("".join(parts), flush=closed)
            elif closed and self._tail is not None:
                self._grow("", flush=True)
            if closed:
                self._str_container = self._no_string
                self._str = ""
                self._complete_value()
        return i

    def _scan_escape(self, text: str, i: int, parts: list[str], final: bool) -> int:
        """Decode the escape at ``text[i] == "\\"``; returns the index after it (or ``len(text)``
        after carrying an incomplete escape over to the next fragment)."""
        n = len(text)
        if i + 1 >= n:
            return self._carry_over(text, i, final)
        kind = text[i + 1]
        if kind != "u":
            parts.append(_ESCAPES.get(kind, "\\" + kind))
            return i + 2
        if i + 6 > n:
            if final or _HEX4.match(text[i + 2 :].ljust(4, "0")) is None:
                return self._invalid_unicode_escape(text, i, parts, final)
            return self._carry_over(text, i, final)
        digits = text[i + 2 : i + 6]
        if not _HEX4.fullmatch(digits):
            return self._invalid_unicode_escape(text, i, parts, final)
        code = int(digits, 16)
        if 0xD800 <= code < 0xDC00:
            rest = text[i + 6 : i + 12]
            if len(rest) < 6 and not final and (not rest or _LOW_SURROGATE_PREFIX.fullmatch(rest)):
                return self._carry_over(text, i, final)
            if len(rest) == 6 and rest[1] == "u" and rest[0] == "\\" and _HEX4.fullmatch(rest[2:]):
                low = int(rest[2:], 16)
                if 0xDC00 <= low < 0xE000:
                    parts.append(chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)))
                    return i + 12
        parts.append(chr(code))
        return i + 6

    def _invalid_unicode_escape(self, text: str, i: int, parts: list[str], final: bool) -> int:
        if final and i + 6 > len(text):  # input ended inside the escape: leave it out
            return len(text)
        parts.append("\\")
        return i + 1

    def _carry_over(self, text: str, i: int, final: bool) -> int:
        if not final:
            self._carry = text[i:]
        return len(text)

    def _grow(self, new: str, flush: bool = False) -> None:
        """Append ``new`` to the open string value, in place when nobody else holds it."""
        tail = self._tail
        if tail is not None:
            if new:
                tail.append(new)
                self._tail_len += len(new)
            if not flush and self._tail_len * _LAG_FRACTION < len(self._str):
                return
            new = "".join(tail)
            self._tail = None
            self._tail_len = 0
            may_lag = False
        else:
            may_lag = True
        if not new:
            return
        text = self._str
        self._str = ""
        container = self._str_container
        slot = self._str_slot
        container[slot] = None
        # Two references left (``text`` and getrefcount's argument) means the string is ours
        # alone, and ``+=`` below extends it in place instead of copying it.
        if may_lag and not flush and len(text) >= _LAG_MIN and sys.getrefcount(text) > 2:
            container[slot] = text
            self._str = text
            self._tail = [new]
            self._tail_len = len(new)
            return
        text += new
        container[slot] = text
        self._str = text


class _Slots(Protocol):
    """Where a string value can be put by key: an object, or :class:`_ListSlot`."""

    def __setitem__(self, key: str, value: JsonValue, /) -> None: ...


class _ListSlot:
    """One element of an array, set as an object's value is (the key is ignored)."""

    __slots__ = ("index", "items")

    def __init__(self, items: JsonArray, index: int) -> None:
        self.items = items
        self.index = index

    def __setitem__(self, key: str, value: JsonValue, /) -> None:
        self.items[self.index] = value


def _number(token: str) -> int | float | None:
    try:
        return int(token) if _INTEGER.fullmatch(token) else float(token)
    except ValueError:  # more digits than int() converts
        return None
