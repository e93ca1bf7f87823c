"""``file_text`` writes flat containers with orjson at once; the bytes are those of its
general route: JSON.stringify(value, null, 2) in own-key order."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_entropy.core.canonical import file_text
from pytest_entropy.testing import strategies as es
from tests.canonical_support import general_routes

KEYS = st.one_of(
    st.sampled_from(["0", "1", "10", "01", "4294967294", "4294967295", "-1", "\u0663", "a"]),
    st.text(max_size=5),
    st.sampled_from(["\ud800", "a\x00b", "\u2028", "line\nbreak", '"q"', "\\"]),
)
SCALARS = st.one_of(
    st.integers(-(2**54), 2**54),
    st.sampled_from([2**53, 2**53 + 1, -(2**53), -(2**53) - 1, 0, -1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1.0, 1e16, 1e21, 1e-7, -0.0]),
    st.booleans(),
    st.none(),
    KEYS,
)
FLAT = st.one_of(
    st.dictionaries(KEYS, SCALARS, max_size=6),
    st.dictionaries(KEYS, st.integers(-(2**54), 2**54), max_size=6),
    st.dictionaries(KEYS, KEYS, max_size=6),
    st.lists(SCALARS, max_size=6),
    st.lists(st.integers(-(2**54), 2**54), max_size=6),
    st.lists(KEYS, max_size=6),
)
NESTED = st.recursive(
    FLAT,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12,
)


def _both(value: Any, indent_depth: int | None = None) -> None:
    fast = file_text(value, indent_depth=indent_depth)
    with general_routes():
        plain = file_text(value, indent_depth=indent_depth)
    assert fast == plain


@settings(max_examples=300, deadline=None)
@given(NESTED, st.one_of(st.none(), st.integers(0, 3)))
def test_flat_containers_are_written_as_the_plain_writer_does(value: Any, depth: Any) -> None:
    _both(value, depth)


@settings(max_examples=100, deadline=None)
@given(es.json_values(30))
def test_any_json_value(value: Any) -> None:
    _both(value)


def test_a_pool_shaped_file() -> None:
    counts = {f"mcp.a\x00k\x00number:{index}": index + 1 for index in range(50)}
    pool = {
        "version": 1,
        "entries": [
            {"ref": "mcp.a", "key": "k", "total": 3, "values": [{"value": 1.5, "count": 3}]}
        ],
        "tracked": [{"file": "s.jsonl", "digest": "d", "counts": counts}, {"counts": {"7": 1}}],
        "baked": ["x", "y\ud800"],
    }
    _both(pool)
    _both([[[counts]]])
