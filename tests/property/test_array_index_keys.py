"""Which keys JavaScript orders first as array indices (``core/jscompat.is_array_index_key``)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from pytest_entropy.core.jscompat import is_array_index_key, js_own_keys

# The definition the test holds the string tests to: a canonical numeric string (no sign, no
# leading zero but "0" itself) whose value is at most 2**32 - 2 (ECMAScript's array index).
_CANONICAL = re.compile(r"(?:0|[1-9][0-9]*)\Z")
_MAX = 2**32 - 2


def _expected(key: str) -> bool:
    return _CANONICAL.match(key) is not None and int(key) <= _MAX


_EDGES = [
    "",
    "0",
    "00",
    "01",
    "7",
    "10",
    "-1",
    "+1",
    " 1",
    "1 ",
    "1\n",
    "1.0",
    "1e3",
    "٣",
    "²",
    "１",
    "4294967294",
    "4294967295",
    "4294967296",
    "9999999999",
    "10000000000",
    "0x10",
]


def test_the_edges() -> None:
    for key in _EDGES:
        assert is_array_index_key(key) is _expected(key), repr(key)
    assert js_own_keys({"b": 1, "10": 2, "a": 3, "2": 4, "01": 5}) == ["2", "10", "b", "a", "01"]


@given(
    st.one_of(
        st.text(alphabet="0123456789", max_size=12),
        st.integers(min_value=0, max_value=2**33).map(str),
        st.text(max_size=6),
    )
)
def test_generated_keys(key: str) -> None:
    assert is_array_index_key(key) is _expected(key)
