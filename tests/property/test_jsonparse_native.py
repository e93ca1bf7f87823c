"""``parse_json_bytes`` reads the same values (and the same ``fast``) on both paths.

With the Rust core in use, ``ingest/jsonparse.parse_json_bytes`` hands the bytes to the
core's parser first and to the Python one (orjson and its JavaScript fallbacks) only for
text the core refuses, so that a command need not import orjson. Here generated text,
hostile-but-valid and broken, is read by both: values compared with floats bit for bit and
containers by type and order, and invalid text must fail on both.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_entropy.core.canonical import js_stringify
from pytest_entropy.ingest.jsonparse import JSONParseError, parse_json_bytes
from pytest_entropy.testing import strategies as es
from tests.native_core_support import native_core_module, on_path

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


def typed(value: Any) -> Any:
    """The value with every float as its bits and every container's type and order kept."""
    if type(value) is float:
        return ("float", "nan" if math.isnan(value) else value.hex())
    if type(value) is dict:
        return ("dict", [(key, typed(item)) for key, item in value.items()])
    if type(value) is list:
        return ("list", [typed(item) for item in value])
    return (type(value).__name__, value)


def read(raw: bytes, path: str) -> Any:
    with on_path(path):
        try:
            value, fast = parse_json_bytes(raw)
        except JSONParseError as error:
            return ("error", str(error))
    return (typed(value), fast)


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
def test_both_paths_read_alike(raw: bytes) -> None:
    native_core_module()
    assert read(raw, "native") == read(raw, "plain")


def test_nesting_past_orjsons_limit_reads_alike() -> None:
    native_core_module()
    raw = b'[{"a":' * 800 + b"-0" + b"}]" * 800
    values = []
    for path in ("native", "plain"):
        with on_path(path):
            value, fast = parse_json_bytes(raw)
        values.append((js_stringify(value), fast))  # iterative: no recursion limit
    assert values[0] == values[1]
    assert values[0][1] is False
