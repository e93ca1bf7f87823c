"""One compile's digests (``core/compile_digests.py``) equal the specification's: surfaces
assembled from their schemas' texts hash as ``stable_json_hash`` of the whole (hostile
surfaces included: repeated, shared and missing schemas, extra keys, refs that are not str,
astral and lone-surrogate text, huge ints, floats, deep nesting, values with no JSON form),
the shared rewrite equals the copying one and leaves its input untouched, and the touched
refs are ``touched_refs``'s. (The compile vectors' bytes are checked in
``tests/unit/test_compiler_vectors.py``.)"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_entropy.core.canonical import CanonicalError, canonical_json, stable_json_hash
from pytest_entropy.core.compile_digests import CompileDigests
from pytest_entropy.core.compiler import touched_refs
from pytest_entropy.core.gate import apply_proposals_shared, apply_proposals_to_surface
from tests.vectors import cases_of

_text = st.one_of(
    st.sampled_from(["a", "b", "ref", "inputSchema", "version", "\U0001f600", "\ud800", "é", ""]),
    st.text(max_size=4),
)
_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    _text,
)
_json = st.recursive(
    _leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_text, inner, max_size=3)),
    max_leaves=12,
)
_schema = st.one_of(
    _json,
    st.dictionaries(
        st.sampled_from(["type", "properties", "enum"]),
        st.one_of(_json, st.dictionaries(_text, st.dictionaries(_text, _json, max_size=2))),
        max_size=3,
    ),
)
_refs = st.sampled_from(["a", "b", "c", "é", "\U0001f600", "a.b"])


@st.composite
def surfaces(draw: st.DrawFn) -> dict[str, Any]:
    actions: list[Any] = []
    shared = draw(_schema)
    for _ in range(draw(st.integers(0, 5))):
        action: dict[str, Any] = {"ref": draw(_refs)}
        choice = draw(st.integers(0, 9))
        if choice == 0:
            pass  # no inputSchema
        elif choice == 1:
            action["inputSchema"] = shared  # one object in several actions
        else:
            action["inputSchema"] = draw(_schema)
        if draw(st.integers(0, 9)) == 0:
            action["description"] = draw(_text)  # an extra key: hashed whole
        actions.append(action)
    surface: dict[str, Any] = {"version": draw(st.sampled_from([1, 2, "1"])), "actions": actions}
    if draw(st.integers(0, 9)) == 0:
        surface["extra"] = draw(_json)
    return surface


@st.composite
def proposals(draw: st.DrawFn, surface: dict[str, Any]) -> list[dict[str, Any]]:
    refs = [action["ref"] for action in surface["actions"]] or ["a"]
    out = []
    for _ in range(draw(st.integers(0, 4))):
        ref = draw(st.sampled_from(refs))
        if draw(st.booleans()):
            out.append({"kind": "noise-quarantine", "ref": ref})
        else:
            key = draw(st.one_of(_text, st.sampled_from(["a", "b"])))
            values = draw(st.lists(_leaf, max_size=3))
            out.append({"kind": "enum-tighten", "ref": ref, "key": key, "values": values})
    return out


def _hash_or_error(function: Any, value: Any) -> str:
    try:
        return str(function(value))
    except CanonicalError as error:
        return f"error: {error}"


@settings(max_examples=200, deadline=None)
@given(surfaces())
def test_an_assembled_surface_hashes_as_the_whole(surface: dict[str, Any]) -> None:
    digests = CompileDigests()
    expected = _hash_or_error(stable_json_hash, surface)
    assert _hash_or_error(digests.surface_hash, surface) == expected
    assert _hash_or_error(digests.surface_hash, surface) == expected  # memoised
    for action in surface["actions"]:
        schema = action.get("inputSchema")
        assert _hash_or_error(digests.value_hash, schema) == _hash_or_error(
            stable_json_hash, schema
        )


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_the_shared_rewrite_equals_the_copying_one(data: st.DataObject) -> None:
    surface = data.draw(surfaces())
    chosen = data.draw(proposals(surface))
    before = copy.deepcopy(surface)
    copied = apply_proposals_to_surface(surface, chosen)
    shared = apply_proposals_shared(surface, chosen)
    assert shared == copied
    assert canonical_json(shared) == canonical_json(copied)
    assert surface == before  # the input is untouched
    assert canonical_json(surface) == canonical_json(before)
    digests = CompileDigests()
    assert _hash_or_error(digests.surface_hash, shared) == _hash_or_error(stable_json_hash, copied)
    try:
        expected = touched_refs(copied, surface)
    except CanonicalError:
        return
    assert digests.touched(shared, surface) == expected


@settings(max_examples=100, deadline=None)
@given(surfaces(), surfaces())
def test_the_touched_refs_of_any_two_surfaces(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    try:
        expected = touched_refs(first, second)
    except CanonicalError:
        return
    assert CompileDigests().touched(first, second) == expected


def test_a_cycle_through_a_schema_fails_as_the_whole_does() -> None:
    schema: dict[str, Any] = {"type": "object"}
    surface = {"version": 1, "actions": [{"ref": "a", "inputSchema": schema}]}
    schema["self"] = surface  # the surface inside its own schema
    with pytest.raises(CanonicalError) as whole:
        stable_json_hash(surface)
    with pytest.raises(CanonicalError) as assembled:
        CompileDigests().surface_hash(surface)
    assert str(assembled.value) == str(whole.value)


def test_the_vectors_reach_every_outcome() -> None:
    statuses = {
        case["expected"]["outcome"]["status"]
        for case in cases_of("compiler", "compileEntropySurface", key="kind")
    }
    assert statuses == {"compiled", "converged", "rejected"}
