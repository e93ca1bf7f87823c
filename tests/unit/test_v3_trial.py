"""The v3 trial: representation replay through the runtime's normaliser (notes §7.2, CV-35)."""

from __future__ import annotations

import copy
from typing import Any

from pytest_entropy.core.canonical import js_stringify, stable_json_hash
from pytest_entropy.core.v3.artifact import empty_compiled_surface
from pytest_entropy.core.v3.compiler import compile_entropy_surface_v3
from pytest_entropy.core.v3.normal_form import apply_normal_form_plan
from pytest_entropy.core.v3.trial import (
    V3TrialCounts,
    V3TrialTally,
    proven_plans,
    run_entropy_trial_v3,
)
from tests.v3_artifact_support import CANONICAL, LIVE, REF, SCHEMA, SPILLED

ZERO_TOTALS = {
    "operations": 0, "bothAccept": 0, "bothReject": 0, "normalizationWin": 0,
    "canonicalIdentityChecks": 0, "canonicalIdentityCost": 0, "idempotenceCost": 0,
    "tighteningCost": 0, "typedFailureWin": 0, "quarantineWin": 0, "quarantineCost": 0,
}  # fmt: skip


def artifact() -> dict[str, Any]:
    outcome = compile_entropy_surface_v3([], LIVE)
    assert outcome.artifact is not None
    return outcome.artifact


def traces(args_list: list[Any], outcome: str = "failed") -> list[dict[str, Any]]:
    return [
        {
            "operations": [
                {"ref": REF, "args": args, "outcome": outcome, "failureStage": "validate"}
                for args in args_list
            ]
        }
    ]


def test_counts_normalisation_without_inventing_success() -> None:
    corpus = traces([SPILLED, CANONICAL, {**CANONICAL, "limit": "02"}])
    compiled = artifact()
    before = stable_json_hash({"t": corpus, "a": compiled})
    report = run_entropy_trial_v3(corpus, LIVE, compiled)
    assert report.totals == {
        **ZERO_TOTALS, "operations": 3, "bothAccept": 1, "bothReject": 1,
        "normalizationWin": 1, "canonicalIdentityChecks": 1,
    }  # fmt: skip
    assert (report.verdict, report.declared_score, report.effective_score, report.delta) == (
        "clean", 1, 1, 0
    )  # fmt: skip
    assert report.divergences == [{"ref": REF, "trialClass": "normalization-win", "count": 1}]
    again = run_entropy_trial_v3(corpus, LIVE, compiled)
    assert js_stringify(again.to_json()) == js_stringify(report.to_json())
    assert stable_json_hash({"t": corpus, "a": compiled}) == before


def test_verbatim_audits_replace_trace_calls_per_ref_only() -> None:
    other = "pi.other"
    live = {"version": 1, "actions": [*LIVE["actions"], {"ref": other, "inputSchema": SCHEMA}]}
    corpus = [
        {
            "operations": [
                *traces([{}, {}, {}], "succeeded")[0]["operations"],
                {"ref": other, "args": CANONICAL, "outcome": "succeeded"},
                {"ref": "unknown", "args": {}, "outcome": "failed"},
                {"ref": "fabric.discovery.search", "args": {}, "outcome": "succeeded"},
            ]
        }
    ]
    audits = [{"ref": REF, "args": CANONICAL}, {"ref": REF, "args": SPILLED}]
    report = run_entropy_trial_v3(corpus, live, artifact(), audits)
    totals = report.totals
    assert (totals["operations"], totals["bothAccept"], totals["bothReject"]) == (3, 2, 0)
    assert totals["normalizationWin"] == 1
    assert report.effective_score == report.declared_score


def test_canonical_members_stay_identical_and_normalising_is_idempotent() -> None:
    plan = artifact()["normalizations"][0]
    for member in SCHEMA["properties"]["outputFormat"]["enum"]:
        args = {"outputFormat": member, "limit": 1}
        result = apply_normal_form_plan(REF, SCHEMA, args, plan)
        assert result.args is args and result.witness is None
    once = apply_normal_form_plan(REF, SCHEMA, SPILLED, plan)
    assert once.args == CANONICAL
    twice = apply_normal_form_plan(REF, SCHEMA, once.args, plan)
    assert twice.args is once.args and twice.witness is None
    assert run_entropy_trial_v3(traces([SPILLED]), LIVE, artifact()).totals["normalizationWin"] == 1


def test_ambiguous_aliases_lossy_numbers_and_partial_repairs_are_refused() -> None:
    refused = [
        {**CANONICAL, "output-format": "PDF"},
        {"output-format": "PDF", "output_format": "HTML", "limit": 1},
        {**CANONICAL, "limit": "01"},
        {**CANONICAL, "limit": "9007199254740993"},
        {**SPILLED, "unexpected": True},
    ]
    totals = run_entropy_trial_v3(traces(refused), LIVE, artifact()).totals
    assert (totals["bothReject"], totals["normalizationWin"]) == (5, 0)


def test_legacy_restrictions_are_inert_even_for_formerly_quarantined_successes() -> None:
    legacy = {
        **empty_compiled_surface(),
        "version": 1,
        "metricVersion": 2,
        "actions": [{"ref": REF, "inputSchema": {"type": "null"}, "baseSchemaDigest": "stale"}],
        "quarantined": [{"ref": REF, "baseSchemaDigest": "stale"}],
        "normalizations": artifact()["normalizations"],
    }
    report = run_entropy_trial_v3(traces([CANONICAL, SPILLED], "succeeded"), LIVE, legacy)
    assert (report.verdict, report.delta) == ("no-evidence", 0)
    totals = report.totals
    assert (totals["bothAccept"], totals["bothReject"], totals["normalizationWin"]) == (1, 1, 0)
    assert totals["quarantineWin"] == totals["quarantineCost"] == totals["tighteningCost"] == 0


def test_forged_and_drifted_plans_are_ignored() -> None:
    forged = artifact()
    forged["normalizations"][0]["rules"].pop()
    drifted = {
        "version": 1,
        "actions": [{"ref": REF, "inputSchema": {**SCHEMA, "required": ["note"]}}],
    }
    for live, compiled in ((LIVE, forged), (drifted, artifact())):
        report = run_entropy_trial_v3(traces([SPILLED]), live, compiled)
        assert report.verdict == "no-evidence"
        assert (report.totals["normalizationWin"], report.totals["bothReject"]) == (0, 1)


def test_no_evidence_without_plans_calls_or_related_calls() -> None:
    assert run_entropy_trial_v3(traces([CANONICAL]), LIVE).verdict == "no-evidence"
    assert run_entropy_trial_v3([], LIVE, artifact()).verdict == "no-evidence"
    unrelated = [{"operations": [{"ref": "unknown", "args": {}, "outcome": "succeeded"}]}]
    assert run_entropy_trial_v3(unrelated, LIVE, artifact()).verdict == "no-evidence"


def test_counts_of_pieces_merge_to_the_one_pass_counts() -> None:
    # An audit in a later piece still replaces the trace calls of its ref read earlier.
    plans = proven_plans(LIVE, artifact())
    corpus = traces([SPILLED, CANONICAL], "succeeded")
    whole = V3TrialTally(LIVE, plans)
    whole.add_audit({"ref": REF, "args": SPILLED})
    whole.add_trace(corpus[0])
    first, second = V3TrialTally(LIVE, plans), V3TrialTally(LIVE, plans)
    first.add_trace(copy.deepcopy(corpus[0]))
    second.add_audit({"ref": REF, "args": SPILLED})
    merged = V3TrialCounts().merge(first.counts).merge(second.counts)
    assert (
        merged.per_ref()
        == whole.counts.per_ref()
        == {REF: {"operations": 1, "planned": 1, "normalizationWin": 1}}
    )
