"""``StrippedDigests.same`` answers what ``same_schema`` answers (the containment check uses
the digests; ``same_schema`` is their specification: stripped canonical texts compared)."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_entropy.core.schema_strip import StrippedDigests, same_schema
from pytest_entropy.testing.strategies import json_values, schemas

# Values whose canonical texts agree or differ in ways Python's == does not say.
TWINS = [True, 1, 1.0, 0, -0.0, False, None, "1", "\ud800", "\ud800x", [], {}, [1], {"a": 1}]
ANNOTATIONS = ["description", "title", "examples", "default", "$comment"]


def _annotated(schema: Any, draw: Any) -> Any:
    """A copy of ``schema`` with annotations added at some of its subschemas (the same
    schema once stripped)."""
    out = copy.deepcopy(schema)
    stack = [out]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            if draw(st.booleans()):
                node[draw(st.sampled_from(ANNOTATIONS))] = draw(json_values(3))
            for key, value in node.items():
                if key not in ("enum", "const"):
                    stack.append(value)
        elif type(node) is list:
            stack.extend(node)
    return out


@st.composite
def pairs(draw: Any) -> tuple[Any, Any]:
    a = draw(schemas())
    kind = draw(st.sampled_from(["annotated", "other", "twin-enum", "twin-const", "copy"]))
    if kind == "annotated":
        return a, _annotated(a, draw)
    if kind == "other":
        return a, draw(schemas())
    if kind == "copy":
        return a, json.loads(json.dumps(a))
    first, second = draw(st.sampled_from(TWINS)), draw(st.sampled_from(TWINS))
    if kind == "twin-enum":
        return {"enum": [first, {"description": first}]}, {
            "enum": [second, {"description": second}]
        }
    return {"const": first, "title": first}, {"const": second}


@settings(max_examples=400, deadline=None)
@given(pair=pairs())
@example(pair=({"const": True}, {"const": 1}))
@example(pair=({"const": -0.0}, {"const": 0}))
@example(pair=({"enum": [{"description": "a"}]}, {"enum": [{}]}))
@example(pair=({"properties": {"description": {"type": "string"}}}, {"properties": {}}))
def test_the_digests_agree_with_same_schema(pair: tuple[Any, Any]) -> None:
    a, b = pair
    digests = StrippedDigests()
    assert digests.same(a, b) == same_schema(a, b)
    assert digests.same(b, a) == same_schema(b, a)
    assert digests.same(a, a)


def test_a_node_is_hashed_once_however_often_asked() -> None:
    deep: Any = {"type": "string"}
    for _ in range(5000):  # past the recursion limit
        deep = {"type": "object", "description": "level", "properties": {"a": deep}}
    digests = StrippedDigests()
    levels = []
    node = deep
    while "properties" in node:
        levels.append(node)
        node = node["properties"]["a"]
    for level in levels:  # what a containment check asks, level after level
        digests.of(level)
    assert len(digests._memo) <= 3 * len(levels) + 2
