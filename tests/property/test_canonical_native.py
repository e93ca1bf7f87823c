"""The Rust core's JSON writers (``native/src/python_writer.rs``) against the plain Python.

For exact dicts, lists, tuples and JSON scalars the core must give the plain writer's text
byte for byte, in all three forms and at every ``indent_depth``; for anything else it must
return ``None`` (the plain writer then writes or raises as it always has). Here the core's
functions are called directly, so a case the core declined cannot pass unnoticed: the
tests say which values it must write itself.
"""

from __future__ import annotations

import collections
import hashlib
import math
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_entropy.core import canonical
from pytest_entropy.core.ascii_collation import ascii_collation_key
from pytest_entropy.core.jscompat import is_array_index_key
from tests.native_core_support import native_core_module, on_path
from tests.property.test_canonical_routes import (
    BOUNDARY_FLOATS,
    BOUNDARY_INTS,
    STRINGS,
    floats,
    integers,
    keys,
    text,
)

scalars = st.one_of(st.none(), st.booleans(), integers, floats, text, st.sampled_from(STRINGS))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(keys, inner, max_size=6),
    ),
    max_leaves=40,
)
ascii_keys = st.one_of(
    st.sampled_from(["0", "1", "01", "10", "4294967294", "4294967295", "-1", "a", "A", "_"]),
    st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=6),
)
ascii_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(ascii_keys, inner, max_size=6)
    ),
    max_leaves=40,
)


@pytest.fixture(scope="module")
def native() -> ModuleType:
    return native_core_module()


def plain(function: Any, *args: Any, **options: Any) -> Any:
    with on_path("plain"):
        return function(*args, **options)


def needs_icu(value: Any) -> bool:
    """Whether some object has two or more keys other than array indexes and not all of
    them printable ASCII: a key set only ICU orders, which the core declines."""
    if isinstance(value, dict):
        rest = [key for key in value if not is_array_index_key(key)]
        joined = "".join(rest)
        if len(rest) > 1 and not (joined.isascii() and joined.isprintable()):
            return True
        return any(needs_icu(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(needs_icu(item) for item in value)
    return False


@settings(max_examples=300, deadline=None)
@given(value=values, indent_depth=st.one_of(st.none(), st.integers(-1, 4)))
def test_every_form_as_the_plain_writer(
    native: ModuleType, value: Any, indent_depth: int | None
) -> None:
    assert native.js_stringify(value) == plain(canonical.js_stringify, value)
    expected = plain(canonical.file_text, value, indent_depth=indent_depth)
    assert native.file_text(value, indent_depth) == expected
    # a state file's bytes: the core's and the plain writer's, and the text in UTF-8
    assert native.file_bytes(value, indent_depth) == expected.encode()
    written_bytes = plain(canonical.file_bytes, value, indent_depth=indent_depth)
    assert written_bytes == expected.encode()
    assert canonical.file_bytes(value, indent_depth=indent_depth) == written_bytes
    expected = plain(canonical.canonical_json, value)
    written = native.canonical_json(value, canonical._icu_positions)
    assert written == expected
    assert native.canonical_json_bytes(value, canonical._icu_positions) == expected.encode()
    # without ICU's order from Python, a key set only ICU orders is declined
    assert native.canonical_json(value) == (None if needs_icu(value) else expected)
    assert canonical.stable_json_hash(value) == plain(canonical.stable_json_hash, value)
    # the core's own digest (SHA-256 in Rust, no hashlib) of the same bytes
    digest = hashlib.sha256(expected.encode()).hexdigest()
    assert native.stable_json_hash(value, canonical._icu_positions) == digest
    assert native.stable_json_hash(value) == (None if needs_icu(value) else digest)


@settings(max_examples=200, deadline=None)
@given(value=ascii_values)
def test_printable_ascii_keys_are_ordered_by_the_core(native: ModuleType, value: Any) -> None:
    written = native.canonical_json(value)
    assert written is not None
    assert written == plain(canonical.canonical_json, value)


@settings(max_examples=200, deadline=None)
@given(words=st.lists(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E))))
def test_the_collation_order_is_ascii_collation_key(native: ModuleType, words: list[str]) -> None:
    value = dict.fromkeys(words, 0)
    rest = sorted((w for w in value if not is_array_index_key(w)), key=ascii_collation_key)
    index = sorted((w for w in value if is_array_index_key(w)), key=int)
    assert native.canonical_json(value) == canonical.canonical_json(dict.fromkeys(index + rest, 0))


@pytest.mark.parametrize(
    "value",
    BOUNDARY_INTS
    + BOUNDARY_FLOATS
    + STRINGS
    + [-0.0, 1e21, 2**53 + 1, -(2**53) - 1, 2**64, 10**400, -(10**400), math.nan]
    + [{"0": 1, "01": 2, "4294967295": 3, "4294967294": 4, "10": 5, "2": 6, "b": 7, "a": 8}]
    + [{"\ud800": ["\udfff", "\ud83d\ude00", "\x00\x1f\u2028"]}, {"é": 1, "1": 2}],
)
def test_hostile_scalars_and_keys(native: ModuleType, value: Any) -> None:
    for form in ("canonical_json", "js_stringify"):
        assert getattr(native, form)([value, {"v": value}]) == plain(
            getattr(canonical, form), [value, {"v": value}]
        )
    assert native.file_text({"v": [value]}) == plain(canonical.file_text, {"v": [value]})


def nested(depth: int) -> Any:
    value: Any = {"b": "\ud800", "a": 2**60}
    for level in range(depth):
        value = {"k": value, "1": level} if level % 2 else [value, -0.0]
    return value


@pytest.mark.parametrize("depth", [0, 1, 47, 127])
def test_nesting_the_core_writes(native: ModuleType, depth: int) -> None:
    value = nested(depth)
    assert native.canonical_json(value) == plain(canonical.canonical_json, value)
    assert native.file_text(value) == plain(canonical.file_text, value)
    assert native.file_text(value, 32) == plain(canonical.file_text, value, indent_depth=32)


class Sub(dict):  # type: ignore[type-arg]
    pass


class Text(str):
    pass


def cyclic() -> Any:
    value: list[Any] = [1]
    value.append({"again": value})
    return value


def same_outcome(function: Any, value: Any) -> None:
    """The writer (the core first, the plain one where it declines) acts as the plain one."""
    try:
        expected: Any = plain(function, value)
    except Exception as error:
        with pytest.raises(type(error)):
            function(value)
    else:
        assert function(value) == expected


DECLINED = [
    nested(128),
    nested(3000),
    Sub(a=1),
    [collections.OrderedDict(a=1)],
    {"a": Text("x")},
    {Text("a"): 1},
    {1: "int key"},
    [True, 1, object()],
    {1.5},
    cyclic(),
]


@pytest.mark.parametrize("value", DECLINED, ids=lambda value: type(value).__name__)
def test_the_core_declines_what_only_the_plain_writer_decides(
    native: ModuleType, value: Any
) -> None:
    for form in ("canonical_json", "canonical_json_bytes", "js_stringify", "file_text"):
        assert getattr(native, form)(value) is None, form
    assert native.file_bytes(value) is None
    for form in ("canonical_json", "js_stringify", "file_text", "file_bytes", "stable_json_hash"):
        same_outcome(getattr(canonical, form), value)


@pytest.mark.parametrize("value", [{"é": 1, "e": 2}, [{"a\t": 1, "b": 2}], {"\ud800": 1, "a": 2}])
def test_icu_key_sets_are_ordered_by_python(native: ModuleType, value: Any) -> None:
    assert native.canonical_json(value) is None
    assert native.canonical_json_bytes(value) is None
    expected = plain(canonical.canonical_json, value)
    assert native.canonical_json(value, canonical._icu_positions) == expected
    assert native.js_stringify(value) == plain(canonical.js_stringify, value)
    same_outcome(canonical.canonical_json, value)
    same_outcome(canonical.stable_json_hash, value)


def broken_order(keys: tuple[str, ...]) -> Any:
    if keys[0] == "raise":
        raise KeyError(keys)
    return {"repeat": [0, 0], "short": [0], "far": [0, 5], "text": "01"}[keys[0]]


@pytest.mark.parametrize("first", ["raise", "repeat", "short", "far", "text"])
def test_a_wrong_icu_order_declines(native: ModuleType, first: str) -> None:
    value = [{first: 1, "é": 2}]
    assert native.canonical_json(value, broken_order) is None
    assert native.canonical_json_bytes(value, broken_order) is None


def test_a_shared_container_is_no_cycle(native: ModuleType) -> None:
    shared = {"z": [1, 2], "a": {}}
    value = [shared, {"x": shared, "y": [shared, shared]}]
    assert native.canonical_json(value) == plain(canonical.canonical_json, value)
    assert native.file_text(value) == plain(canonical.file_text, value)


@given(st.lists(st.binary(max_size=200), max_size=6))
@settings(max_examples=100)
def test_the_core_sha256_is_hashlib_s(native: ModuleType, pieces: list[bytes]) -> None:
    # canonical.sha256 hands the commands this hasher instead of hashlib's (no OpenSSL).
    ours, theirs = native.Sha256(pieces[0] if pieces else None), hashlib.sha256()
    theirs.update(pieces[0] if pieces else b"")
    for piece in pieces[1:]:
        before = ours.copy()
        ours.update(piece)
        theirs.update(piece)
        assert before.hexdigest() != ours.hexdigest() or not piece
    assert ours.hexdigest() == theirs.hexdigest()
    assert ours.copy().hexdigest() == theirs.hexdigest()
