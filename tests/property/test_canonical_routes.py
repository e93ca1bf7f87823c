"""The canonical writer's shortcuts against its general routes (``tests/canonical_support.py``).

``canonical_json``, ``js_stringify``, ``stable_json_hash`` and ``file_text`` must give the
same text (or raise the same error) with the shortcuts on and off, for any value, hostile
ones included: huge integers, -0.0, NaN and the infinities, subnormals, the 1e21 and 1e-7
boundaries of JavaScript's number text, astral characters and lone surrogates, array-index
keys, dict subclasses, tuples, deep nesting and cycles; the printable-ASCII collation key
orders as ICU does. (The C kernel of the writer these were written for is gone.)
"""

from __future__ import annotations

import collections
import math
import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_entropy.core import canonical
from pytest_entropy.core.ascii_collation import ascii_collation_key
from pytest_entropy.core.canonical import (
    canonical_json,
    file_text,
    js_stringify,
    stable_json_hash,
    stable_json_hash_array,
)
from pytest_entropy.testing import strategies as es
from tests.canonical_support import general_routes


class Sub(dict):  # type: ignore[type-arg]
    """A dict subclass: written through the general route."""


BOUNDARY_FLOATS = [
    0.0,
    -0.0,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    2.225073858507201e-308,
    1.7976931348623157e308,
    1e21,
    -1e21,
    999999999999999900000.0,
    1.0000000000000001e21,
    1e20,
    123456789012345680000.0,
    1e-6,
    1e-7,
    1.5e-7,
    0.000001234,
    0.1,
    0.2 + 0.1,
    1 / 3,
    2.0**53,
    2.0**53 + 2,
    -(2.0**63),
    1e16,
    1e15 + 0.5,
    123.0,
    100.0,
    0.5,
    math.nan,
    math.inf,
    -math.inf,
]
BOUNDARY_INTS = [
    0,
    -1,
    2**53,
    -(2**53),
    2**53 + 1,
    -(2**53) - 1,
    2**63 - 1,
    2**63,
    -(2**63),
    2**64 + 3,
    10**21,
    10**22 + 1,
    10**308,
    2**1023 * 2 - 1,
    10**400,
    -(10**400),
]
STRINGS = [
    "",
    "plain",
    'quote " and backslash \\',
    "\b\f\n\r\t\x00\x01\x1f\x7f",
    "\u2028\u2029\ufeff\uffff",
    "\u00e9\u4e2d",
    "\U0001f600",
    "\ud83d\ude00",  # a surrogate pair as two code points: one astral character in JavaScript
    "\ud800",
    "\udfff",
    "a\udc00\ud800b",
    "\ud800\ud800\udc00",
    "\udbff\udfff\udbff",
]
KEYS = ["0", "1", "2", "10", "01", "-1", "4294967294", "4294967295", "1e3", "a", "B", "b", "é"]

text = st.text(
    alphabet=st.one_of(
        st.characters(max_codepoint=0x7F),
        st.characters(),
        st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\U0001f600", "\u2028"]),
    ),
    max_size=10,
)
floats = st.one_of(
    st.floats(),
    st.sampled_from(BOUNDARY_FLOATS),
    st.integers(0, 2**64 - 1).map(lambda bits: struct.unpack("<d", struct.pack("<Q", bits))[0]),
)
integers = st.one_of(st.integers(), st.sampled_from(BOUNDARY_INTS))
keys = st.one_of(es.keys, st.sampled_from(KEYS), text)
scalars = st.one_of(st.none(), st.booleans(), integers, floats, text, st.sampled_from(STRINGS))


def containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(inner, max_size=5),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(keys, inner, max_size=6),
        st.dictionaries(keys, inner, max_size=3).map(Sub),
        st.dictionaries(keys, inner, max_size=3).map(collections.OrderedDict),
    )


values = st.recursive(scalars, containers, max_leaves=30)
plain_values = st.recursive(
    st.one_of(st.none(), st.booleans(), integers, floats, text),
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(keys, inner, max_size=6)),
    max_leaves=30,
)


def outcome(function: Any, value: Any) -> tuple[str, Any]:
    try:
        return "ok", function(value)
    except Exception as error:  # the paths must fail alike too
        return "error", type(error)


def on_every_path(function: Any, value: Any) -> None:
    shortcut = outcome(function, value)
    with general_routes():
        general = outcome(function, value)
    assert shortcut == general, (shortcut, general)


def nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for level in range(depth):
        value = {"k": value, "1": level} if level % 2 else [value, -0.0]
    return value


@settings(max_examples=100, deadline=None)
@given(value=values)
def test_every_writer_agrees_on_every_path(value: Any) -> None:
    on_every_path(canonical_json, value)
    on_every_path(js_stringify, value)
    on_every_path(stable_json_hash, value)
    on_every_path(file_text, value)


@pytest.mark.parametrize("value", BOUNDARY_INTS + STRINGS + [None, True, False])
def test_scalars_on_every_path(value: Any) -> None:
    on_every_path(canonical_json, value)
    on_every_path(js_stringify, [value, {"v": value}])


@pytest.mark.parametrize("depth", [0, 1, 47, 48, 49, 399, 400, 401, 3000])
def test_deep_nesting(depth: int) -> None:
    value = nested(depth, {"b": "\ud800", "a": 2**60})
    on_every_path(canonical_json, value)
    on_every_path(js_stringify, value)
    on_every_path(stable_json_hash, value)


@settings(max_examples=30, deadline=None)
@given(items=st.lists(plain_values, max_size=5))
def test_array_hash_on_every_path(items: list[Any]) -> None:
    on_every_path(stable_json_hash_array, items)
    on_every_path(lambda v: stable_json_hash(list(v)), items)


def test_nested_dict_subclasses_are_not_taken_for_cycles() -> None:
    # The general writer copies a subclassed container into a plain one; the copies stay
    # alive, so the id of a finished copy cannot come back for the next one.
    value = collections.OrderedDict(
        a=collections.OrderedDict(x={}, y=Sub(z=[1])), b=collections.OrderedDict(z=1)
    )
    for _ in range(50):
        on_every_path(canonical_json, value)
        assert canonical_json(value) == '{"a":{"x":{},"y":{"z":[1]}},"b":{"z":1}}'


PRINTABLE = [chr(code) for code in range(0x20, 0x7F)]


def icu_order(keys: tuple[str, ...]) -> list[str]:
    with general_routes():  # the general route always asks ICU
        return canonical._order_keys(keys)


def test_ascii_collation_equals_icu_for_every_short_string() -> None:
    words = [""] + PRINTABLE + [a + b for a in PRINTABLE for b in PRINTABLE]
    words += [a + b + c for a in "aA_-0.$ zZ9~" for b in PRINTABLE for c in "bB1_ "]
    by_icu = sorted(words, key=canonical.collation_sort_key)
    assert sorted(words, key=ascii_collation_key) == by_icu


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(st.text(alphabet=st.sampled_from(PRINTABLE), max_size=8), unique=True))
def test_ascii_key_order_equals_icu(keys: list[str]) -> None:
    expected = sorted(keys, key=canonical.collation_sort_key)
    assert canonical._order_keys(tuple(keys)) == icu_order(tuple(keys))
    assert sorted(keys, key=ascii_collation_key) == expected


@pytest.mark.parametrize(
    "keys",
    [
        ("b", "a\x7f"),  # DEL is not printable: ICU decides
        ("b", "a\t"),
        ("é", "e", "f"),
        ("B", "a", "10", "2", "01"),
        ("x-y", "x_y", "x.y", "xY", "xy", "X y"),
    ],
)
def test_key_order_on_every_path(keys: tuple[str, ...]) -> None:
    value = dict.fromkeys(keys, 0)
    on_every_path(canonical_json, value)
    assert canonical._order_keys(keys) == icu_order(keys)


@settings(max_examples=100, deadline=None)
@given(value=values)
def test_json_copy_copies_exact_containers_only(value: Any) -> None:
    copied = canonical.json_copy(value)
    assert repr(copied) == repr(value)
    assert js_stringify_or_error(copied) == js_stringify_or_error(value)
    assert_same_sharing(copied, value)


def js_stringify_or_error(value: Any) -> Any:
    return outcome(js_stringify, value)


def assert_same_sharing(copied: Any, original: Any) -> None:
    """Exact dicts and lists are new objects; anything else is the original object."""
    if type(original) is dict or type(original) is list:
        assert copied is not original
        assert type(copied) is type(original)
        items = original.items() if type(original) is dict else enumerate(original)
        for key, item in items:
            assert_same_sharing(copied[key], item)
    else:
        assert copied is original


@pytest.mark.parametrize("depth", [1, 399, 400, 401, 2000])
def test_json_copy_of_deep_values(depth: int) -> None:
    value = nested(depth, {"leaf": [1]})
    copied = canonical.json_copy(value)
    assert copied is not value
    assert js_stringify(copied) == js_stringify(value)  # iterative: no recursion limit
