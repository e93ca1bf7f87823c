"""Schema containment and the surface diff: one case per keyword family."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_entropy.core.containment import containment_findings
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.surface_diff import AcceptedLoosening, accepted_from_value, diff_snapshots

S = {"type": "string"}
INT = {"type": "integer"}


def obj(props: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, **extra}


def snap(*tools: tuple[str, Any]) -> dict[str, Any]:
    return {"version": 1, "actions": [{"ref": ref, "inputSchema": schema} for ref, schema in tools]}


def loosened(before: Any, after: Any) -> set[tuple[str, str]]:
    return {
        (c.path, c.rule) for c in diff_snapshots(snap(("t", before)), snap(("t", after))).loosened
    }


def tightened(before: Any, after: Any) -> set[tuple[str, str]]:
    return {
        (c.path, c.rule) for c in diff_snapshots(snap(("t", before)), snap(("t", after))).tightened
    }


LOOSENINGS = [
    ("untyped", obj({"q": S}), obj({"q": {}}), {("q", "type")}),
    ("type widened", obj({"q": S}), obj({"q": {"type": ["string", "number"]}}), {("q", "type")}),
    ("integer to number", obj({"n": INT}), obj({"n": {"type": "number"}}), {("n", "type")}),
    (
        "enum superset",
        obj({"m": {"enum": ["a"]}}),
        obj({"m": {"enum": ["a", "b"]}}),
        {("m", "enum")},
    ),
    ("enum dropped", obj({"m": {"type": "string", "enum": ["a"]}}), obj({"m": S}), {("m", "enum")}),
    ("const dropped", obj({"m": {"const": 1}}), obj({"m": INT}), {("m", "const")}),
    ("required dropped", obj({"q": S}, required=["q"]), obj({"q": S}), {("q", "required")}),
    (
        "closed opened",
        obj({"q": S}, additionalProperties=False),
        obj({"q": S}),
        {("*", "additionalProperties")},
    ),
    (
        "property added to closed",
        obj({"q": S}, additionalProperties=False),
        obj({"q": S, "r": S}, additionalProperties=False),
        {("r", "additionalProperties")},
    ),
    ("optional property removed", obj({"q": S, "r": INT}), obj({"q": S}), {("r", "type")}),
    (
        "patternProperties on closed",
        obj({}, additionalProperties=False),
        obj({}, additionalProperties=False, patternProperties={"^x": S}),
        {("~^x", "patternProperties")},
    ),
    (
        "maximum raised",
        obj({"n": {**INT, "maximum": 5}}),
        obj({"n": {**INT, "maximum": 6}}),
        {("n", "maximum")},
    ),
    ("minimum dropped", obj({"n": {**INT, "minimum": 0}}), obj({"n": INT}), {("n", "minimum")}),
    (
        "exclusive to inclusive",
        obj({"n": {**INT, "exclusiveMinimum": 0}}),
        obj({"n": {**INT, "minimum": 0}}),
        {("n", "exclusiveMinimum")},
    ),
    (
        "draft-4 exclusive",
        obj({"n": {**INT, "minimum": 0, "exclusiveMinimum": True}}),
        obj({"n": {**INT, "minimum": 0}}),
        {("n", "exclusiveMinimum")},
    ),
    (
        "multipleOf coarser to finer",
        obj({"n": {**INT, "multipleOf": 4}}),
        obj({"n": {**INT, "multipleOf": 2}}),
        {("n", "multipleOf")},
    ),
    ("maxLength dropped", obj({"q": {**S, "maxLength": 9}}), obj({"q": S}), {("q", "maxLength")}),
    (
        "minLength lowered",
        obj({"q": {**S, "minLength": 2}}),
        obj({"q": {**S, "minLength": 1}}),
        {("q", "minLength")},
    ),
    ("pattern dropped", obj({"q": {**S, "pattern": "^a"}}), obj({"q": S}), {("q", "pattern")}),
    ("format dropped", obj({"q": {**S, "format": "uri"}}), obj({"q": S}), {("q", "format")}),
    (
        "items untyped",
        obj({"a": {"type": "array", "items": S}}),
        obj({"a": {"type": "array", "items": {}}}),
        {("a[]", "type")},
    ),
    (
        "tuple position",
        obj({"a": {"type": "array", "prefixItems": [S]}}),
        obj({"a": {"type": "array", "prefixItems": [{}]}}),
        {("a[0]", "type")},
    ),
    (
        "draft-4 tuple rest",
        obj({"a": {"type": "array", "items": [S], "additionalItems": False}}),
        obj({"a": {"type": "array", "items": [S]}}),
        {("a[]", "items")},
    ),
    (
        "maxItems dropped",
        obj({"a": {"type": "array", "maxItems": 2}}),
        obj({"a": {"type": "array"}}),
        {("a", "maxItems")},
    ),
    (
        "uniqueItems dropped",
        obj({"a": {"type": "array", "uniqueItems": True}}),
        obj({"a": {"type": "array"}}),
        {("a", "uniqueItems")},
    ),
    ("maxProperties dropped", obj({}, maxProperties=1), obj({}), {("", "maxProperties")}),
    (
        "anyOf branch added",
        obj({"q": {"anyOf": [S]}}),
        obj({"q": {"anyOf": [S, {"type": "null"}]}}),
        {("q", "type")},
    ),
    (
        "oneOf branch widened",
        obj({"q": {"oneOf": [S, INT]}}),
        obj({"q": {"oneOf": [S, {"type": "number"}]}}),
        {("q", "type")},
    ),
    (
        "allOf part dropped",
        obj({"q": {"allOf": [S, {"maxLength": 3}]}}),
        obj({"q": S}),
        {("q", "maxLength")},
    ),
    (
        "internal $ref target",
        {"$defs": {"v": {**S, "maxLength": 3}}, **obj({"q": {"$ref": "#/$defs/v"}})},
        {"$defs": {"v": S}, **obj({"q": {"$ref": "#/$defs/v"}})},
        {("q", "maxLength")},
    ),
    ("false opened", obj({"q": False}), obj({"q": S}), {("q", "additionalProperties")}),
    (
        "nested",
        obj({"f": obj({"name": S}, required=["name"])}),
        obj({"f": obj({"name": S})}),
        {("f.name", "required")},
    ),
]


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [case[1:] for case in LOOSENINGS],
    ids=[case[0] for case in LOOSENINGS],
)
def test_each_loosening_is_named_with_its_path_and_rule(
    before: Any, after: Any, expected: set[tuple[str, str]]
) -> None:
    assert loosened(before, after) == expected
    assert tightened(after, before) == expected
    assert loosened(after, before) == set()


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (obj({"q": S}), obj({"q": {"type": "string", "description": "new words", "title": "Q"}})),
        (
            obj({"a": S, "b": INT}, required=["a", "b"]),
            obj({"b": INT, "a": S}, required=["b", "a"]),
        ),
        (obj({"m": {"enum": ["a", "b"]}}), obj({"m": {"enum": ["b", "a"]}})),
        (obj({"n": {"type": "number"}}), obj({"n": {"anyOf": [INT, {"type": "number"}]}})),
        (obj({"q": S}), obj({"q": {"allOf": [S]}})),
        (obj({"q": {**S, "format": "made-up"}}), obj({"q": S})),  # not a format the replay asserts
        (obj({"q": {**S, "pattern": ".*"}}), obj({"q": S})),
    ],
)
def test_neutral_changes_neither_loosen_nor_tighten(before: Any, after: Any) -> None:
    diff = diff_snapshots(snap(("t", before)), snap(("t", after)))
    assert not diff.loosened and not diff.tightened and not diff.unknown


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (obj({"q": {**S, "pattern": "^a"}}), obj({"q": {**S, "pattern": "^b"}})),
        (obj({"q": {"$ref": "https://example.com/s.json"}}), obj({"q": S})),
        (obj({"q": {"not": INT}}), obj({"q": {"not": S}})),
        (obj({"q": {"if": S, "then": {"maxLength": 1}}}), obj({"q": {}})),
    ],
)
def test_undecided_is_unknown_and_loosened(before: Any, after: Any) -> None:
    diff = diff_snapshots(snap(("t", before)), snap(("t", after)))
    assert diff.unknown and all(change.rule == "undecided" for change in diff.unknown)
    assert {c.where() for c in diff.unknown} <= {
        c.where() for c in diff.loosened if c.rule == "undecided"
    }
    assert diff.failed


def test_a_finite_schema_is_checked_value_by_value() -> None:
    bounded = obj({"n": {**INT, "maximum": 3}})
    assert loosened(bounded, obj({"n": {"enum": [1, 5]}})) == {("n", "maximum")}
    assert loosened(bounded, obj({"n": {"enum": [1, 2]}})) == set()
    assert (
        loosened(
            obj({"n": {**INT, "minimum": 0, "maximum": 9}}), obj({"n": {"enum": list(range(10))}})
        )
        == set()
    )
    assert (
        loosened(
            obj({"n": {"enum": list(range(10))}}), obj({"n": {**INT, "minimum": 0, "maximum": 9}})
        )
        == set()
    )
    assert loosened(obj({"b": {"const": True}}), obj({"b": {"type": "boolean"}})) == {
        ("b", "const")
    }


def test_recursive_refs_terminate() -> None:
    tree = {
        "$defs": {"n": obj({"kids": {"type": "array", "items": {"$ref": "#/$defs/n"}}})},
        "$ref": "#/$defs/n",
    }
    assert containment_findings(tree, tree) == []
    looser = {
        "$defs": {"n": obj({"kids": {"type": "array", "items": {"$ref": "#/$defs/n"}}, "x": {}})},
        "$ref": "#/$defs/n",
    }
    assert containment_findings(looser, tree) == []
    closed = {
        "$defs": {
            "n": obj(
                {"kids": {"type": "array", "items": {"$ref": "#/$defs/n"}}},
                additionalProperties=False,
            )
        },
        "$ref": "#/$defs/n",
    }
    assert [(f.path, f.rule) for f in containment_findings(closed, tree)] == [
        ("*", "additionalProperties")
    ]


def test_tools_added_removed_and_freedom() -> None:
    before = snap(("a", obj({"q": S})), ("gone", obj({})))
    after = snap(("a", obj({"q": S})), ("new", obj({"q": S})))
    diff = diff_snapshots(before, after)
    assert [(c.ref, c.rule) for c in diff.added] == [("new", "tool")]
    assert [(c.ref, c.rule) for c in diff.removed] == [("gone", "tool")]
    assert not diff.loosened
    assert diff.to_json()["freedom"] == {"before": 2.75, "after": 3.5}
    assert diff.freedom_rose and diff.failed


def test_the_freedom_ratchet_alone_is_fooled() -> None:
    """The issue's first case: untyping a parameter lowers the v2 freedom yet loosens."""
    diff = diff_snapshots(snap(("s", obj({"query": S}))), snap(("s", obj({"query": {}}))))
    assert diff.freedom_after < diff.freedom_before
    assert [(c.path, c.rule, c.before, c.after) for c in diff.loosened] == [
        ("query", "type", "string", None)
    ]
    assert diff.failed


def test_accepted_loosenings_move_out_of_loosened() -> None:
    before = snap(("s", obj({"q": S, "n": INT}, required=["q"])))
    after = snap(("s", obj({"q": {"type": ["string", "null"]}, "n": INT})))
    assert len(diff_snapshots(before, after).loosened) == 2
    one = diff_snapshots(
        before, after, accepted=[AcceptedLoosening("s", "q", "type", "nullable now")]
    )
    assert [(c.path, c.rule) for c in one.loosened] == [("q", "required")]
    whole = diff_snapshots(before, after, accepted=[AcceptedLoosening("s", reason="redesign")])
    assert not whole.loosened and len(whole.accepted) == 2
    # Freedom rose only in the tool whose loosenings were all accepted: forgiven.
    assert not whole.failed


def test_accepted_entries_are_checked() -> None:
    assert accepted_from_value([{"ref": "s", "path": "q", "reason": "r"}]) == [
        AcceptedLoosening("s", "q", "", "r")
    ]
    with pytest.raises(EntropyInputError, match="no ref"):
        accepted_from_value([{"path": "q"}], source="b.json")
    with pytest.raises(EntropyInputError, match="must be a list"):
        accepted_from_value({"ref": "s"})


def test_duplicate_refs_are_an_input_error() -> None:
    with pytest.raises(EntropyInputError, match="'t' twice"):
        diff_snapshots(snap(("t", {}), ("t", {})), snap())
