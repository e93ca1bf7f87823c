"""``parse_json_bytes`` reads a line the same way on both paths (issues 28 and 32).

Where the Rust core is in use it parses every JSON text the package reads outside the
scanner (surfaces, repairs, state files, foreign formats' records), so nothing on the way
to a demo ``measure`` imports orjson. The plain path (orjson, with its fallbacks) is the
specification: the same value (types, ``-0.0``, integers past 64 bits as doubles, key order,
lone surrogates) and the same ``fast`` flag (which feeds ``fallback_parsed_lines``), and a
line one refuses the other refuses with the plain path's message.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_entropy.core.canonical import js_stringify
from pytest_entropy.ingest.jsonparse import JSONParseError, parse_json_bytes
from pytest_entropy.testing import strategies as es
from tests.native_core_support import native_core_module, on_path
from tests.property.test_native_scan_differential import dump, nested, values


def _exact(value: Any) -> list[Any]:
    """``value`` as a flat list of tokens with every type and float bit pattern spelled out
    (``0 == -0.0 == False`` in Python, and dicts compare without their order); iterative,
    for the lines nested past 1024 levels."""
    tokens: list[Any] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            tokens.append(("dict", len(item)))
            for key, member in reversed(list(item.items())):
                stack.append(member)
                stack.append(("key", key))
        elif type(item) is list:
            tokens.append(("list", len(item)))
            stack.extend(reversed(item))
        elif type(item) is float:
            tokens.append(("float", math.copysign(1.0, item), item.hex()))
        else:
            tokens.append((type(item).__name__, item))
    return tokens


def _read(raw: bytes, path: str) -> Any:
    with on_path(path):
        try:
            value, fast = parse_json_bytes(raw)
        except JSONParseError as error:
            return ("refused", str(error))
    return _exact(value), fast


# Bytes around the text: JSON and JavaScript whitespace, a BOM, invalid UTF-8, garbage.
_AROUND = st.sampled_from(
    [b"", b" ", b"\t\r\n", "\u00a0".encode(), "\ufeff".encode(), "\u2028".encode(), b"\xff", b"x"]
)


@given(
    st.one_of(values, nested()),
    st.booleans(),
    _AROUND,
    _AROUND,
    st.integers(min_value=0, max_value=4),
)
@example([], False, b"", b"", 0)
def test_both_paths_read_a_line_alike(
    value: Any, ascii_only: bool, before: bytes, after: bytes, cut: int
) -> None:
    native_core_module()
    raw = before + dump(value, ascii_only).encode("utf-8", "surrogatepass") + after
    if cut:  # a truncated line: refused alike, or (a number cut short) read alike
        raw = raw[:-cut]
    assert _read(raw, "native") == _read(raw, "plain")


# Literals at every edge the two readers must agree on, alone and inside arrays.
LITERALS = [
    b"-0",
    b"-0.0e5",
    b"1e400",
    b"-1e400",
    b"123456789012345678901234567890",
    b"18446744073709551616",
    b"9223372036854775808",
    b"-9223372036854775809",
    b"2.5e-324",
    b"1E21",
    b'"\\ud800"',
    b'"\\udc00\\ud800"',
    b'"\\ud83d\\ude00"',
    b'"\\u0000\\u001f"',
    b'"\xff\xfe"',
    b'{"a":1,"a":2,"0":3,"01":4}',
    b"\xef\xbb\xbf{}",
    b"\xc2\xa0[1]\xe2\x80\xa8",
    b"[1,]",
    b"{'a':1}",
    b"01",
    b"NaN",
    b"",
]

texts = st.one_of(
    es.json_values(30).map(lambda value: js_stringify(value).encode("utf-8", "surrogatepass")),
    st.sampled_from(LITERALS),
    st.lists(st.sampled_from(LITERALS[:15]), min_size=1, max_size=4).map(
        lambda parts: b"[" + b" , ".join(parts) + b"]"
    ),
    st.binary(max_size=12),
)


@settings(max_examples=400, deadline=None)
@given(raw=texts)
def test_both_paths_read_generated_texts_alike(raw: bytes) -> None:
    native_core_module()
    assert _read(raw, "native") == _read(raw, "plain")


@pytest.mark.parametrize(
    "raw",
    [
        b"-0",
        b"[-0, 0, -0.0]",
        b'{"a": 1, "a": 2}',
        b'{"b": 1, "10": 2, "a": 3, "2": 4}',
        b"18446744073709551616",
        b"1e400",
        b'"\\ud800"',
        b"\xef\xbb\xbf{}",
        b'"\xff"',
        b"[" * 1100 + b"]" * 1100,
        b"",
        b"nul",
        b"NaN",
        b"{} {}",
    ],
)
def test_both_paths_read_the_edge_cases_alike(raw: bytes) -> None:
    native_core_module()
    assert _read(raw, "native") == _read(raw, "plain")


def test_nesting_past_orjsons_limit_reads_alike() -> None:
    native_core_module()
    raw = b'[{"a":' * 800 + b"-0" + b"}]" * 800
    assert _read(raw, "native") == _read(raw, "plain")
    assert _read(raw, "native")[1] is False  # deeper than orjson's 1024 levels: not fast
