"""JSON parsing that accepts exactly what the reference's ``JSON.parse(line.trim())`` accepts.

The fast path is ``orjson.loads`` on the raw bytes. orjson is stricter than JavaScript in
four ways that matter for session logs, and each has a fallback here so that no line the
reference would read is lost:

* lone surrogate escapes (``"\\ud800"``): JavaScript keeps them; Python's ``json`` does too;
* numbers that overflow a double (``1e400``): JavaScript reads ``Infinity``;
* nesting deeper than orjson's 1024 levels: an iterative parser without a depth limit;
* invalid UTF-8: the reference's stream decoder substitutes U+FFFD, as ``errors="replace"``;
* JavaScript ``trim`` whitespace around the value (BOM, NBSP, U+2028 ...).

One more difference needs no fallback but a second reading: the number literal ``-0``.
JavaScript reads it as negative zero, a double that equals ``0`` but that TypeBox's
``uniqueItems`` tells apart from it (issue 27); orjson, msgspec and Python's ``json`` read it
as the integer 0. Every other spelling of negative zero (``-0.0``, ``-0e5``, ``-0E-3``) is
already the float ``-0.0`` in all three. A line that holds ``-0`` followed by no digit, ``.``,
``e`` or ``E`` (:func:`may_hold_negative_zero`, a byte test that also fires inside strings,
which only costs a second parse) is read again by the ``json`` decoder, whose integer hook
turns ``-0`` into ``-0.0``; every other line keeps the fast path untouched.

``NaN``/``Infinity`` literals stay errors, as in JavaScript.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from pytest_entropy.core.jscompat import js_trim
from pytest_entropy.core.native_core import core
from pytest_entropy.core.patterns import LazyPattern

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "JSONParseError",
    "may_hold_negative_zero",
    "parse_json_bytes",
    "parse_json_int",
    "parse_json_text",
]


class JSONParseError(ValueError):
    """The text is not a JSON value (as ``JSON.parse`` would refuse it)."""


def _reject_constant(name: str) -> Any:
    raise JSONParseError(f"{name} is not valid JSON")


def parse_json_int(text: str) -> int | float:
    """An integer literal as the readers here keep it: ``-0`` is JavaScript's negative zero
    (the float ``-0.0``), a literal of more than 300 digits a double, anything else exact."""
    # Python refuses int literals beyond 4300 digits; JavaScript reads them as a double.
    if len(text) > 300:
        return float(text)
    if text == "-0":
        return -0.0
    return int(text)


# ``-0`` not followed by what would continue the number: the integer literal -0 (or bytes
# inside a string that look like it). "-0.5", "-0e3" and dates such as "2026-01-02" do not match.
_NEGATIVE_ZERO: Final = re.compile(rb"-0(?![0-9.eE])")


def may_hold_negative_zero(raw: bytes) -> bool:
    """Whether ``raw`` may hold the number literal ``-0``, which the fast decoders read as
    the integer 0 (never false for a line that holds it; true for some that do not)."""
    # The pattern's literal prefix makes the regex search faster than ``b"-0" in raw``.
    return _NEGATIVE_ZERO.search(raw) is not None


@functools.cache
def _standard() -> tuple[Any, Any, Callable[[str, int, bool], tuple[str, int]]]:
    """The json module's pieces, made at the first text read here (the Rust core reads the
    others, so a command may never load json at all): the decoder, the decoder that re-reads
    a line orjson accepted with ``-0`` kept, and the C string scanner (not in the stubs)."""
    import json

    return (
        json.JSONDecoder(parse_constant=_reject_constant, parse_int=parse_json_int),
        json.JSONDecoder(parse_constant=_reject_constant, parse_int=_orjson_int),
        json.decoder.scanstring,  # type: ignore[attr-defined]
    )


# orjson keeps an integer exact only inside 64 bits (signed, or unsigned up to 2**64 - 1) and
# reads any other as a double.
_ORJSON_EXACT_INTEGERS: Final = range(-(2**63), 2**64)


def _orjson_int(text: str) -> int | float:
    """An integer literal as orjson reads it, but ``-0`` as negative zero."""
    value = parse_json_int(text)
    if type(value) is int and value not in _ORJSON_EXACT_INTEGERS:
        return float(text)
    return value


@functools.cache
def _orjson_loads() -> Callable[[bytes], Any]:
    """orjson.loads, imported by the first line parsed here: importing orjson imports uuid,
    platform, datetime and enum, which a command that parses no line here need not pay
    (issue 32); made once, as :func:`_standard` makes the json module's pieces."""
    import orjson

    return orjson.loads


def parse_json_bytes(raw: bytes) -> tuple[Any, bool]:
    """Parse one line's bytes; returns ``(value, fast)`` where ``fast`` means orjson read it.

    Raises :class:`JSONParseError` when the reference would not parse the line either.
    A line orjson reads that may hold ``-0`` is read again so that it comes back as
    ``-0.0``; it still counts as read by orjson (the text is the same valid UTF-8).

    Where the Rust core is in use its parser (``native/src/json.rs``, the same values and
    ``fast``) reads the bytes; text it refuses goes to the Python below, which raises the
    error with its own message. So a command that parses a surface or a report file
    need not import orjson (issue 32).
    """
    native = core()
    if native is not None:
        try:
            return native.parse_json(raw)  # type: ignore[no-any-return]
        except ValueError:  # the core's JSONParseError
            pass
    loads = _orjson_loads()
    import json  # loaded with orjson, whose JSONDecodeError is json's

    try:
        value = loads(raw)
    except json.JSONDecodeError:
        return parse_json_text(raw.decode("utf-8", "replace")), False
    if may_hold_negative_zero(raw):
        # The same values as orjson's (integers beyond 64 bits as doubles), -0 kept.
        text = js_trim(raw.decode("utf-8"))
        try:
            return _standard()[1].decode(text), True
        except RecursionError:  # nesting orjson took and the json module's stack does not
            return _DeepParser(text, parse_int=_orjson_int).parse(), True
    return value, True


def parse_json_text(text: str) -> Any:
    """``JSON.parse(text.trim())`` for text that orjson did not accept."""
    text = js_trim(text)
    try:
        try:
            return _standard()[0].decode(text)
        except RecursionError:
            return _DeepParser(text).parse()
    except JSONParseError:
        raise
    except ValueError as error:
        raise JSONParseError(str(error)) from None


# The deep parser's two patterns, compiled when a line first nests that deep.
_WS = LazyPattern(r"[ \t\n\r]*")
_NUMBER = LazyPattern(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


class _DeepParser:
    """An iterative JSON parser for the rare line nested beyond Python's recursion limit."""

    def __init__(self, text: str, parse_int: Callable[[str], int | float] = parse_json_int) -> None:
        self.text = text
        self.pos = 0
        self.parse_int = parse_int

    def _skip(self) -> None:
        match = _WS.compiled.match(self.text, self.pos)
        if match:
            self.pos = match.end()

    def _fail(self, what: str) -> JSONParseError:
        return JSONParseError(f"{what} at offset {self.pos}")

    def _scalar(self) -> Any:
        text, pos = self.text, self.pos
        ch = text[pos : pos + 1]
        if ch == '"':
            string, self.pos = _standard()[2](text, pos + 1, True)
            return string
        for literal, constant in (("true", True), ("false", False), ("null", None)):
            if text.startswith(literal, pos):
                self.pos = pos + len(literal)
                return constant
        match = _NUMBER.compiled.match(text, pos)
        if not match or match.end() == pos:
            raise self._fail("expected a JSON value")
        self.pos = match.end()
        token = match.group()
        if "." in token or "e" in token or "E" in token:
            return float(token)
        return self.parse_int(token)

    def parse(self) -> Any:
        text = self.text
        # Each frame: [container, pending_key]; pending_key is used for objects.
        stack: list[list[Any]] = []
        result: Any = None
        have_result = False
        self._skip()
        while True:
            self._skip()
            if self.pos >= len(text):
                raise self._fail("unexpected end of text")
            ch = text[self.pos]
            value: Any
            opened = False
            if ch == "{":
                self.pos += 1
                self._skip()
                if text[self.pos : self.pos + 1] == "}":
                    self.pos += 1
                    value = {}
                else:
                    stack.append([{}, None])
                    opened = True
            elif ch == "[":
                self.pos += 1
                self._skip()
                if text[self.pos : self.pos + 1] == "]":
                    self.pos += 1
                    value = []
                else:
                    stack.append([[], None])
                    opened = True
            else:
                value = self._scalar()
            if opened:
                frame = stack[-1]
                if type(frame[0]) is dict:
                    frame[1] = self._key()
                continue
            # Attach the finished value, closing containers as far as they end here.
            while True:
                if not stack:
                    result = value
                    have_result = True
                    break
                frame = stack[-1]
                container = frame[0]
                if type(container) is dict:
                    container[frame[1]] = value
                else:
                    container.append(value)
                self._skip()
                ch = text[self.pos : self.pos + 1]
                if ch == ",":
                    self.pos += 1
                    if type(container) is dict:
                        self._skip()
                        frame[1] = self._key()
                    break
                closer = "}" if type(container) is dict else "]"
                if ch != closer:
                    raise self._fail(f"expected ',' or '{closer}'")
                self.pos += 1
                stack.pop()
                value = container
            if have_result:
                self._skip()
                if self.pos != len(text):
                    raise self._fail("extra data after the JSON value")
                return result

    def _key(self) -> str:
        self._skip()
        if self.text[self.pos : self.pos + 1] != '"':
            raise self._fail("expected a string key")
        key: str
        key, self.pos = _standard()[2](self.text, self.pos + 1, True)
        self._skip()
        if self.text[self.pos : self.pos + 1] != ":":
            raise self._fail("expected ':'")
        self.pos += 1
        return key
