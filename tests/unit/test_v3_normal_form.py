"""Normal-form plans of metric v3: the upstream's asserted values (notes CV-32 and the
normal-form checks of CV-30; tests/entropy-normal-form.test.ts @ monotykamary a76ea93)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from pytest_entropy.core.canonical import stable_json_hash
from pytest_entropy.core.v3.normal_form import (
    MAX_NORMAL_FORM_PLANS,
    MAX_NORMAL_FORM_RULES,
    NORMAL_FORM_VERSION,
    NormalFormResult,
    apply_normal_form_plan,
    derive_normal_form_plan,
    is_normal_form_plan,
    is_normal_form_witness,
    normal_form_evidence_summary,
    proves_normal_form_plan,
    spelling_form,
    unique_forms,
)

REF = "demo.render"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["outputFormat", "pageCount"],
    "properties": {
        "outputFormat": {"type": "string", "enum": ["pdf", "html", "docx", "plainText"]},
        "pageCount": {"type": "integer", "minimum": 1, "maximum": 100},
        "note": {"type": "string"},
        "nullable": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
}
PLAN = derive_normal_form_plan(REF, SCHEMA)


def _plan() -> dict[str, Any]:
    assert PLAN is not None
    return copy.deepcopy(dict(PLAN))


def apply(args: dict[str, Any]) -> NormalFormResult:
    return apply_normal_form_plan(REF, SCHEMA, args, PLAN)


def _rule(kind: str, key: str) -> dict[str, str]:
    return {"kind": kind, "key": key}


def test_constants_and_deterministic_bounded_plan() -> None:
    assert (NORMAL_FORM_VERSION, MAX_NORMAL_FORM_RULES, MAX_NORMAL_FORM_PLANS) == (1, 128, 1000)
    assert derive_normal_form_plan(REF, json.loads(json.dumps(SCHEMA))) == PLAN
    assert is_normal_form_plan(PLAN)
    assert proves_normal_form_plan(PLAN, SCHEMA)
    plan = _plan()
    assert {rule["kind"] for rule in plan["rules"]} == {
        "key-form",
        "enum-form",
        "numeric-string",
        "optional-null",
    }
    # The exact order (keys in code units; per key: key-form, optional-null, numeric, enum).
    assert plan["rules"] == [
        _rule("key-form", "note"),
        _rule("optional-null", "note"),
        _rule("key-form", "nullable"),
        _rule("key-form", "outputFormat"),
        _rule("enum-form", "outputFormat"),
        _rule("key-form", "pageCount"),
        _rule("numeric-string", "pageCount"),
    ]
    assert plan["baseSchemaDigest"] == stable_json_hash(SCHEMA)
    assert list(plan) == ["version", "ref", "baseSchemaDigest", "rules"]


UNSUPPORTED: list[Any] = [
    None,
    {},
    {**SCHEMA, "additionalProperties": True},
    *(
        {**SCHEMA, key: []}
        for key in ("oneOf", "anyOf", "allOf", "$ref", "if", "not", "patternProperties")
    ),
]


@pytest.mark.parametrize("schema", UNSUPPORTED)
def test_unsupported_schemas_get_no_plan(schema: Any) -> None:
    assert derive_normal_form_plan(REF, schema) is None


def test_every_canonical_enum_member_is_kept_by_identity() -> None:
    for member in SCHEMA["properties"]["outputFormat"]["enum"]:
        args = {"outputFormat": member, "pageCount": 1, "nullable": None}
        result = apply(args)
        assert result.args is args
        assert result.witness is None


def test_rules_compose_without_mutating_input_and_are_idempotent() -> None:
    args = {"OUTPUT-FORMAT": "PLAIN_TEXT", "page count": "2", "note": None, "nullable": None}
    before = copy.deepcopy(args)
    result = apply(args)
    assert args == before
    assert result.args == {"outputFormat": "plainText", "pageCount": 2, "nullable": None}
    assert type(result.args["pageCount"]) is int
    assert is_normal_form_witness(result.witness)
    assert result.witness is not None
    assert result.witness["rules"] == [
        _rule("key-form", "outputFormat"),
        _rule("key-form", "pageCount"),
        _rule("optional-null", "note"),
        _rule("enum-form", "outputFormat"),
        _rule("numeric-string", "pageCount"),
    ]
    again = apply(result.args)
    assert again.args is result.args
    assert again.witness is None


@pytest.mark.parametrize(
    "page_count",
    [
        "01",
        "1.0",
        " 1",
        "+1",
        "1e0",
        "-0",
        "Infinity",
        "NaN",
        "9007199254740993",
        "0",
        "101",
        "1.5",
    ],
)
def test_lossy_or_invalid_numeric_text_is_refused(page_count: str) -> None:
    args = {"outputFormat": "PDF", "pageCount": page_count}
    result = apply(args)
    assert result.args is args
    assert result.witness is None


@pytest.mark.parametrize(
    "args",
    [
        {"outputFormat": "pdf", "OUTPUT-FORMAT": "pdf", "pageCount": "2"},
        {"output-format": "pdf", "OUTPUT_FORMAT": "html", "pageCount": "2"},
        {"outputFormat": "PDF", "pageCount": "2", "unexpected": True},
        {"outputFormat": None, "pageCount": "2"},
    ],
)
def test_conflicting_or_partial_candidates_roll_back(args: dict[str, Any]) -> None:
    result = apply(args)
    assert result.args is args
    assert result.witness is None


NUMERIC: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["value"],
    "properties": {"value": {"type": "number"}, "optional": {"type": "string"}},
}


@pytest.mark.parametrize("text", ["0", "-1", "1.5", "1e+21", "0.000001"])
def test_lossless_numeric_strings_and_optional_null(text: str) -> None:
    plan = derive_normal_form_plan(REF, NUMERIC)
    # Python has no ``undefined``; the optional field the upstream sets to undefined is the
    # one ``optional-null`` removes, so it is sent as null here.
    result = apply_normal_form_plan(REF, NUMERIC, {"value": text, "optional": None}, plan)
    assert result.args == {"value": float(text)}
    required_null = {"value": None}
    assert apply_normal_form_plan(REF, NUMERIC, required_null, plan).args is required_null


def test_derivation_bounds() -> None:
    assert derive_normal_form_plan("", SCHEMA) is None
    assert derive_normal_form_plan("x" * 1025, SCHEMA) is None
    assert derive_normal_form_plan("x" * 1024, SCHEMA) is not None
    assert (
        derive_normal_form_plan(REF, {**SCHEMA, "properties": {"x" * 129: {"type": "number"}}})
        is None
    )
    many = {f"key{i}": {"type": "number"} for i in range(MAX_NORMAL_FORM_RULES)}
    plan = derive_normal_form_plan(REF, {**SCHEMA, "required": [], "properties": many})
    assert plan is not None
    assert len(plan["rules"]) == MAX_NORMAL_FORM_RULES
    extra = {**many, "extra": {"type": "number"}}
    assert derive_normal_form_plan(REF, {**SCHEMA, "properties": extra}) is None
    # Lengths are UTF-16 units: 64 astral characters are 128 units, 65 are 129.
    assert derive_normal_form_plan(REF, {**NUMERIC, "properties": {"\U0001f600" * 64: {}}}) is None
    astral = {**NUMERIC, "properties": {"\U0001f600" * 64: {"type": "number"}}}
    assert derive_normal_form_plan(REF, astral) is not None
    astral_long = {**NUMERIC, "properties": {"\U0001f600" * 65: {"type": "number"}}}
    assert derive_normal_form_plan(REF, astral_long) is None


def test_ambiguous_key_and_enum_forms_are_not_resolved() -> None:
    ambiguous = {
        "type": "object",
        "additionalProperties": False,
        "required": ["mode"],
        "properties": {
            "mode": {"type": "string", "enum": ["foo-bar", "foo_bar", "pdf"]},
            "someKey": {"type": "string"},
            "some-key": {"type": "string"},
        },
    }
    plan = derive_normal_form_plan(REF, ambiguous)
    for args in ({"mode": "FOO BAR"}, {"mode": "pdf", "SOME_KEY": "x"}):
        assert apply_normal_form_plan(REF, ambiguous, args, plan).args is args
    assert apply_normal_form_plan(REF, ambiguous, {"mode": "foo-bar"}, plan).witness is None


def test_forged_foreign_and_drifted_plans_are_refused() -> None:
    args = {"outputFormat": "PDF", "pageCount": "2"}
    plan = _plan()
    forged = [
        {**plan, "baseSchemaDigest": "0" * 64},
        {**plan, "rules": plan["rules"][1:]},
        {**plan, "rules": [*plan["rules"], _rule("numeric-string", "outputFormat")]},
        {**plan, "ref": "other.action"},
    ]
    for candidate in forged:
        assert apply_normal_form_plan(REF, SCHEMA, args, candidate).args is args
    drift = {**SCHEMA, "required": [*SCHEMA["required"], "note"]}
    assert not proves_normal_form_plan(plan, drift)
    assert apply_normal_form_plan(REF, drift, args, plan).args is args
    assert apply_normal_form_plan(REF, SCHEMA, args).args is args
    # The same plan applies when it is genuine.
    assert apply_normal_form_plan(REF, SCHEMA, args, plan).args == {
        "outputFormat": "pdf",
        "pageCount": 2,
    }


@pytest.mark.parametrize("key", ["__proto__", "constructor", "prototype"])
def test_unsafe_keys(key: str) -> None:
    unsafe = {**SCHEMA, "properties": {**SCHEMA["properties"], key: {"type": "string"}}}
    assert derive_normal_form_plan(REF, unsafe) is None
    assert not is_normal_form_plan({**_plan(), "rules": [_rule("key-form", key)]})
    args = json.loads(f'{{"outputFormat":"PDF","pageCount":"2","{key}":{{"polluted":true}}}}')
    assert apply(args).args is args


def test_plan_and_witness_wire_shapes() -> None:
    plan = _plan()
    witness = apply({"outputFormat": "PDF", "pageCount": "2"}).witness
    assert witness is not None
    assert list(witness) == ["version", "baseSchemaDigest", "beforeShape", "afterShape", "rules"]
    invalid_plans: list[Any] = [
        None,
        {},
        {**plan, "version": 2},
        {**plan, "version": True},
        {**plan, "extra": True},
        {**plan, "ref": ""},
        {**plan, "rules": []},
        {**plan, "rules": [plan["rules"][0]] * (MAX_NORMAL_FORM_RULES + 1)},
        {**plan, "baseSchemaDigest": plan["baseSchemaDigest"] + "\n"},
    ]
    for invalid in invalid_plans:
        assert not is_normal_form_plan(invalid)
    invalid_witnesses: list[Any] = [
        None,
        {},
        {**witness, "extra": True},
        {**witness, "beforeShape": "invalid"},
        {**witness, "rules": []},
    ]
    for invalid in invalid_witnesses:
        assert not is_normal_form_witness(invalid)


def test_evidence_summary_counts_witnesses_not_successes() -> None:
    witness = apply({"outputFormat": "PDF", "pageCount": 2}).witness
    assert witness is not None and len(witness["rules"]) == 1
    broken = {**witness, "beforeShape": "invalid"}
    operations = [
        {"ref": REF, "args": {}, "outcome": "succeeded", "normalization": witness},
        {"ref": REF, "args": {}, "outcome": "failed", "normalization": witness},
        {"ref": REF, "args": {}, "outcome": "aborted", "normalization": witness},
        {"ref": REF, "args": {}, "outcome": "timed_out", "normalization": witness},
        {"ref": REF, "args": {}, "outcome": "succeeded"},
        {"ref": REF, "args": {}, "outcome": "succeeded", "normalization": broken},
    ]
    summary = normal_form_evidence_summary([{"operations": operations}])
    assert summary.to_json() == {
        "normalizedCalls": 4,
        "rulesApplied": 4,
        "succeeded": 1,
        "subsequentFailures": 3,
    }
    assert normal_form_evidence_summary([]).normalized_calls == 0


def test_spelling_forms() -> None:
    assert spelling_form("Output-Format") == "outputformat"
    assert spelling_form("RARE FORMAT") == "rareformat"
    assert spelling_form("page count") == "pagecount"
    assert spelling_form("pdf\n") is None
    assert spelling_form("_x") is None
    assert spelling_form("é") is None
    assert unique_forms(["a-b", "a_b", "pdf", "1x"]) == {"pdf": "pdf"}


# ------------------------------------------------------------ CV-30 (run-entropy.mjs, v3)

CV30_REF = "mcp.report.render"
CV30_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "outputFormat": {"type": "string", "enum": ["pdf", "html", "rare-format"]},
        "limit": {"type": "integer", "minimum": 1},
        "note": {"type": "string"},
    },
    "required": ["outputFormat", "limit"],
}
CANONICAL = {"outputFormat": "rare-format", "limit": 2}
SPILLED = {"output-format": "RARE FORMAT", "limit": "2", "note": None}


def test_cv30_plan_witness_and_digests() -> None:
    plan = derive_normal_form_plan(CV30_REF, CV30_SCHEMA)
    assert plan is not None
    assert (
        stable_json_hash(CV30_SCHEMA)
        == "1ef4c3b9306f5065f263f4a84a04e3a2befe045f1bb0c01352e77dc578058970"
    )
    assert plan["rules"] == [
        _rule("key-form", "limit"),
        _rule("numeric-string", "limit"),
        _rule("key-form", "note"),
        _rule("optional-null", "note"),
        _rule("key-form", "outputFormat"),
        _rule("enum-form", "outputFormat"),
    ]
    result = apply_normal_form_plan(CV30_REF, CV30_SCHEMA, SPILLED, plan)
    assert stable_json_hash(result.args) == stable_json_hash(CANONICAL)
    witness = result.witness
    assert witness is not None
    assert witness["rules"] == [
        _rule("key-form", "outputFormat"),
        _rule("numeric-string", "limit"),
        _rule("optional-null", "note"),
        _rule("enum-form", "outputFormat"),
    ]
    assert (
        witness["beforeShape"] == "3d65b6f2195c6dacbb72551392fb6cf5420ecba82391b81dd1c4c104b0f4b045"
    )
    assert (
        witness["afterShape"] == "ed2a8b5160ea7286ab8ac6c1e3aa1953dd3f600c1da23ac69ebb5ea414eec006"
    )
    again = apply_normal_form_plan(CV30_REF, CV30_SCHEMA, result.args, plan)
    assert again.args is result.args and again.witness is None
    for member in CV30_SCHEMA["properties"]["outputFormat"]["enum"]:
        args = {"outputFormat": member, "limit": 1}
        same = apply_normal_form_plan(CV30_REF, CV30_SCHEMA, args, plan)
        assert same.args is args and same.witness is None


@pytest.mark.parametrize(
    "args",
    [
        {**CANONICAL, "output-format": "PDF"},
        {"output-format": "PDF", "output_format": "HTML", "limit": 1},
        {**CANONICAL, "limit": "02"},
        {**CANONICAL, "limit": "9007199254740993"},
        {**SPILLED, "unknown": True},
    ],
)
def test_cv30_ambiguity_and_loss_refusal(args: dict[str, Any]) -> None:
    plan = derive_normal_form_plan(CV30_REF, CV30_SCHEMA)
    assert apply_normal_form_plan(CV30_REF, CV30_SCHEMA, args, plan).args is args


def test_cv30_colliding_enum_members_and_refusals() -> None:
    colliding = copy.deepcopy(CV30_SCHEMA)
    colliding["properties"]["outputFormat"]["enum"] = ["a-b", "a_b"]
    own_plan = derive_normal_form_plan(CV30_REF, colliding)
    args = {"outputFormat": "A B", "limit": 1}
    assert apply_normal_form_plan(CV30_REF, colliding, args, own_plan).args is args
    assert derive_normal_form_plan(CV30_REF, {**CV30_SCHEMA, "additionalProperties": True}) is None
    plan = derive_normal_form_plan(CV30_REF, CV30_SCHEMA)
    assert plan is not None
    forged = {**plan, "rules": plan["rules"][1:]}
    assert not proves_normal_form_plan(forged, CV30_SCHEMA)
    assert apply_normal_form_plan(CV30_REF, CV30_SCHEMA, SPILLED, forged).args is SPILLED
    drift = {**CV30_SCHEMA, "required": ["note"]}
    assert not proves_normal_form_plan(plan, drift)
    assert apply_normal_form_plan(CV30_REF, drift, SPILLED, plan).args is SPILLED
