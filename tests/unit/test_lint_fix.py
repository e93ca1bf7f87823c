"""``lint --fix``: the fixed surface satisfies the profile and keeps every accepted call."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pytest_entropy.core.lint import lint_surface
from pytest_entropy.core.lint.fix import FixReplay, fill_nulls, fix_surface
from pytest_entropy.core.records import Operation, Trace
from pytest_entropy.core.validation import accepts
from pytest_entropy.sources.lint_profiles import load_profile

STRICT = load_profile("openai-strict")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "q": {"type": "string", "description": "query", "minLength": 1},
        "page": {"type": "integer", "minimum": 1},
        "mode": {"type": "string", "enum": ["fast", "safe"]},
        "kind": {"enum": ["a", "b"]},
        "url": {"type": "string", "format": "uri"},
        "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        "ref": {"$ref": "#/$defs/id"},
        "tags": {"type": ["array"], "items": {"type": "string"}},
        "free": {"description": "anything"},
        "filter": {
            "type": "object",
            "properties": {"since": {"type": "string"}, "until": {"type": "string"}},
            "required": ["since"],
        },
        "rows": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"n": {"type": "integer"}, "x": {"const": 1}},
            },
        },
    },
    "required": ["q"],
    "$defs": {"id": {"type": "object", "properties": {"v": {"type": "integer"}}}},
}

ACCEPTED_CALLS: list[dict[str, Any]] = [
    {"q": "x"},
    {"q": "x", "page": 2, "mode": "safe", "kind": "b", "url": "https://example.com"},
    {"q": "x", "either": 3, "ref": {"v": 1}, "tags": ["t"], "free": [1, {"a": None}]},
    {"q": "x", "filter": {"since": "2024"}, "rows": [{"n": 1}, {"x": 1}, {}]},
    {"q": "x", "ref": {}},
]


def _surface(schema: Any) -> dict[str, Any]:
    return {"version": 1, "actions": [{"ref": "search", "inputSchema": schema}]}


def _strict_findings(surface: dict[str, Any]) -> list[str]:
    return [f"{f.rule} {f.pointer}" for f in lint_surface(surface, [STRICT]) if f.profile]


def test_the_original_breaks_strict_mode_and_the_fix_satisfies_it() -> None:
    original = _surface(SCHEMA)
    assert _strict_findings(original)
    fixed, tools = fix_surface(original, STRICT)
    assert _strict_findings(fixed) == []
    assert [tool.ref for tool in tools] == ["search"]
    assert original == _surface(SCHEMA)  # the input is untouched


@pytest.mark.parametrize("call", ACCEPTED_CALLS, ids=range(len(ACCEPTED_CALLS)))
def test_every_accepted_call_still_passes_once_new_keys_are_null(call: dict[str, Any]) -> None:
    assert accepts(SCHEMA, call)
    fixed, (tool,) = fix_surface(_surface(SCHEMA), STRICT)
    schema = fixed["actions"][0]["inputSchema"]
    filled = fill_nulls(call, schema, tool.required_added)
    assert accepts(schema, filled), filled
    # Without the nulls the fixed schema refuses the call: the keys really became required.
    if set(filled) != set(call):
        assert not accepts(schema, call)


def test_how_optional_properties_become_nullable() -> None:
    fixed, _ = fix_surface(_surface(SCHEMA), STRICT)
    properties = fixed["actions"][0]["inputSchema"]["properties"]
    assert properties["page"]["type"] == ["integer", "null"]
    assert properties["mode"]["enum"] == ["fast", "safe", None]
    assert properties["kind"] == {"enum": ["a", "b", None]}
    assert properties["ref"] == {"anyOf": [{"$ref": "#/$defs/id"}, {"type": "null"}]}
    assert properties["either"]["anyOf"][-1] == {"type": "null"}
    assert properties["free"] == {"description": "anything"}
    assert fixed["actions"][0]["inputSchema"]["required"][0] == "q"


def test_refused_keywords_move_into_the_description() -> None:
    fixed, (tool,) = fix_surface(_surface(SCHEMA), STRICT)
    properties = fixed["actions"][0]["inputSchema"]["properties"]
    assert "minLength" not in properties["q"]
    assert properties["q"]["description"] == "query (minLength: 1)"
    assert "format" not in properties["url"]
    assert properties["url"]["description"] == 'format: "uri"'
    assert "oneOf" not in properties["either"]
    assert any("oneOf became anyOf" in change for change in tool.changes)


def test_fill_nulls_follows_items_refs_and_nesting() -> None:
    fixed, (tool,) = fix_surface(_surface(SCHEMA), STRICT)
    schema = fixed["actions"][0]["inputSchema"]
    filled = fill_nulls(
        {"q": "x", "rows": [{}], "ref": {}, "filter": {"since": "s"}}, schema, tool.required_added
    )
    assert filled["rows"] == [{"n": None, "x": None}]
    assert filled["ref"] == {"v": None}
    assert filled["filter"] == {"since": "s", "until": None}
    assert filled["page"] is None


def _trace(*calls: tuple[str, dict[str, Any], str]) -> Trace:
    return Trace(tuple(Operation(ref, args, outcome) for ref, args, outcome in calls))


def test_the_replay_counts_and_can_fail() -> None:
    open_schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    original = _surface(open_schema)
    fixed, tools = fix_surface(original, STRICT)
    replay = FixReplay.of(original, fixed, tools)
    replay.add_trace(
        _trace(
            ("search", {"a": "x"}, "succeeded"),
            ("search", {}, "succeeded"),
            ("search", {"a": 1}, "succeeded"),  # refused by the original: not checked
            ("search", {"b": 2}, "failed"),  # not a successful call
            ("other", {"a": "x"}, "succeeded"),  # not in the surface
        )
    )
    assert (replay.checked, replay.broken) == (2, {})
    # A call with a key the schema never declared was accepted by the open object; the
    # closed one refuses it, and the replay says so.
    replay.add_trace(_trace(("search", {"a": "x", "extra": True}, "succeeded")))
    assert (replay.checked, replay.broken) == (3, {"search": 1})


def test_a_profile_without_a_fix_changes_nothing() -> None:
    original = _surface(copy.deepcopy(SCHEMA))
    fixed, tools = fix_surface(original, load_profile("mcp"))
    assert tools == [] and fixed == original
