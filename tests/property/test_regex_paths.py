"""Schema regexes run on RE2: same answers as jsonschema on ordinary patterns, and none hang."""

from __future__ import annotations

import time
from typing import Any

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from pytest_entropy.core.regex import watch_unenforced
from pytest_entropy.core.validation import accepts

PATTERNS = [
    "^a",
    "b$",
    "^[a-c]+$",
    "x|y",
    "^\\d{2,3}$",
    "[A-Z]",
    "^$",
    "a.c",
    "(ab)+",
    "^q(r|s)?t$",
]
KEYS = ["a", "ab", "abc", "12", "123", "X", "", "qrt", "qt", "zz", "b"]
values = st.one_of(st.integers(0, 3), st.sampled_from(KEYS), st.booleans())


@st.composite
def schemas(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    if draw(st.booleans()):
        schema["properties"] = {
            k: {"type": "string", "pattern": draw(st.sampled_from(PATTERNS))}
            for k in draw(st.lists(st.sampled_from(KEYS), max_size=3))
        }
    if draw(st.booleans()):
        schema["patternProperties"] = {
            p: draw(st.sampled_from([{"type": "string"}, {"type": "integer"}, True, False]))
            for p in draw(st.lists(st.sampled_from(PATTERNS), max_size=3))
        }
    choice = draw(st.sampled_from(["none", "false", "schema"]))
    if choice == "false":
        schema["additionalProperties"] = False
    elif choice == "schema":
        schema["additionalProperties"] = {"type": "boolean"}
    if draw(st.booleans()):
        schema["unevaluatedProperties"] = draw(st.sampled_from([False, {"type": "integer"}]))
        if draw(st.booleans()):
            schema["allOf"] = [{"properties": {draw(st.sampled_from(KEYS)): True}}]
    return schema


@given(schemas(), st.dictionaries(st.sampled_from(KEYS), values, max_size=4))
def test_re2_keywords_agree_with_jsonschema(
    schema: dict[str, Any], instance: dict[str, Any]
) -> None:
    expected = jsonschema.Draft202012Validator(schema).is_valid(instance)
    assert accepts(schema, instance) is expected


def test_a_catastrophic_pattern_finishes() -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}
    start = time.monotonic()
    assert accepts(schema, {"s": "a" * 100_000 + "b"}) is False
    assert accepts(schema, {"s": "a" * 100_000}) is True
    assert time.monotonic() - start < 30  # Python's re would take longer than the universe


def test_patterns_re2_cannot_compile_are_accepted_and_counted() -> None:
    lookahead = {"type": "string", "pattern": "^(?=.*\\d)\\w+$"}
    backreference = {
        "type": "object",
        "patternProperties": {"^(a)\\1$": {"type": "integer"}},
        "additionalProperties": False,
    }
    with watch_unenforced() as met:
        assert accepts(lookahead, "no digits here") is True
        assert accepts(backreference, {"aa": "not an integer"}) is True
    assert sorted(met.patterns) == ["^(?=.*\\d)\\w+$", "^(a)\\1$"]
    assert met.refs == set()


def test_digits_are_ascii_as_in_javascript() -> None:
    schema = {"type": "string", "pattern": "^\\d+$"}
    assert accepts(schema, "123") is True
    assert accepts(schema, "١٢٣") is False  # Arabic-Indic digits: \\d is ASCII in ECMAScript


def test_draft_07_tuple_items_are_honoured() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "array",
        "items": [{"type": "string"}, {"type": "integer"}],
    }
    assert accepts(schema, ["a", 1]) is True
    assert accepts(schema, ["a", "b"]) is False
