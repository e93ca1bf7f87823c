"""The v3 compiler: normal-form plans in a version-2 artifact (notes §6.6, CV-30, CV-33)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.core.canonical import file_text, schema_digest, stable_json_hash
from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.review_signals import format_review_signal
from pytest_entropy.core.v3.artifact import (
    apply_compiled_surface,
    effective_schema_for,
    empty_compiled_surface,
    parse_compiled_surface_artifact,
)
from pytest_entropy.core.v3.compiler import (
    AUTO_APPLY_PROPOSAL_KINDS_V3,
    compile_entropy_surface_v3,
)
from pytest_entropy.core.v3.meter import finalize_v3
from pytest_entropy.core.v3.normal_form import apply_normal_form_plan, derive_normal_form_plan
from tests.v3_artifact_support import LIVE, certification_traces

REF = "mcp.report.render"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["format"],
    "properties": {"format": {"type": "string", "enum": ["docx", "html", "pdf", "web"]}},
}
FLAKY: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["mode"],
    "properties": {"mode": {"type": "string"}},
}
SURFACE: dict[str, Any] = {
    "version": 1,
    "actions": [
        {"ref": REF, "inputSchema": SCHEMA},
        {"ref": "mcp.flaky.run", "inputSchema": FLAKY},
    ],
}
TRACES: list[dict[str, Any]] = [
    {
        "operations": [
            *({"ref": REF, "args": {"format": "pdf"}, "outcome": "succeeded"} for _ in range(8)),
            {"ref": REF, "args": {"format": "html"}, "outcome": "succeeded"},
            {"ref": "mcp.flaky.run", "args": {}, "outcome": "failed", "failureStage": "validate"},
            {"ref": "mcp.flaky.run", "args": {}, "outcome": "failed", "failureStage": "invoke"},
        ]
    }
]


def measure_v3(traces: list[dict[str, Any]], surface: dict[str, Any]) -> Any:
    state = MeterState(retain_terms=False)
    state.add_traces(traces)
    return finalize_v3(state, surface)


def legacy() -> dict[str, Any]:
    tightened = {**SCHEMA, "properties": {"format": {"type": "string", "enum": ["pdf", "html"]}}}
    return {
        **empty_compiled_surface(),
        "version": 1,
        "actions": [
            {"ref": REF, "baseSchemaDigest": schema_digest(SCHEMA), "inputSchema": tightened}
        ],
        "quarantined": [{"ref": "mcp.flaky.run", "baseSchemaDigest": schema_digest(FLAKY)}],
    }


def test_compiles_proven_plans_never_restrictions_or_counterfactual_scores() -> None:
    outcome = compile_entropy_surface_v3(TRACES, SURFACE)
    assert AUTO_APPLY_PROPOSAL_KINDS_V3 == ("normal-form",)
    assert outcome.status == "compiled"
    assert outcome.report.score == measure_v3(TRACES, SURFACE).score == 0.090909
    assert outcome.report.totals.invocation_rejections == 1
    assert outcome.after is outcome.report
    score = outcome.report.score
    assert outcome.gate == {
        "passed": True, "beforeScore": score, "afterScore": score, "delta": 0, "reasons": []
    }  # fmt: skip
    artifact = outcome.artifact
    assert artifact is not None
    assert (artifact["version"], artifact["actions"], artifact["quarantined"]) == (2, [], [])
    actions = sorted(SURFACE["actions"], key=lambda action: action["ref"])
    assert artifact["normalizations"] == [
        derive_normal_form_plan(action["ref"], action["inputSchema"]) for action in actions
    ]
    assert all(entry["kind"] == "normal-form" for entry in artifact["applied"])
    assert parse_compiled_surface_artifact(artifact) == artifact


def test_rare_members_and_every_action_survive_dominant_observations() -> None:
    observations = [
        {"ref": REF, "key": "format", "value": "pdf", "count": 10000},
        {"ref": REF, "key": "format", "value": "html", "count": 1000},
    ]
    artifact = compile_entropy_surface_v3(TRACES, SURFACE, value_observations=observations).artifact
    assert apply_compiled_surface(SURFACE, artifact) is SURFACE
    assert effective_schema_for(REF, SCHEMA, artifact) is SCHEMA
    assert artifact is not None
    plan = next(plan for plan in artifact["normalizations"] if plan["ref"] == REF)
    args = {"format": "docx"}
    result = apply_normal_form_plan(REF, SCHEMA, args, plan)
    assert result.args is args and result.witness is None


def test_observations_audits_repairs_and_order_never_change_the_effect() -> None:
    baseline = compile_entropy_surface_v3([], SURFACE)
    assert baseline.status == "compiled" and baseline.artifact is not None
    reversed_traces = [{**TRACES[0], "operations": list(reversed(TRACES[0]["operations"]))}]
    inputs: list[dict[str, Any]] = [
        {"traces": TRACES},
        {"traces": reversed_traces},
        {
            "traces": [{"operations": [{"ref": REF, "args": {}, "outcome": "succeeded"}]}],
            "value_observations": [{"ref": REF, "key": "format", "value": "pdf", "count": 999}],
        },
        {
            "traces": TRACES,
            "audit_calls": [{"ref": REF, "args": {"format": "web"}}],
            "repairs": [{"kind": "keyAlias", "ref": REF, "from": "notAnAlias", "to": "format"}],
        },
    ]
    for extra in inputs:
        outcome = compile_entropy_surface_v3(surface=SURFACE, **extra)
        assert outcome.status == "compiled" and outcome.artifact is not None
        assert outcome.artifact["normalizations"] == baseline.artifact["normalizations"]
        assert outcome.artifact["evidenceDigest"] == baseline.artifact["evidenceDigest"]
        assert outcome.artifact["actions"] == outcome.artifact["quarantined"] == []


def test_plans_are_sorted_whatever_the_declaration_order() -> None:
    first = compile_entropy_surface_v3([], SURFACE).artifact
    reversed_surface = {**SURFACE, "actions": list(reversed(SURFACE["actions"]))}
    second = compile_entropy_surface_v3([], reversed_surface).artifact
    assert first is not None and second is not None
    assert second["normalizations"] == first["normalizations"]


def test_the_identical_second_compile_converges_on_the_same_object() -> None:
    first = compile_entropy_surface_v3(TRACES, SURFACE)
    second = compile_entropy_surface_v3(TRACES, SURFACE, artifact=first.artifact)
    assert second.status == "converged"
    assert second.artifact is first.artifact
    assert second.gate is None and second.after is None
    assert not any(p["kind"] == "normal-form" for p in second.proposals)
    assert compile_entropy_surface_v3([], {"version": 1, "actions": []}).status == "converged"


def test_a_legacy_artifact_is_migrated_not_kept() -> None:
    incumbent = parse_compiled_surface_artifact(legacy())
    assert incumbent is not None and incumbent["version"] == 1
    outcome = compile_entropy_surface_v3(TRACES, SURFACE, artifact=incumbent)
    assert outcome.status == "compiled" and outcome.artifact is not None
    assert (outcome.artifact["version"], outcome.artifact["actions"]) == (2, [])
    fresh = compile_entropy_surface_v3([], SURFACE).artifact
    assert fresh is not None
    assert outcome.artifact["normalizations"] == fresh["normalizations"]
    assert len(incumbent["actions"]) == 1
    empty = compile_entropy_surface_v3([], {"version": 1, "actions": []}, artifact=incumbent)
    assert empty.artifact is not None
    assert (empty.artifact["version"], empty.artifact["normalizations"]) == (2, [])


def test_a_large_surface_compiles_deterministically() -> None:
    large = {
        "version": 1,
        "actions": [{"ref": f"demo.action{i}", "inputSchema": SCHEMA} for i in range(96)],
    }
    first = compile_entropy_surface_v3(TRACES, large)
    second = compile_entropy_surface_v3(copy.deepcopy(TRACES), copy.deepcopy(large))
    assert stable_json_hash(first.to_json()) == stable_json_hash(second.to_json())
    assert first.artifact is not None and len(first.artifact["normalizations"]) == 96


def test_review_signals_are_advisory_and_formatted() -> None:
    repairs = [{"kind": "keyAlias", "ref": REF, "from": "Format", "to": "format"}]
    outcome = compile_entropy_surface_v3(TRACES, SURFACE, repairs=repairs)
    assert [p for p in outcome.proposals if p["kind"] != "normal-form"] == []
    marked = {
        "version": 1,
        "actions": [
            {
                "ref": REF,
                "inputSchema": {
                    **SCHEMA,
                    "properties": {"format": {"type": "string", "x-fabric-enum-candidate": True}},
                },
            }
        ],
    }
    review = [
        p
        for p in compile_entropy_surface_v3(TRACES, marked).proposals
        if p["kind"] != "normal-form"
    ]
    assert len(review) == 1
    assert format_review_signal(review[0]) == f"declare-enum {REF}.format (pdf, html)"
    plan_proposal = {
        "kind": "normal-form",
        "ref": REF,
        "baseSchemaDigest": schema_digest(SCHEMA),
        "rules": [],
    }
    assert format_review_signal(plan_proposal) == f"normal-form {REF}"


# The certification fixture's artifact, byte for byte (notes CV-30).
CV30_ARTIFACT: dict[str, Any] = {
    "version": 2,
    "metricVersion": 3,
    "actions": [],
    "quarantined": [],
    "normalizations": [
        {
            "version": 1,
            "ref": "mcp.report.render",
            "baseSchemaDigest": "1ef4c3b9306f5065f263f4a84a04e3a2befe045f1bb0c01352e77dc578058970",
            "rules": [
                {"kind": "key-form", "key": "limit"},
                {"kind": "numeric-string", "key": "limit"},
                {"kind": "key-form", "key": "note"},
                {"kind": "optional-null", "key": "note"},
                {"kind": "key-form", "key": "outputFormat"},
                {"kind": "enum-form", "key": "outputFormat"},
            ],
        }
    ],
    "applied": [{"kind": "normal-form", "ref": "mcp.report.render", "detail": "6 proven rules"}],
    "gate": {"passed": True, "beforeScore": 0.333333, "afterScore": 0.333333, "reasons": []},
    "evidenceDigest": "5f0ad3ef74f98c1920be85a205088be4389be7199b756cd27bea1bf9fa10e097",
}


def test_the_certification_fixture_compiles_to_the_upstream_bytes() -> None:
    outcome = compile_entropy_surface_v3(certification_traces(), LIVE)
    assert outcome.status == "compiled" and outcome.artifact is not None
    text = file_text(outcome.artifact)
    assert text == json.dumps(CV30_ARTIFACT, indent=2, ensure_ascii=False) + "\n"
    assert stable_json_hash(outcome.artifact) == (
        "a7e07ba8bcf711e6952bd4ba976e866d77e5d58d9fbbc7245119048485b7eaa5"
    )
    plan = outcome.artifact["normalizations"][0]
    assert stable_json_hash(plan) == (
        "df67ba35271de273956b27ce1ea0709c5e43406ff6caf647ffd7f017b3e1757e"
    )
    assert stable_json_hash([plan]) == (
        "f7fe587cdf2fd223ecb23005d6bdc33a0279c5857761e9fbd876fbbcc810bf08"
    )


# The store's rules for version-2 files (the upstream compiler tests' store block).


def test_the_store_round_trips_version_2_and_legacy_artifacts(tmp_path: Path) -> None:
    from pytest_entropy.state.store import COMPILED_V3, load, save

    fresh = compile_entropy_surface_v3(TRACES, SURFACE).artifact
    assert fresh is not None
    for index, artifact in enumerate((fresh, legacy())):
        state = tmp_path / f"state{index}"
        assert load(state, COMPILED_V3).to_json() == {}
        assert save(state, COMPILED_V3, artifact).written
        assert load(state, COMPILED_V3).file == parse_compiled_surface_artifact(artifact)
        assert not save(state, COMPILED_V3, artifact).written
    empty = tmp_path / "empty"
    assert save(empty, COMPILED_V3, empty_compiled_surface()).written
    assert load(empty, COMPILED_V3).file == empty_compiled_surface()


@pytest.mark.parametrize(("raw", "reason"), [("{ nope", "malformed JSON"), ("{}", "invalid")])
def test_damage_is_surfaced_and_blocks_the_overwrite(tmp_path: Path, raw: str, reason: str) -> None:
    from pytest_entropy.state.store import COMPILED_V3, StoreDamagedError, load, save

    save(tmp_path, COMPILED_V3, empty_compiled_surface())
    (tmp_path / "compiled.json").write_text(raw, encoding="utf-8")
    assert load(tmp_path, COMPILED_V3).error == f"compiled surface is {reason}"
    with pytest.raises(StoreDamagedError, match=reason):
        save(tmp_path, COMPILED_V3, empty_compiled_surface())
    assert (tmp_path / "compiled.json").read_text(encoding="utf-8") == raw
