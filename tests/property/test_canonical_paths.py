"""The canonical writer's shortcuts write exactly what its general routes write: the
recursive writer and the iterative one, a string's literal and the json module's escaping,
and orjson's array of strings (the text the core's pool digest writes) and the writer's."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_entropy.core import canonical
from pytest_entropy.core.canonical import CanonicalError, canonical_json, js_stringify
from pytest_entropy.testing import strategies as es

ORDERS = [canonical._CANONICAL, canonical._OWN]


def nested(depth: int) -> Any:
    value: Any = {"b": 1, "a": [0.5, "x"], "10": None, "2": True}
    for level in range(depth):
        value = {"z": value, "1": level} if level % 2 else [value, {"y": -0.0}]
    return value


@given(value=es.json_values(40), order=st.sampled_from(ORDERS))
def test_fast_and_general_writers_agree(value: Any, order: int) -> None:
    assert canonical._write_compact(value, order) == canonical._write_general(value, order)


@pytest.mark.parametrize("depth", [0, 1, 47, 48, 49, 200, 3000])
def test_deep_values_fall_back_to_the_general_writer(depth: int) -> None:
    value = nested(depth)
    for order in ORDERS:
        assert canonical._write_compact(value, order) == canonical._write_general(value, order)


def test_tuples_and_cycles_take_the_general_path() -> None:
    assert canonical_json({"b": (1, 2), "a": 1}) == '{"a":1,"b":[1,2]}'
    cyclic: dict[str, Any] = {"a": 1}
    cyclic["self"] = cyclic
    with pytest.raises(CanonicalError, match="cyclic"):
        canonical_json(cyclic)
    with pytest.raises(CanonicalError, match="cyclic"):
        js_stringify([cyclic])


def test_large_key_sets_are_ordered_without_the_cache() -> None:
    value = {f"k{index}": index for index in range(40, 0, -1)} | {"3": 0, "1": 0}
    text = canonical_json(value)
    assert text.startswith('{"1":0,"3":0,"k1":1,"k10":10,')


TEXT = st.text(
    alphabet=st.one_of(
        st.characters(max_codepoint=0x7F),
        st.sampled_from(["\u00e9", "\u2028", "\ufeff", "\uffff", "\U0001f600", "\ud800", "\udfff"]),
    ),
    max_size=12,
)


@given(text=TEXT)
def test_the_fast_string_writer_equals_the_plain_one(text: str) -> None:
    assert canonical.json_string(text) == canonical._plain_json_string(text)


@given(texts=st.lists(TEXT, max_size=6))
def test_orjson_writes_an_array_of_strings_canonically(texts: list[str]) -> None:
    try:
        written = orjson.dumps(texts).decode()
    except TypeError:  # a lone surrogate: the core's pool digest (pool.rs) declines then
        assert any("\ud800" <= ch <= "\udfff" for text in texts for ch in text)
        return
    assert written == canonical_json(texts)
    # and the escaping written out by hand, string by string
    assert written == "[" + ",".join(canonical._plain_json_string(t) for t in texts) + "]"
