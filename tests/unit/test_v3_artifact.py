"""The version-2 artifact of metric v3 (notes §1.8, CV-37): parser, inert legacy helpers."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pytest_entropy.core.canonical import schema_digest, stable_json_hash
from pytest_entropy.core.v3.artifact import (
    COMPILED_SURFACE_VERSION_2,
    apply_compiled_surface,
    comparable_compiled_surface_score,
    compiled_surface_effect_changed,
    effective_schema_for,
    empty_compiled_surface,
    is_quarantined_ref,
    parse_compiled_surface_artifact,
    quarantined_ref_names,
)
from pytest_entropy.core.v3.normal_form import (
    MAX_NORMAL_FORM_PLANS,
    MAX_NORMAL_FORM_RULES,
    derive_normal_form_plan,
)


def _closed(key: str) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": [key],
        "properties": {key: {"type": "string"}},
    }


def live_surface() -> dict[str, Any]:
    return {
        "version": 1,
        "actions": [
            {"ref": "mcp.flaky.run", "inputSchema": _closed("mode")},
            {"ref": "mcp.stale.old", "inputSchema": _closed("x")},
            {"ref": "memory.recall", "inputSchema": _closed("query")},
        ],
    }


def legacy(live: dict[str, Any]) -> dict[str, Any]:
    schemas = {action["ref"]: action["inputSchema"] for action in live["actions"]}
    recall = copy.deepcopy(schemas["memory.recall"])
    recall["properties"] = {"query": {"type": "string", "enum": ["search", "expand", "recall"]}}
    return {
        "version": 1,
        "metricVersion": 2,
        "actions": [
            {
                "ref": "memory.recall",
                "inputSchema": recall,
                "baseSchemaDigest": schema_digest(schemas["memory.recall"]),
            },
            {
                "ref": "mcp.stale.old",
                "inputSchema": {"type": "object"},
                "baseSchemaDigest": "0" * 64,
            },
        ],
        "quarantined": [
            {"ref": "mcp.flaky.run", "baseSchemaDigest": schema_digest(schemas["mcp.flaky.run"])},
            {"ref": "mcp.stale.old", "baseSchemaDigest": "deadbeef"},
        ],
        "applied": [
            {"kind": "enum-tighten", "ref": "memory.recall", "detail": "query: 3 observed values"}
        ],
        "gate": {"passed": True, "beforeScore": 0.25, "afterScore": 0.18, "reasons": []},
        "evidenceDigest": "abc123",
    }


PLAN = derive_normal_form_plan("memory.recall", _closed("query"))
assert PLAN is not None
VALID: dict[str, Any] = {**empty_compiled_surface(), "normalizations": [PLAN]}


def test_empty_artifact_has_the_upstream_bytes() -> None:
    empty = empty_compiled_surface()
    assert COMPILED_SURFACE_VERSION_2 == 2
    assert list(empty) == [
        "version", "metricVersion", "actions", "quarantined", "normalizations",
        "applied", "gate", "evidenceDigest",
    ]  # fmt: skip
    assert stable_json_hash(empty) == (
        "1a186f8e45f7c0280c200b96f5dc24885e755dc5e0f98250a050ba1b0ab36fea"
    )


def test_accepts_bounded_plans_and_legacy_files_as_migration_data() -> None:
    assert parse_compiled_surface_artifact(VALID) == VALID
    old = legacy(live_surface())
    assert parse_compiled_surface_artifact(old) == old
    many = [{**PLAN, "ref": f"demo.action{i}"} for i in range(MAX_NORMAL_FORM_PLANS)]
    assert parse_compiled_surface_artifact({**VALID, "normalizations": many}) is not None


def test_a_loaded_version_2_file_orders_keys_as_the_upstream_loader() -> None:
    parsed = parse_compiled_surface_artifact(VALID)
    assert parsed is not None
    assert list(parsed)[:3] == ["version", "normalizations", "metricVersion"]
    # A version-1 file loses a normalizations key it happens to carry.
    with_plans = {**legacy(live_surface()), "normalizations": [PLAN]}
    parsed_legacy = parse_compiled_surface_artifact(with_plans)
    assert parsed_legacy is not None and "normalizations" not in parsed_legacy


PATCHES: list[dict[str, Any]] = [
    {"version": 3},
    {"normalizations": None},
    {"normalizations": [PLAN, PLAN]},
    {"normalizations": [{**PLAN, "version": 2}]},
    {"normalizations": [{**PLAN, "baseSchemaDigest": "forged"}]},
    {"normalizations": [{**PLAN, "rules": []}]},
    {"normalizations": [{**PLAN, "rules": [{"kind": "invented", "key": "query"}]}]},
    {"normalizations": [{**PLAN, "rules": [{"kind": "key-form", "key": "__proto__"}]}]},
    {"normalizations": [{**PLAN, "rules": [PLAN["rules"][0]] * (MAX_NORMAL_FORM_RULES + 1)}]},
    {
        "normalizations": [
            {**PLAN, "ref": f"demo.action{i}"} for i in range(MAX_NORMAL_FORM_PLANS + 1)
        ]
    },
    {"actions": legacy(live_surface())["actions"]},
    {"quarantined": legacy(live_surface())["quarantined"]},
    {"metricVersion": 0},
    {"gate": {"passed": True, "beforeScore": float("inf"), "afterScore": 0, "reasons": []}},
]


@pytest.mark.parametrize("patch", PATCHES, ids=range(len(PATCHES)))
def test_rejects_invalid_duplicate_oversized_plans_and_version_2_restrictions(
    patch: dict[str, Any],
) -> None:
    value = {**VALID, **patch}
    if patch.get("normalizations", 0) is None:
        del value["normalizations"]
    assert parse_compiled_surface_artifact(value) is None


def test_rejects_duplicate_legacy_overlays() -> None:
    old = legacy(live_surface())
    assert parse_compiled_surface_artifact({**old, "actions": [old["actions"][0]] * 2}) is None


def test_effect_changes_only_with_the_plans_in_force() -> None:
    old = legacy(live_surface())
    provenance_only = {
        **old,
        "evidenceDigest": "new evidence",
        "gate": {**old["gate"], "beforeScore": 0.2},
        "applied": [*old["applied"], {"kind": "enum-tighten", "ref": "other", "detail": "new"}],
    }
    assert not compiled_surface_effect_changed(old, provenance_only)
    fewer = {**provenance_only, "quarantined": provenance_only["quarantined"][1:]}
    assert not compiled_surface_effect_changed(old, fewer)
    assert compiled_surface_effect_changed(old, VALID)
    assert compiled_surface_effect_changed(VALID, empty_compiled_surface())
    assert not compiled_surface_effect_changed(None, empty_compiled_surface())
    assert not compiled_surface_effect_changed(VALID, {**VALID, "evidenceDigest": "new"})


def test_a_baseline_score_only_from_a_current_version_artifact() -> None:
    current = {
        **empty_compiled_surface(),
        "metricVersion": 7,
        "gate": {"passed": True, "beforeScore": 0.004458, "afterScore": 0.004458, "reasons": []},
    }
    assert comparable_compiled_surface_score(current, 7) == 0.004458
    assert comparable_compiled_surface_score({**current, "metricVersion": 6}, 7) is None
    assert comparable_compiled_surface_score(None, 7) is None
    assert comparable_compiled_surface_score(legacy(live_surface()), 7) is None


def test_legacy_overlays_and_quarantines_are_inert() -> None:
    live = live_surface()
    before = stable_json_hash(live)
    old = legacy(live)
    effective = apply_compiled_surface(live, old)
    assert effective is live and stable_json_hash(live) == before
    assert apply_compiled_surface(live, None) is live
    schemas = {action["ref"]: action["inputSchema"] for action in live["actions"]}
    for ref in ("memory.recall", "mcp.stale.old"):
        assert effective_schema_for(ref, schemas[ref], old) is schemas[ref]
    for ref in ("mcp.flaky.run", "mcp.stale.old"):
        assert is_quarantined_ref(ref, schemas[ref], old) is False
    assert quarantined_ref_names(old) == set()
