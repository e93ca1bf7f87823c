"""Federation under metric v3 (notes §8.2, CV-34): only exactly re-derived plans survive."""

from __future__ import annotations

from typing import Any

from pytest_entropy.core.canonical import schema_digest, stable_json_hash
from pytest_entropy.core.v3.artifact import empty_compiled_surface, merge_compiled_surfaces
from pytest_entropy.core.v3.normal_form import MAX_NORMAL_FORM_PLANS, derive_normal_form_plan

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"outputFormat": {"type": "string", "enum": ["pdf", "html", "docx"]}},
    "required": ["outputFormat"],
}
LIVE: dict[str, Any] = {
    "version": 1,
    "actions": [{"ref": ref, "inputSchema": SCHEMA} for ref in ("demo.a", "demo.b", "demo.c")],
}


def plan(ref: str) -> dict[str, Any]:
    derived = derive_normal_form_plan(ref, SCHEMA)
    assert derived is not None
    return dict(derived)


def artifact(plans: list[dict[str, Any]]) -> dict[str, Any]:
    return {**empty_compiled_surface(), "normalizations": plans}


def legacy() -> dict[str, Any]:
    return {
        **empty_compiled_surface(),
        "version": 1,
        "actions": [
            {
                "ref": "demo.a",
                "inputSchema": {"type": "object"},
                "baseSchemaDigest": schema_digest(SCHEMA),
            },
            {"ref": "demo.b", "inputSchema": {}, "baseSchemaDigest": "stale"},
        ],
        "quarantined": [{"ref": "demo.c", "baseSchemaDigest": schema_digest(SCHEMA)}],
        "applied": [{"kind": "enum-tighten", "ref": "demo.a", "detail": "old restriction"}],
    }


def test_every_legacy_restriction_is_dropped_and_counted_even_a_digest_match() -> None:
    merged = merge_compiled_surfaces(legacy(), legacy(), LIVE)
    file = merged["file"]
    assert file["version"] == 2
    assert (file["actions"], file["quarantined"], file["normalizations"], file["applied"]) == (
        [], [], [], []
    )  # fmt: skip
    assert merged["droppedOverlays"] == 4
    assert merged["droppedQuarantines"] == 2
    assert merged["droppedNormalizations"] == 0
    assert merge_compiled_surfaces(None, legacy(), LIVE)["droppedOverlays"] == 2


def test_only_exact_plans_merge_sorted_deduplicated_with_fresh_provenance() -> None:
    a, b = plan("demo.a"), plan("demo.b")
    incoming = {
        **artifact([a, b]),
        "gate": {"passed": False, "beforeScore": 99, "afterScore": 100, "reasons": ["untrusted"]},
        "evidenceDigest": "peer",
        "applied": [{"kind": "noise-quarantine", "ref": "demo.a", "detail": "untrusted"}],
    }
    merged = merge_compiled_surfaces(artifact([b]), incoming, LIVE)
    file = merged["file"]
    assert file["normalizations"] == [a, b]
    assert file["actions"] == [] and file["quarantined"] == []
    assert [entry["kind"] for entry in file["applied"]] == ["normal-form", "normal-form"]
    assert file["gate"] == empty_compiled_surface()["gate"]
    assert file["evidenceDigest"] != "peer"
    assert file["evidenceDigest"] == stable_json_hash([a, b])
    assert merged["droppedNormalizations"] == 0
    assert merge_compiled_surfaces(None, artifact([a]), LIVE)["file"]["normalizations"] == [a]


def test_forged_targets_rules_digests_unknown_refs_and_drift_are_dropped() -> None:
    a = plan("demo.a")
    forged = [
        {**a, "rules": a["rules"][1:]},
        {**a, "rules": list(reversed(a["rules"]))},
        {**a, "rules": [*a["rules"], {"kind": "numeric-string", "key": "outputFormat"}]},
        {**a, "rules": [{"kind": "key-form", "key": "other"}]},
        {**a, "baseSchemaDigest": "0" * 64},
        plan("missing.action"),
    ]
    merged = merge_compiled_surfaces(artifact(forged[:2]), artifact(forged[2:]), LIVE)
    assert merged["droppedNormalizations"] == len(forged)
    assert merged["file"]["normalizations"] == []
    drift = {
        "version": 1,
        "actions": [{"ref": "demo.a", "inputSchema": {**SCHEMA, "required": []}}],
    }
    assert merge_compiled_surfaces(None, artifact([a]), drift)["droppedNormalizations"] == 1


def test_a_stale_local_plan_or_legacy_quarantine_does_not_block_a_proven_one() -> None:
    a = plan("demo.a")
    stale = artifact([{**a, "baseSchemaDigest": "0" * 64}])
    merged = merge_compiled_surfaces(stale, artifact([a]), LIVE)
    assert merged["file"]["normalizations"] == [a]
    assert merged["droppedNormalizations"] == 1
    c = plan("demo.c")
    assert merge_compiled_surfaces(legacy(), artifact([c]), LIVE)["file"]["normalizations"] == [c]


def test_deterministic_idempotent_and_independent_of_incoming_order() -> None:
    incoming = artifact([plan("demo.b"), plan("demo.a")])
    first = merge_compiled_surfaces(None, incoming, LIVE)
    assert merge_compiled_surfaces(None, incoming, LIVE) == first
    reversed_incoming = artifact(list(reversed(incoming["normalizations"])))
    assert merge_compiled_surfaces(None, reversed_incoming, LIVE)["file"] == first["file"]
    assert merge_compiled_surfaces(first["file"], incoming, LIVE)["file"] == first["file"]


def test_the_merged_union_is_bounded() -> None:
    actions = [
        {"ref": f"demo.action{i}", "inputSchema": SCHEMA} for i in range(MAX_NORMAL_FORM_PLANS + 1)
    ]
    plans = [plan(action["ref"]) for action in actions]
    result = merge_compiled_surfaces(
        artifact(plans[:500]), artifact(plans[500:]), {"version": 1, "actions": actions}
    )
    assert len(result["file"]["normalizations"]) == MAX_NORMAL_FORM_PLANS
    assert len(result["file"]["applied"]) <= 256
