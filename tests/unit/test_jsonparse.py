"""The JavaScript-compatible fallback parser: it accepts what JSON.parse(line.trim()) does."""

from __future__ import annotations

import math
from typing import Any

import orjson
import pytest

from pytest_entropy.ingest.jsonparse import (
    JSONParseError,
    may_hold_negative_zero,
    parse_json_bytes,
    parse_json_text,
)


def test_orjson_fast_path_is_reported() -> None:
    assert parse_json_bytes(b'{"a":1}') == ({"a": 1}, True)


def test_lone_surrogate_escape_survives() -> None:
    value, fast = parse_json_bytes(b'{"k":"\\ud800x"}')
    assert value == {"k": "\ud800x"}
    assert not fast


def test_overflowing_number_reads_as_infinity() -> None:
    value, _ = parse_json_bytes(b'{"n":1e400,"m":-1e400}')
    assert value["n"] == math.inf
    assert value["m"] == -math.inf


def test_huge_integer_literal_reads_as_a_double() -> None:
    value, _ = parse_json_bytes(b'{"n":' + b"9" * 5000 + b"}")
    assert value["n"] == math.inf


def test_nesting_beyond_every_recursion_limit() -> None:
    depth = 50_000
    value, fast = parse_json_bytes(b'{"a":' + b"[" * depth + b"]" * depth + b"}")
    assert not fast
    node = value["a"]
    for _ in range(depth - 1):
        node = node[0]
    assert node == []


def test_deep_objects_and_mixed_values() -> None:
    depth = 3000
    text = '{"k":' * depth + '[1,"s",true,null,{"x":2.5}]' + "}" * depth
    node = parse_json_text(text)
    for _ in range(depth):
        node = node["k"]
    assert node == [1, "s", True, None, {"x": 2.5}]


@pytest.mark.parametrize("prefix", ["\ufeff", "\u00a0", "\u2028", "\u3000", "\u000b"])
def test_javascript_trim_whitespace(prefix: str) -> None:
    raw = (prefix + '{"a":1}' + prefix).encode("utf-8")
    assert parse_json_bytes(raw)[0] == {"a": 1}


def test_invalid_utf8_becomes_replacement_characters() -> None:
    value, fast = parse_json_bytes(b'{"a":"x\xffy"}')
    assert value == {"a": "x\ufffdy"}
    assert not fast


@pytest.mark.parametrize(
    "text",
    [
        b"{ not json",
        b'{"n":NaN}',
        b'{"n":Infinity}',
        b'{"n":-Infinity}',
        b'{"a":1}{"b":2}',
        b'{"a":1,}',
        b"\x1c{}",
        b"",
        b"[" * 3000 + b"]" * 2999,
    ],
)
def test_what_javascript_refuses_stays_refused(text: bytes) -> None:
    with pytest.raises(JSONParseError):
        parse_json_bytes(text)


def test_duplicate_keys_keep_the_last_value_in_the_first_position() -> None:
    value, _ = parse_json_bytes(b'{"a":1,"b":2,"a":3}')
    assert list(value.items()) == [("a", 3), ("b", 2)]


def _is_negative_zero(value: object) -> bool:
    return type(value) is float and value == 0 and math.copysign(1.0, value) < 0


def _first_number(value: Any) -> Any:
    """The first number of a value, depth first (keys in order)."""
    if type(value) is dict:
        value = list(value.values())
    if type(value) is list:
        for item in value:
            found = _first_number(item)
            if found is not None:
                return found
        return None
    return value if type(value) in (int, float) else None


@pytest.mark.parametrize(
    "literal", [b"-0", b"-0.0", b"-0e5", b"-0E-3", b"-0.000e+2", b"-1e-400", b"-0e400"]
)
@pytest.mark.parametrize(
    "template",
    [b"[%s]", b'{"n":%s}', b'{"n": %s }', b"[%s,0]", b'{"s":"-0","a":[[%s]]}', b"%s", b" %s\r"],
)
def test_every_negative_zero_literal_is_negative_zero(literal: bytes, template: bytes) -> None:
    # JSON.parse keeps the sign; orjson reads the integer literal -0 as 0 (issue 27).
    raw = template % literal
    value, fast = parse_json_bytes(raw)
    assert fast  # still counted as read on the fast path (the same valid UTF-8 text)
    assert _is_negative_zero(_first_number(value)), (raw, value)
    assert _is_negative_zero(_first_number(parse_json_text(raw.decode())))


@pytest.mark.parametrize(
    "raw",
    [b'{"n":0}', b'{"n":-0.5}', b'{"n":-0e1,"m":-0.1}', b'{"s":"2026-01-02"}', b'{"n":-10}'],
)
def test_lines_without_the_literal_keep_the_fast_path(raw: bytes) -> None:
    assert not may_hold_negative_zero(raw)
    assert parse_json_bytes(raw) == (orjson.loads(raw), True)


def test_a_leading_zero_stays_refused() -> None:
    with pytest.raises(JSONParseError):
        parse_json_bytes(b'{"n":-01}')


def test_the_fallbacks_keep_negative_zero_too() -> None:
    # A lone surrogate and a deep nesting send the line to the fallback parsers.
    value, fast = parse_json_bytes(b'{"k":"\\ud800","n":-0}')
    assert not fast
    assert _is_negative_zero(value["n"])
    depth = 5000
    node = parse_json_text("[" * depth + "-0" + "]" * depth)
    for _ in range(depth):
        node = node[0]
    assert _is_negative_zero(node)


def test_a_line_read_again_for_negative_zero_keeps_orjsons_other_values() -> None:
    # Re-reading a line for its -0 must not change anything else orjson gave: integers
    # beyond 64 bits stay doubles (found by the Rust crate's vectors, native/tests).
    raw = b"[-0, -11651208144021797674657421, 18446744073709551616, 18446744073709551615]"
    value, fast = parse_json_bytes(raw)
    assert fast
    assert math.copysign(1.0, value[0]) == -1.0
    assert value[1:] == orjson.loads(raw)[1:]
    assert [type(item) for item in value[1:]] == [type(item) for item in orjson.loads(raw)[1:]]
