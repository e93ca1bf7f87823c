"""Containment against the replay's validator: a diff that finds no loosening means no value
the new schema accepts is refused by the old.

Pairs of schemas with integer and exclusive bounds (every spelling: ``minimum``,
``exclusiveMinimum`` as a number, draft 4's boolean form under a draft-04 ``$schema``,
``multipleOf``), placed in the shapes tools use: a plain property, ``Optional`` as
``anyOf [X, null]``, a model behind a ``$ref`` inside an ``anyOf``, a ``oneOf`` with a
string, a discriminated ``oneOf`` of two models. Values around every bound (integers, halves,
near misses) are sampled; the oracle is :func:`pytest_entropy.core.validation.accepts`.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_entropy.core.surface_diff import diff_snapshots
from pytest_entropy.core.validation import accepts

DRAFT4 = "http://json-schema.org/draft-04/schema#"
_EDGES = [Fraction(n, 2) for n in range(-6, 13)]  # -3 .. 6 in halves
SAMPLES: list[Any] = sorted(
    {
        *range(-12, 13),
        *(float(edge) for edge in _EDGES),
        *(float(edge) + offset for edge in _EDGES for offset in (-1e-6, 1e-6, 0.25)),
    },
    key=float,
)
SHAPES = ("plain", "optional", "model", "with-string", "tagged", "described-ref", "list", "deep")


def _snap(schema: Any) -> dict[str, Any]:
    return {"version": 1, "actions": [{"ref": "tool", "inputSchema": schema}]}


@st.composite
def _numbers(draw: st.DrawFn, draft4: bool) -> dict[str, Any]:
    """A number or integer schema with bounds in any spelling the root's draft allows."""
    out: dict[str, Any] = {"type": draw(st.sampled_from(["integer", "number"]))}
    value = st.sampled_from(_EDGES).map(lambda f: int(f) if f.denominator == 1 else float(f))
    for plain, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        spelling = draw(st.sampled_from(["none", "plain", "exclusive", "both", "flag"]))
        if spelling in ("plain", "both", "flag"):
            out[plain] = draw(value)
        if spelling in ("exclusive", "both"):
            out[exclusive] = draw(value)
        if spelling == "flag" and draft4:
            out[exclusive] = draw(st.booleans())
    if draw(st.integers(0, 4)) == 0:
        out["multipleOf"] = draw(st.sampled_from([2, 3]))
    return out


def _tag(draft4: bool, value: str) -> dict[str, Any]:
    # Draft 4 has no const: its single-value spelling is an enum.
    return {"enum": [value]} if draft4 else {"const": value}


def _model(value: dict[str, Any], draft4: bool, tag: str | None = None) -> dict[str, Any]:
    props: dict[str, Any] = {"v": value}
    required = ["v"]
    if tag is not None:
        props["kind"] = {"type": "string", **_tag(draft4, tag)}
        required.append("kind")
    return {"type": "object", "properties": props, "required": required}


def _tool(shape: str, value: dict[str, Any], other: dict[str, Any], draft4: bool) -> Any:
    """The tool schema with the parameter ``v`` in ``shape``; ``other`` is the second
    branch's number schema where the shape has two."""
    defs: dict[str, Any] = {}
    if shape == "plain":
        param: dict[str, Any] = value
    elif shape == "optional":
        param = {"anyOf": [value, {"type": "null"}], "default": None}
    elif shape == "model":
        defs["M"] = _model(value, draft4)
        param = {"anyOf": [{"$ref": "#/$defs/M"}, {"type": "null"}], "default": None}
    elif shape == "described-ref":
        # pydantic 1's spelling of a described model field: ``allOf`` around the ``$ref``.
        defs["M"] = _model(value, draft4)
        param = {"allOf": [{"$ref": "#/$defs/M"}], "description": "the model"}
    elif shape == "list":
        param = {"type": "array", "items": {"anyOf": [value, {"type": "null"}]}}
    elif shape == "deep":
        # An optional model inside an optional model.
        defs["M"] = _model(value, draft4)
        defs["N"] = {
            "type": "object",
            "properties": {"v": {"anyOf": [{"$ref": "#/$defs/M"}, {"type": "null"}]}},
            "required": ["v"],
        }
        param = {"anyOf": [{"$ref": "#/$defs/N"}, {"type": "null"}]}
    elif shape == "with-string":
        param = {"oneOf": [value, {"type": "string"}]}
    else:
        defs["A"] = _model(value, draft4, "a")
        defs["B"] = _model(other, draft4, "b")
        param = {"oneOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]}
    tool: dict[str, Any] = {"type": "object", "properties": {"v": param}, "required": ["v"]}
    if defs:
        tool["$defs"] = defs
    if draft4:
        tool["$schema"] = DRAFT4
    return tool


def _calls(shape: str) -> list[Any]:
    if shape in ("model", "described-ref"):
        return [{"v": {"v": x}} for x in SAMPLES] + [{"v": None}]
    if shape == "list":
        return [{"v": [x]} for x in SAMPLES] + [{"v": [None, 1]}, {"v": ["text"]}]
    if shape == "deep":
        return [{"v": {"v": {"v": x}}} for x in SAMPLES] + [{"v": {"v": None}}, {"v": None}]
    if shape == "tagged":
        return [{"v": {"kind": kind, "v": x}} for kind in "ab" for x in SAMPLES]
    extra = [{"v": None}, {"v": "text"}]
    return [{"v": x} for x in SAMPLES] + extra


@st.composite
def _pairs(draw: st.DrawFn) -> tuple[Any, Any, str]:
    draft4 = draw(st.booleans())
    shape = draw(st.sampled_from(SHAPES))
    numbers = _numbers(draft4)
    old = _tool(shape, draw(numbers), draw(numbers), draft4)
    new = _tool(shape, draw(numbers), draw(numbers), draft4)
    return old, new, shape


def _refused_then_accepted(old: Any, new: Any, shape: str) -> list[Any]:
    return [call for call in _calls(shape) if accepts(new, call) and not accepts(old, call)]


@settings(max_examples=400, deadline=None)
@given(_pairs())
def test_no_loosening_found_means_none_exists(pair: tuple[Any, Any, str]) -> None:
    old, new, shape = pair
    diff = diff_snapshots(_snap(old), _snap(new))
    if not diff.loosened:
        assert _refused_then_accepted(old, new, shape) == [], (old, new)
    # A decided tightening names a value the old accepted and the new refuses: the same
    # soundness the other way round.
    back = diff_snapshots(_snap(new), _snap(old))
    if not back.loosened:
        assert _refused_then_accepted(new, old, shape) == [], (new, old)


@st.composite
def _plain_pairs(draw: st.DrawFn) -> tuple[Any, Any, str]:
    """Pairs without draft 4: one reading of every bound, the validator's."""
    shape = draw(st.sampled_from(SHAPES))
    numbers = _numbers(False)
    old = _tool(shape, draw(numbers), draw(numbers), False)
    new = _tool(shape, draw(numbers), draw(numbers), False)
    return old, new, shape


@settings(max_examples=300, deadline=None)
@given(_plain_pairs())
def test_a_decided_loosening_has_a_witness(pair: tuple[Any, Any, str]) -> None:
    """Exactness the other way: every decided loosening of these bounds is a real value (the
    samples hold one on each side of every bound the strategy can write)."""
    old, new, shape = pair
    # A float multiple of 2 is an integer for python-jsonschema, but TypeBox forgives 1e-10
    # (2 + 1e-11 passes): whether `number` + `multipleOf` loosens an `integer` depends on
    # the validator, so no sample can be the witness for both.
    assume('"multipleOf"' not in json.dumps(new) or '"number"' not in json.dumps(new))
    diff = diff_snapshots(_snap(old), _snap(new))
    if any(change.rule != "undecided" for change in diff.loosened):
        assert _refused_then_accepted(old, new, shape), (old, new, diff.to_json()["loosened"])


@settings(max_examples=200, deadline=None)
@given(
    st.integers(-4, 4),
    st.sampled_from(SHAPES),
    st.sampled_from(["ge", "gt", "gt-half"]),
    st.sampled_from(["ge", "gt", "gt-half"]),
)
def test_integer_bounds_in_any_spelling_are_the_same_bound(
    k: int, shape: str, old_spelling: str, new_spelling: str
) -> None:
    """``ge=k``, ``gt=k-1`` and ``gt=k-0.5`` accept the same integers: never a change."""

    def spelled(how: str) -> dict[str, Any]:
        if how == "ge":
            return {"type": "integer", "minimum": k}
        if how == "gt":
            return {"type": "integer", "exclusiveMinimum": k - 1}
        return {"type": "integer", "exclusiveMinimum": k - 0.5}

    def upper(how: str) -> dict[str, Any]:
        words = spelled(how)
        return {
            "type": "integer",
            **{
                word.replace("inimum", "aximum").replace("Min", "Max"): -value
                for word, value in words.items()
                if word != "type"
            },
        }

    for side in (spelled, upper):
        old = _tool(shape, side(old_spelling), side(old_spelling), False)
        new = _tool(shape, side(new_spelling), copy.deepcopy(side(new_spelling)), False)
        diff = diff_snapshots(_snap(old), _snap(new))
        assert not diff.loosened and not diff.tightened and not diff.unknown, diff.to_json()
        assert _refused_then_accepted(old, new, shape) == []
