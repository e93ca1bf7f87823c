"""Properties of schema containment: reflexive, enum supersets loosen, transitive on chains."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_entropy.core.surface_diff import diff_snapshots

_PATTERNS = ("^[a-z]+$", "^[0-9]{3}$")
_FORMATS = ("uri", "date", "email")


def _snap(schema: Any) -> dict[str, Any]:
    return {"version": 1, "actions": [{"ref": "tool", "inputSchema": schema}]}


def _loosened(before: Any, after: Any) -> list[Any]:
    return list(diff_snapshots(_snap(before), _snap(after)).loosened)


@st.composite
def _parameter(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["string", "integer", "enum", "boolean", "array", "union"]))
    if kind == "string":
        out: dict[str, Any] = {"type": "string"}
        if draw(st.booleans()):
            out["maxLength"] = draw(st.integers(1, 50))
        if draw(st.booleans()):
            out["minLength"] = draw(st.integers(0, 3))
        if draw(st.booleans()):
            out["pattern"] = draw(st.sampled_from(_PATTERNS))
        if draw(st.booleans()):
            out["format"] = draw(st.sampled_from(_FORMATS))
        return out
    if kind == "integer":
        out = {"type": "integer"}
        if draw(st.booleans()):
            out["minimum"] = draw(st.integers(-5, 5))
        if draw(st.booleans()):
            out["maximum"] = draw(st.integers(6, 600))
        return out
    if kind == "enum":
        return {
            "type": "string",
            "enum": draw(st.lists(st.sampled_from("abcdef"), min_size=1, max_size=4, unique=True)),
        }
    if kind == "boolean":
        return {"type": "boolean"}
    if kind == "array":
        out = {"type": "array", "items": {"type": draw(st.sampled_from(["string", "integer"]))}}
        if draw(st.booleans()):
            out["maxItems"] = draw(st.integers(1, 9))
        return out
    return {
        "type": draw(
            st.lists(
                st.sampled_from(["string", "integer", "null"]), min_size=1, max_size=3, unique=True
            )
        )
    }


@st.composite
def schemas(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(
        st.lists(
            st.sampled_from(["q", "n", "mode", "tags", "flag"]), min_size=1, max_size=4, unique=True
        )
    )
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {n: draw(_parameter()) for n in names},
    }
    required = draw(st.lists(st.sampled_from(names), unique=True))
    if required:
        schema["required"] = required
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    return schema


def _edit(schema: dict[str, Any], op: str, name: str, value: int) -> dict[str, Any]:
    """One random edit, tightening or loosening, on the parameter ``name`` (if present)."""
    out = copy.deepcopy(schema)
    props = out["properties"]
    sub = props.get(name)
    if op == "require" and name in props:
        out["required"] = sorted({*out.get("required", []), name})
    elif op == "unrequire":
        out["required"] = [n for n in out.get("required", []) if n != name]
    elif op == "close":
        out["additionalProperties"] = False
    elif op == "open":
        out.pop("additionalProperties", None)
    elif op == "drop" and sub is not None:
        del props[name]
        out["required"] = [n for n in out.get("required", []) if n != name]
    elif op == "add":
        props[name] = {"type": "string", "maxLength": value + 1}
    elif sub is not None and op == "bound":
        key = (
            "maxLength"
            if sub.get("type") == "string"
            else "maximum"
            if sub.get("type") == "integer"
            else "maxItems"
        )
        sub[key] = value
    elif sub is not None and op == "unbound":
        for key in ("maxLength", "maximum", "maxItems", "minimum", "minLength"):
            sub.pop(key, None)
    elif sub is not None and op == "untype":
        sub.pop("type", None)
    elif sub is not None and op == "enum-drop" and len(sub.get("enum", [])) > 1:
        sub["enum"] = sub["enum"][1:]
    elif sub is not None and op == "enum-add" and "enum" in sub:
        sub["enum"] = [*sub["enum"], f"v{value}"]
    elif sub is not None and op == "pattern":
        sub["pattern"] = _PATTERNS[value % 2]
    return out


_EDITS = st.tuples(
    st.sampled_from(
        [
            "require",
            "unrequire",
            "close",
            "open",
            "drop",
            "add",
            "bound",
            "unbound",
            "untype",
            "enum-drop",
            "enum-add",
            "pattern",
        ]
    ),
    st.sampled_from(["q", "n", "mode", "tags", "flag"]),
    st.integers(0, 40),
)


@given(schemas())
def test_a_schema_never_loosens_against_itself(schema: dict[str, Any]) -> None:
    assert _loosened(schema, copy.deepcopy(schema)) == []
    # Also through combinators, which the equality shortcut does not see.
    assert _loosened(schema, {"allOf": [copy.deepcopy(schema)]}) == []
    assert _loosened(schema, {"anyOf": [schema, copy.deepcopy(schema)]}) == []
    assert _loosened({"$defs": {"s": schema}, "$ref": "#/$defs/s"}, schema) == []


@given(
    st.lists(
        st.one_of(st.text(max_size=4), st.integers(-9, 9), st.booleans(), st.none()),
        min_size=1,
        max_size=5,
        unique_by=repr,
    ),
    st.lists(st.text(min_size=5, max_size=8), min_size=1, max_size=3, unique=True),
)
def test_a_superset_of_enum_values_always_loosens(base: list[Any], extra: list[str]) -> None:
    before = {"type": "object", "properties": {"v": {"enum": base}}}
    after = {"type": "object", "properties": {"v": {"enum": [*base, *extra]}}}
    found = _loosened(before, after)
    assert [(change.path, change.rule) for change in found] == [("v", "enum")]
    assert _loosened(after, before) == []


@given(schemas(), st.lists(_EDITS, min_size=2, max_size=6))
def test_not_loosening_is_transitive_on_edit_chains(
    schema: dict[str, Any], edits: list[Any]
) -> None:
    chain = [schema]
    for op, name, value in edits:
        chain.append(_edit(chain[-1], op, name, value))
    for start in range(len(chain)):
        for end in range(start + 2, len(chain)):
            if not _loosened(chain[start], chain[end - 1]) and not _loosened(
                chain[end - 1], chain[end]
            ):
                assert not _loosened(chain[start], chain[end]), (
                    chain[start],
                    chain[end - 1],
                    chain[end],
                )


@given(schemas(), _EDITS)
def test_an_edit_and_its_reverse_are_consistent(schema: dict[str, Any], edit: Any) -> None:
    """A decided loosening one way is a decided tightening the other way."""
    changed = _edit(schema, *edit)
    forward = diff_snapshots(_snap(schema), _snap(changed))
    back = diff_snapshots(_snap(changed), _snap(schema))
    decided = {(c.path, c.rule) for c in forward.loosened if c.rule != "undecided"}
    assert decided == {(c.path, c.rule) for c in back.tightened}
