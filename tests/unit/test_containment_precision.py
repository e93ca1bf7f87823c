"""Containment precision: bounds decided exactly on integers and in every spelling (issue 26
item 12), and loosenings inside ``anyOf``/``oneOf`` named with their full path and rule
(item 13). The schemas come from pydantic, as a tool author's server would emit them."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

import pytest

from pytest_entropy.core.surface_diff import SurfaceDiff, diff_snapshots

pydantic = pytest.importorskip("pydantic")
BaseModel, Field = pydantic.BaseModel, pydantic.Field

DRAFT4 = "http://json-schema.org/draft-04/schema#"


def _snap(schema: Any) -> dict[str, Any]:
    return {"version": 1, "actions": [{"ref": "t", "inputSchema": schema}]}


def _diff(before: Any, after: Any) -> SurfaceDiff:
    return diff_snapshots(_snap(before), _snap(after))


def _rows(changes: Any) -> set[tuple[str, str]]:
    return {(change.path, change.rule) for change in changes}


def _field_model(kind: type, **bounds: Any) -> dict[str, Any]:
    class Args(BaseModel):
        n: kind = Field(**bounds)  # type: ignore[valid-type]

    return Args.model_json_schema()


# -- item 12: bounds ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"ge": 1}, {"gt": 0}),
        ({"gt": 0}, {"ge": 1}),
        ({"le": 9}, {"lt": 10}),
        ({"ge": 1, "le": 9}, {"gt": 0, "lt": 10}),
        ({"gt": 0, "lt": 10}, {"ge": 1, "le": 9}),
    ],
)
def test_integer_bounds_that_accept_the_same_integers_are_no_change(
    old: dict[str, Any], new: dict[str, Any]
) -> None:
    before, after = _field_model(int, **old), _field_model(int, **new)
    diff = _diff(before, after)
    assert (diff.loosened, diff.tightened, diff.unknown) == ((), (), ())
    assert [change.rule for change in diff.neutral] == ["equivalent"]
    assert not diff.failed


def test_an_optional_integer_respelled_is_no_change_either() -> None:
    """``Optional[int] = Field(None, gt=0)``: the bound sits in an ``anyOf`` with null."""
    before = _field_model(Optional[int], default=None, ge=1)  # type: ignore[arg-type]  # noqa: UP045
    after = _field_model(Optional[int], default=None, gt=0)  # type: ignore[arg-type]  # noqa: UP045
    assert "anyOf" in after["properties"]["n"]
    for diff in (_diff(before, after), _diff(after, before)):
        assert (diff.loosened, diff.tightened, diff.unknown) == ((), (), ())
    wider = _diff(before, _field_model(Optional[int], default=None, ge=0))  # type: ignore[arg-type]  # noqa: UP045
    assert _rows(wider.loosened) == {("n", "minimum")}


def test_a_fractional_exclusive_bound_on_integers_is_the_next_integer() -> None:
    """``exclusiveMinimum: 0.5`` (pydantic refuses it on an int, a hand-written schema may
    say it) is ``minimum: 1`` among integers; ``exclusiveMaximum: 9.5`` is ``maximum: 9``."""

    def tool(**words: Any) -> dict[str, Any]:
        return {"type": "object", "properties": {"n": {"type": "integer", **words}}}

    pairs = [
        (tool(minimum=1), tool(exclusiveMinimum=0.5)),
        (tool(maximum=9), tool(exclusiveMaximum=9.5)),
        (tool(minimum=1, maximum=9), tool(exclusiveMinimum=0.5, exclusiveMaximum=9.5)),
    ]
    for old, new in pairs:
        for diff in (_diff(old, new), _diff(new, old)):
            assert (diff.loosened, diff.tightened, diff.unknown) == ((), (), ()), diff.to_json()


def test_on_floats_the_same_respelling_loosens_naming_keyword_and_path() -> None:
    diff = _diff(_field_model(float, ge=1), _field_model(float, gt=0))
    assert [(c.path, c.rule, c.before, c.after) for c in diff.loosened] == [
        ("n", "minimum", 1, {"exclusiveMinimum": 0})
    ]
    back = _diff(_field_model(float, gt=0), _field_model(float, ge=1))
    assert (back.loosened, _rows(back.tightened)) == ((), {("n", "minimum")})


def test_a_really_wider_integer_bound_still_loosens_and_a_narrower_tightens() -> None:
    wider = _diff(_field_model(int, ge=1), _field_model(int, gt=-1))
    assert _rows(wider.loosened) == {("n", "minimum")}
    narrower = _diff(_field_model(int, ge=1), _field_model(int, gt=1))
    assert not narrower.loosened
    assert _rows(narrower.tightened) == {("n", "exclusiveMinimum")}


def test_integer_bounds_move_onto_the_multiples_of_an_integer_step() -> None:
    def even(**bounds: Any) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"n": {"type": "integer", "multipleOf": 2, **bounds}},
        }

    # The even integers >= 1 are the even integers >= 2 (and those > 0).
    for old, new in (
        (even(minimum=1), even(minimum=2)),
        (even(minimum=2), even(exclusiveMinimum=0)),
    ):
        assert not _diff(old, new).loosened and not _diff(new, old).loosened
    assert _rows(_diff(even(minimum=2), even(minimum=0)).loosened) == {("n", "minimum")}


def test_the_draft_4_boolean_form_holds_under_every_reading() -> None:
    def tool(**words: Any) -> dict[str, Any]:
        return {
            "$schema": DRAFT4,
            "type": "object",
            "properties": {"n": {"type": "integer", **words}},
        }

    strict_zero = tool(minimum=0, exclusiveMinimum=True)
    # Draft 4 reads it as > 0, that is >= 1 on integers; a validator of a later draft (TypeBox)
    # ignores the boolean and reads >= 0. So >= 1 fits inside it under both readings ...
    assert not _diff(strict_zero, tool(minimum=1)).loosened
    # ... but it does not fit inside >= 1 under the later reading: a loosening, named.
    assert _rows(_diff(tool(minimum=1), strict_zero).loosened) == {("n", "minimum")}


# -- item 13: inside anyOf / oneOf ----------------------------------------------------------


def _optional_model(modes: tuple[str, ...], size_default: int | None) -> dict[str, Any]:
    """``opt: Optional[Inner]``: pydantic writes ``anyOf: [{$ref: Inner}, {type: null}]``."""
    if size_default is None:

        class Inner(BaseModel):
            mode: Literal[modes]  # type: ignore[valid-type]
            size: int

    else:

        class Inner(BaseModel):  # type: ignore[no-redef]
            mode: Literal[modes]  # type: ignore[valid-type]
            size: int = size_default

    class Args(BaseModel):
        opt: Optional[Inner] = None  # noqa: UP045 - the spelling a server author writes

    return Args.model_json_schema()


def test_an_enum_widened_in_an_optional_model_loosens_at_its_full_path() -> None:
    before = _optional_model(("a", "b"), None)
    after = _optional_model(("a", "b", "c"), None)
    # The text around the $ref is identical: only the definition behind it changed.
    assert before["properties"] == after["properties"]
    diff = _diff(before, after)
    assert [(c.path, c.rule, c.after) for c in diff.loosened] == [("opt.mode", "enum", "c")]
    assert not diff.unknown and not diff.neutral
    back = _diff(after, before)
    assert not back.loosened
    assert _rows(back.tightened) == {("opt.mode", "enum")}


def test_a_required_key_that_gained_a_default_loosens_at_its_full_path() -> None:
    diff = _diff(_optional_model(("a",), None), _optional_model(("a",), 3))
    assert _rows(diff.loosened) == {("opt.size", "required")}
    assert not diff.unknown


def _pets(max_lives: int, modes: tuple[str, ...] = ("a",)) -> dict[str, Any]:
    class Cat(BaseModel):
        kind: Literal["cat"]
        lives: int = Field(ge=1, le=max_lives)

    class Dog(BaseModel):
        kind: Literal["dog"]
        bark: str

    class A(BaseModel):
        x: int

    class B(BaseModel):
        y: Literal[modes]  # type: ignore[valid-type]

    class Args(BaseModel):
        pet: Annotated[Union[Cat, Dog], Field(discriminator="kind")]  # noqa: UP007
        any_pet: Union[Cat, Dog]  # noqa: UP007
        ab: Union[A, B]  # noqa: UP007

    return Args.model_json_schema()


def test_discriminated_unions_pick_the_branch_by_its_tag() -> None:
    """A ``oneOf`` (with OpenAPI's ``discriminator``) and an ``anyOf`` of tagged models: the
    branch whose ``const`` tag matches is the only one that can take the value."""
    diff = _diff(_pets(9), _pets(10))
    assert _rows(diff.loosened) == {("pet.lives", "maximum"), ("any_pet.lives", "maximum")}
    assert not diff.unknown
    back = _diff(_pets(10), _pets(9))
    assert not back.loosened
    assert _rows(back.tightened) == {("pet.lives", "maximum"), ("any_pet.lives", "maximum")}


def test_undecided_inside_a_union_says_where_and_why() -> None:
    """Untagged models of one type: another branch may still take the value, so undecided,
    but with the path, the rule and the branch."""
    diff = _diff(_pets(9, ("a",)), _pets(9, ("a", "b")))
    assert [(c.path, c.rule) for c in diff.unknown] == [("ab.y", "undecided")]
    (change,) = diff.unknown
    assert "const" in change.reason and "#/$defs/B" in change.reason
    assert change.to_json()["reason"] == change.reason
    assert change.text().startswith("t:ab.y: undecided: const refuses it in the branch")
    assert diff.failed  # undecided stays pessimistic


def test_every_undecided_finding_has_a_reason() -> None:
    cases = [
        ({"pattern": "^a"}, {"pattern": "^b"}),
        ({"$ref": "https://example.com/s.json"}, {"type": "string"}),
        ({"not": {"type": "integer"}}, {"not": {"type": "string"}}),
        ({"oneOf": [{"type": "string"}, {"maxLength": 3}]}, {"type": "string"}),
    ]
    for before, after in cases:
        diff = _diff(
            {"type": "object", "properties": {"q": before}},
            {"type": "object", "properties": {"q": after}},
        )
        assert diff.unknown, (before, after)
        for change in diff.unknown:
            assert change.path == "q" and change.reason, change.to_json()


def test_decided_rows_keep_their_json_shape() -> None:
    """``reason`` is added only where there is one: a decided row is as before."""
    diff = _diff(_optional_model(("a", "b"), None), _optional_model(("a", "b", "c"), None))
    assert [c.to_json() for c in diff.loosened] == [
        {"ref": "t", "path": "opt.mode", "rule": "enum", "before": ["a", "b"], "after": "c"}
    ]


def test_a_new_tag_in_a_discriminated_union_loosens_at_the_tag() -> None:
    class Cat(BaseModel):
        kind: Literal["cat"]

    class Dog(BaseModel):
        kind: Literal["dog"]

    class Bird(BaseModel):
        kind: Literal["bird"]

    class Old(BaseModel):
        pet: Annotated[Union[Cat, Dog], Field(discriminator="kind")]  # noqa: UP007

    class New(BaseModel):
        pet: Annotated[Union[Cat, Dog, Bird], Field(discriminator="kind")]  # noqa: UP007

    before, after = Old.model_json_schema(), New.model_json_schema()
    diff = _diff(before, after)
    assert [(c.path, c.rule, c.before, c.after) for c in diff.loosened] == [
        ("pet.kind", "const", ["cat", "dog"], "bird")
    ]
    back = _diff(after, before)
    assert not back.loosened and _rows(back.tightened) == {("pet.kind", "const")}


def test_the_ratchet_and_the_assertion_fail_on_a_loosening_inside_an_optional_model(
    tmp_path: Any,
) -> None:
    from pytest_entropy.testing.assertions import assert_no_entropy_increase
    from pytest_entropy.testing.ratchet import check_baseline

    def tools(schema: dict[str, Any]) -> dict[str, Any]:
        return {"tools": [{"name": "tool", "inputSchema": schema}]}

    before = tools(_optional_model(("a", "b"), None))
    after = tools(_optional_model(("a", "b", "c"), None))
    path = tmp_path / "entropy-baseline.json"
    assert check_baseline(path, "s", before).status == "created"
    result = check_baseline(path, "s", after, ci=True)
    assert not result.passed
    assert '  loosened: tool:opt.mode: enum (["a","b"] → "c")' in result.message()
    with pytest.raises(AssertionError, match=r"tool:opt\.mode: enum"):
        assert_no_entropy_increase(before, after)
    # Integer bounds respelled are no change for the ratchet either.
    same = tmp_path / "same.json"
    check_baseline(same, "s", tools(_field_model(int, ge=1)))
    assert check_baseline(same, "s", tools(_field_model(int, gt=0)), ci=True).passed
    assert_no_entropy_increase(tools(_field_model(int, ge=1)), tools(_field_model(int, gt=0)))


def test_a_finite_schema_is_decided_by_the_replay_through_pointers_anywhere_in_the_root() -> None:
    """Values are checked with ``validation.accepts`` on a document of their own; a pointer
    into the root's ``properties`` (zod-to-json-schema's spelling) still reaches its target."""
    shared = {"a": {"type": "string", "enum": ["x", "y"]}}
    old = {
        "type": "object",
        "properties": {
            **shared,
            "q": {"type": "object", "properties": {"m": {"$ref": "#/properties/a"}}},
        },
    }

    def new(*values: str) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {**shared, "q": {"enum": [{"m": value} for value in values]}},
        }

    assert [(c.path, c.rule, c.after) for c in _diff(old, new("x", "z")).loosened] == [
        ("q.m", "enum", {"m": "z"})
    ]
    assert not _diff(old, new("x", "y")).loosened


def test_a_small_integer_range_in_any_spelling_is_compared_value_by_value() -> None:
    def tool(sub: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": {"n": sub}}

    ranged = tool({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 4})
    listed = tool({"enum": [1, 2, 3]})
    for old, new in ((ranged, listed), (listed, ranged)):
        diff = _diff(old, new)
        assert (diff.loosened, diff.tightened, diff.unknown) == ((), (), ()), diff.to_json()
    assert [(c.path, c.rule, c.after) for c in _diff(tool({"enum": [1, 2]}), ranged).loosened] == [
        ("n", "enum", 3)
    ]


def test_numbers_that_meet_no_bound_or_one_integer_loosen_nothing() -> None:
    def tool(sub: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": {"n": sub}}

    old = tool({"type": "integer", "minimum": 2, "multipleOf": 5})
    # A number pinned to 5 is the integer 5, a multiple of 5; bounds no number meets, nothing.
    for new in (
        tool({"type": "number", "minimum": 5, "maximum": 5}),
        tool({"type": "number", "minimum": 5, "exclusiveMaximum": 5}),
        tool({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 1}),
    ):
        assert not _diff(old, new).loosened, new
    assert _rows(_diff(old, tool({"type": "number", "minimum": 5, "maximum": 6})).loosened) == {
        ("n", "type"),
        ("n", "multipleOf"),
    }


def test_a_union_branch_that_now_accepts_nothing_is_no_loosening() -> None:
    # Found by test_ratchet_properties: requiring a property whose enum is empty leaves the
    # object branch accepting nothing, which fits any union; the reverse is a loosening.
    branch = {"type": "object", "properties": {"path": {"enum": []}}}
    before = {"anyOf": [{"type": "string"}, {**branch, "required": []}]}
    after = {"anyOf": [{"type": "string"}, {**branch, "required": ["path"]}]}
    assert not _diff(before, after).loosened
    assert _diff(after, before).loosened
