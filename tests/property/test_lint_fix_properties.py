"""``lint --fix`` never refuses a call the original accepted (once new keys are null).

Closing objects refuses undeclared keys on purpose (the ``--sessions`` replay reports it), so
the property is checked for the other two fixes on generated schemas and calls, and for all
three on calls that use only declared keys.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_entropy.core.lint.fix import fill_nulls, fix_surface
from pytest_entropy.core.validation import accepts
from pytest_entropy.sources.lint_profiles import load_profile
from pytest_entropy.testing.strategies import json_values, schemas

STRICT = load_profile("openai-strict")
OPEN = dataclasses.replace(STRICT, fixes=frozenset({"require-all-nullable", "move-keywords"}))


def _object_schemas() -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(["a", "b", "c"]), schemas(), max_size=3).map(
        lambda properties: {"type": "object", "properties": properties}
    )


def _fixed(schema: dict[str, Any], profile: Any) -> tuple[Any, Any]:
    fixed, tools = fix_surface(
        {"version": 1, "actions": [{"ref": "t", "inputSchema": schema}]}, profile
    )
    added = tools[0].required_added if tools else {}
    return fixed["actions"][0]["inputSchema"], added


@settings(max_examples=300, deadline=None)
@given(
    schema=_object_schemas(),
    call=st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), json_values(6), max_size=4),
)
@example(  # an array in an anyOf branch: its items are filled (no branch was tried)
    schema={
        "type": "object",
        "properties": {
            "b": {
                "anyOf": [
                    {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"path": {"type": "string"}},
                            "required": [],
                        },
                    }
                ]
            }
        },
    },
    call={"b": [{}]},
)
@example(  # an undeclared key in an open anyOf branch: the branch is still filled
    schema={
        "type": "object",
        "properties": {
            "a": {"anyOf": [{"type": "object", "properties": {"path": {"type": "string"}}}]}
        },
    },
    call={"a": {"limit": None}},
)
@example(  # the branch that declares the keys refuses the value: the next one is filled
    schema={
        "type": "object",
        "properties": {
            "a": {
                "anyOf": [
                    {"type": "object", "properties": {}, "required": ["path"]},
                    {"type": "object", "properties": {"path": {"type": "string"}}, "required": []},
                ]
            }
        },
    },
    call={"a": {}},
)
@example(  # the open object sits one combinator further down
    schema={
        "type": "object",
        "properties": {
            "b": {
                "anyOf": [
                    {"anyOf": [{"type": "object", "properties": {"path": {"type": "string"}}}]}
                ]
            }
        },
    },
    call={"b": {}},
)
def test_an_accepted_call_stays_accepted(schema: dict[str, Any], call: dict[str, Any]) -> None:
    if not accepts(schema, call):
        return
    fixed, added = _fixed(schema, OPEN)
    assert accepts(fixed, fill_nulls(call, fixed, added))


@settings(max_examples=300, deadline=None)
@given(schema=_object_schemas(), data=st.data())
def test_with_declared_keys_closing_costs_nothing(
    schema: dict[str, Any], data: st.DataObject
) -> None:
    declared = sorted(schema["properties"])
    call = (
        data.draw(st.dictionaries(st.sampled_from(declared), json_values(1), max_size=3))
        if declared
        else {}
    )
    if not accepts(schema, call) or any(type(value) in (dict, list) for value in call.values()):
        return
    fixed, added = _fixed(schema, STRICT)
    assert accepts(fixed, fill_nulls(call, fixed, added))
