"""The v2 check list (spec §12.3): each check computes its values and compares them exactly."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

from pytest_entropy.core.artifact import apply_compiled_surface
from pytest_entropy.core.canonical import canonical_json, js_stringify, schema_digest
from pytest_entropy.core.certify.fixtures import (
    CheckResult,
    Expect,
    FixtureRun,
    enum_of,
    kinds_of,
    schema_of,
)
from pytest_entropy.core.compiler import compile_entropy_surface
from pytest_entropy.core.jscompat import js_string
from pytest_entropy.core.meter import measure, report_hash
from pytest_entropy.core.pool import PoolMerge, merge_observation_window, pool_to_value_observations
from pytest_entropy.core.proposals import propose_entropy_reductions as propose
from pytest_entropy.core.trial import run_entropy_trial

# ------------------------------------------------------------------------ the checks


@dataclass(frozen=True, slots=True)
class Check:
    """One certification check: its id, what it asserts, the vector, and how to run it."""

    id: str
    asserts: str
    vector: str
    run: Callable[[FixtureRun], CheckResult] = field(repr=False)


def _determinism(run: FixtureRun) -> CheckResult:
    # Two independent measurements; never the cached report.
    first = report_hash(measure(run.fixtures.wobble_traces))
    second = report_hash(measure(run.fixtures.wobble_traces))
    evidence = f"hashes {first} vs {second}"
    if first != second:
        return CheckResult("determinism-double-run", False, evidence, (evidence,))
    return CheckResult("determinism-double-run", True, f"hash {first} twice")


def _converged(run: FixtureRun) -> CheckResult:
    report = run.converged
    expect = Expect()
    expect.equal("score", report.score, 0.21875)
    expect.equal("staticFreedom", report.static_freedom, 3.5)
    expect.equal("shapeEntropyBits", report.shape_entropy_bits, 0)
    expect.equal("churnRate", report.churn_rate, 0)
    expect.equal("navigationRatio", report.navigation_ratio, 0)
    expect.equal("flowEntropyBits", report.flow_entropy_bits, 0)
    expect.equal("succeeded", report.totals.succeeded, 4)
    expect.equal("actionOperations", report.totals.action_operations, 4)
    return expect.result(
        "converged-corpus-exact",
        f"score {js_string(report.score)} static {js_string(report.static_freedom)}"
        f" succeeded {report.totals.succeeded}",
    )


def _wobble(run: FixtureRun) -> CheckResult:
    report = run.wobble
    expect = Expect()
    row = report.ref("memory.expand")
    if row is None:
        expect.true("a memory.expand row", False)
    else:
        expect.equal("memory.expand shape", row.shape_entropy_bits, 0.811278)
        expect.equal("memory.expand stage", row.failure_stage_entropy_bits, 1)
        expect.equal("memory.expand churn", row.churn_rate, 0.48)
    expect.equal("churn", report.churn_rate, 0.32)
    expect.equal("flow", report.flow_entropy_bits, 0.666667)
    expect.equal("navigation", report.navigation_ratio, 0.083333)
    expect.equal("per1k", report.totals.invocation_rejections_per_1k, 166.666667)
    return expect.result("wobble-math-exact")


def _ratchet_proposals(run: FixtureRun) -> CheckResult:
    expect = Expect()
    kinds = kinds_of(run.ratchet_proposals)
    expect.equal("proposals", len(kinds), 2)
    expect.equal("kinds", kinds, ["enum-tighten", "noise-quarantine"])
    return expect.result("ratchet-proposals", f"kinds {','.join(kinds)}")


def _apply_purity(run: FixtureRun) -> CheckResult:
    _compiled, before, after = run.ratchet_apply
    if before != after:
        at = next(
            (i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b),
            min(len(before), len(after)),
        )
        detail = (
            f"input surface JSON changed at character {at}: "
            f"{before[at : at + 40]!r} became {after[at : at + 40]!r}"
        )
        return CheckResult("surface-apply-purity", False, detail, (detail,))
    return CheckResult("surface-apply-purity", True, f"input JSON unchanged ({len(before)} chars)")


def _ratchet_monotone(run: FixtureRun) -> CheckResult:
    gate = run.ratchet_gate
    expect = Expect()
    expect.equal("gate passed", gate["passed"], True)
    expect.equal("before.score", run.ratchet_before.score, 0.323019)
    expect.equal("after.score", run.ratchet_after.score, 0.304789)
    expect.equal("delta", gate["delta"], -0.01823)
    return expect.result(
        "ratchet-monotone",
        f"{js_string(run.ratchet_before.score)} → {js_string(run.ratchet_after.score)}"
        f" (delta {js_string(gate['delta'])})",
    )


def _ratchet_converged(run: FixtureRun) -> CheckResult:
    expect = Expect()
    expect.equal("second-round proposals", run.ratchet_round_two, [])
    return expect.result("ratchet-converged", "second round proposes nothing")


def _compiler_loop(run: FixtureRun) -> CheckResult:
    outcome = run.compiled
    surface = run.fixtures.ratchet_surface
    expect = Expect()
    expect.equal("status", outcome.status, "compiled")
    expect.equal("report.score", outcome.report.score, 0.323019)
    gate = outcome.gate or {}
    expect.equal("gate.passed", gate.get("passed"), True)
    expect.equal("after.score", outcome.after.score if outcome.after else None, 0.304789)
    expect.equal("gate.delta", gate.get("delta"), -0.01823)
    artifact = outcome.artifact or {}
    overlays = artifact.get("actions") or []
    expect.equal("overlays", [entry.get("ref") for entry in overlays], ["mcp.report.render"])
    if overlays:
        expect.equal(
            "overlay baseSchemaDigest",
            overlays[0].get("baseSchemaDigest"),
            schema_digest(schema_of(surface, "mcp.report.render")),
        )
        expect.equal(
            "overlay format.enum",
            enum_of({"actions": overlays}, overlays[0]["ref"], "format"),
            ["pdf", "html"],
        )
    expect.equal(
        "quarantined",
        artifact.get("quarantined"),
        [
            {
                "ref": "mcp.flaky.run",
                "baseSchemaDigest": schema_digest(schema_of(surface, "mcp.flaky.run")),
            }
        ],
    )
    expect.equal("ledger entries", len(artifact.get("applied") or []), 2)
    return expect.result(
        "compiler-loop",
        f"{outcome.status} · {len(overlays)} overlay · "
        f"{len(artifact.get('quarantined') or [])} quarantine",
    )


def _compiler_converged(run: FixtureRun) -> CheckResult:
    f = run.fixtures
    artifact = run.compiled.artifact
    expect = Expect()
    if artifact is None:
        expect.true("an artifact from the first compile", False, run.compiled.status)
        return expect.result("compiler-converged")
    again = compile_entropy_surface(
        f.ratchet_traces, f.ratchet_surface, f.ratchet_repairs, artifact=artifact
    )
    expect.equal("status", again.status, "converged")
    expect.true("the same artifact object", again.artifact is artifact)
    expect.equal("proposals", again.proposals, [])
    return expect.result("compiler-converged", "converged on the same artifact object")


def _compiled_overlay(run: FixtureRun) -> CheckResult:
    artifact = run.compiled.artifact
    expect = Expect()
    if artifact is None:
        expect.true("an artifact from the compile", False, run.compiled.status)
        return expect.result("compiled-surface-overlay")
    live = copy.deepcopy(run.fixtures.ratchet_surface)
    before = js_stringify(live)
    effective = apply_compiled_surface(live, artifact)
    refs = [action.get("ref") for action in effective.get("actions") or ()]
    expect.true("input unmodified", js_stringify(live) == before)
    expect.equal("actions", len(refs), 2)
    render_enum = enum_of(effective, "mcp.report.render", "format")
    expect.equal("render enum length", len(render_enum or []), 2)
    expect.true("no mcp.flaky.run", "mcp.flaky.run" not in refs, refs)
    return expect.result("compiled-surface-overlay", f"actions {','.join(map(str, refs))}")


def _gate_reject(run: FixtureRun) -> CheckResult:
    case = run.fixtures.gate_reject
    outcome = compile_entropy_surface(
        case["traces"], case["surface"], value_observations=case["valueObservations"]
    )
    gate = outcome.gate or {}
    reasons = [str(reason) for reason in gate.get("reasons") or []]
    expect = Expect()
    expect.equal("status", outcome.status, "rejected")
    expect.equal("gate.passed", gate.get("passed"), False)
    expect.true(
        "a reason mentioning mcp.report.render",
        any("mcp.report.render" in reason for reason in reasons),
        reasons,
    )
    expect.true("no artifact", outcome.artifact is None)
    return expect.result("compiler-gate-reject", "; ".join(reasons) or outcome.status)


def _store_roundtrip(run: FixtureRun) -> CheckResult:
    artifact = run.compiled.artifact
    expect = Expect()
    if run.ports.temporary_store is None:
        expect.true("a temporary artifact store", False)
        return expect.result("compiled-store-roundtrip")
    if artifact is None:
        expect.true("an artifact from the compile", False, run.compiled.status)
        return expect.result("compiled-store-roundtrip")
    with run.ports.temporary_store() as store:
        first = store.save(artifact)
        loaded, error = store.load()
        second = store.save(artifact)
    expect.equal("first save written", first, True)
    expect.equal("load error", error, None)
    expect.true(
        "the loaded artifact JSON-equal to the saved one",
        loaded is not None and canonical_json(loaded) == canonical_json(artifact),
    )
    expect.equal("second save written", second, False)
    return expect.result("compiled-store-roundtrip", "written true · loaded equal · written false")


def _decomposition(run: FixtureRun) -> CheckResult:
    expect = Expect()
    converged, wobble, before = run.converged, run.wobble, run.ratchet_before
    expect.equal("converged static", converged.static_score, 0.21875)
    expect.equal("converged behavioral", converged.behavioral_score, 0)
    expect.equal("wobble static", wobble.static_score, 0)
    expect.equal("wobble behavioral", wobble.behavioral_score, wobble.score)
    expect.equal("ratchet static", before.static_score, 0.036458)
    expect.equal("ratchet behavioral", before.behavioral_score, 0.286561)
    for name, report in (("converged", converged), ("wobble", wobble), ("ratchet", before)):
        gap = abs(report.static_score + report.behavioral_score - report.score)
        expect.true(f"{name} static + behavioral == score within 1e-6", gap < 1e-6, gap)
    return expect.result(
        "score-decomposition",
        f"ratchet static {js_string(before.static_score)} behavioral"
        f" {js_string(before.behavioral_score)}",
    )


def _structure(run: FixtureRun) -> CheckResult:
    proposals = run.structure_proposals
    kinds = kinds_of(proposals)
    expect = Expect()
    fuses = [p for p in proposals if p.get("kind") == "sequence-fuse"]
    expect.true(
        "a sequence-fuse [memory.recall, memory.expand, state.get] with 3 occurrences",
        any(
            p.get("sequence") == ["memory.recall", "memory.expand", "state.get"]
            and p.get("occurrences") == 3
            for p in fuses
        ),
        fuses,
    )
    splits = [p for p in proposals if p.get("kind") == "overload-split"]
    clusters = [[c.get("keys") for c in p.get("clusters") or []] for p in splits]
    expect.true(
        "an overload-split with clusters [[key,value],[limit,prefix]]",
        [["key", "value"], ["limit", "prefix"]] in clusters,
        clusters,
    )
    expect.true(
        "no enum-tighten or noise-quarantine",
        not {"enum-tighten", "noise-quarantine"} & set(kinds),
        kinds,
    )
    return expect.result("structure-proposals", f"kinds {','.join(kinds)}")


def _ingestion(run: FixtureRun) -> CheckResult:
    totals = run.ingestion_report.totals
    expect = Expect()
    expect.equal("traces", len(run.ingestion.traces), 2)
    expect.equal("operations", totals.operations, 10)
    expect.equal("succeeded", totals.succeeded, 9)
    expect.equal("failed", totals.failed, 1)
    return expect.result("session-jsonl-ingestion")


def _attribution(run: FixtureRun) -> CheckResult:
    rows = [
        [row.model, row.operations, row.succeeded, row.behavioral_score]
        for row in run.ingestion_report.by_model
    ]
    expect = Expect()
    expect.equal(
        "byModel [model, operations, succeeded, behavioral]",
        rows,
        [["coralbricks/glm-5.3-fp4", 8, 8, 0], ["zro/kimi-k3", 2, 1, 0]],
    )
    return expect.result(
        "session-model-attribution", "models " + ",".join(str(row[0]) for row in rows)
    )


def _audit_observations(run: FixtureRun) -> CheckResult:
    observations = list(run.ingestion.value_observations)
    traces = run.ingestion.traces
    surface = run.fixtures.annotated_surface
    expect = Expect()
    expect.equal("observations", len(observations), 11)
    render = [o for o in observations if o.ref == "mcp.report.render"]
    expect.equal("render observations", len(render), 8)
    report = measure(traces, surface)
    trace_only = kinds_of(propose(report, traces, surface))
    expect.true(
        "trace-only proposals without enum-tighten or declare-enum",
        not {"enum-tighten", "declare-enum"} & set(trace_only),
        trace_only,
    )
    with_values = propose(report, traces, surface, None, observations)
    declared = [
        [p.get("ref"), p.get("key"), p.get("values")]
        for p in with_values
        if p.get("kind") == "declare-enum"
    ]
    expect.true(
        "a declare-enum mcp.report.render.format [pdf, html]",
        ["mcp.report.render", "format", ["pdf", "html"]] in declared,
        declared,
    )
    return expect.result(
        "audit-value-observations", f"{len(observations)} observations ({len(render)} render)"
    )


def _closed_domain(run: FixtureRun) -> CheckResult:
    case = run.fixtures.closed_domain
    outcome = compile_entropy_surface(case["traces"], case["surface"])
    expect = Expect()
    expect.equal("status", outcome.status, "converged")
    expect.true("no artifact", outcome.artifact is None)
    expect.equal("proposals", outcome.proposals, [])
    return expect.result("closed-domain-guard", outcome.status)


def _pooled(run: FixtureRun) -> CheckResult:
    case = run.fixtures.pooled
    once: PoolMerge = merge_observation_window(None, case["windows"])
    again: PoolMerge = merge_observation_window(once.file, case["windows"])
    expect = Expect()
    expect.equal("first merge", once.merged_sessions, 2)
    expect.equal("second merge", again.merged_sessions, 0)
    expect.equal("second skipped", again.skipped_sessions, 2)
    expect.true("identical pool file", js_stringify(again.file) == js_stringify(once.file))
    observations = pool_to_value_observations(once.file)
    traces, surface = case["traces"], case["surface"]
    proposals = propose(measure(traces, surface), traces, surface, None, observations)
    tightens = [
        [p.get("ref"), p.get("key"), p.get("values"), p.get("calls")]
        for p in proposals
        if p.get("kind") == "enum-tighten"
    ]
    expect.equal(
        "enum-tighten [ref, key, values, calls]",
        tightens,
        [["mcp.flags.set", "level", ["info", "error", "warn"], 9]],
    )
    return expect.result("pooled-evidence", "merged 2 then 0 (2 skipped)")


def _trial_audit(run: FixtureRun) -> CheckResult:
    case = run.fixtures.trial
    trial = run_entropy_trial(case["traces"], case["live"], case["artifact"], case["auditCalls"])
    expect = Expect()
    expect.equal("operations", trial.totals.get("operations"), 3)
    expect.equal("bothAccept", trial.totals.get("bothAccept"), 2)
    expect.equal("tighteningCost", trial.totals.get("tighteningCost"), 1)
    expect.equal("verdict", trial.verdict, "costly")
    return expect.result("trial-audit-replay")


CHECKS: tuple[Check, ...] = (
    Check(
        "determinism-double-run",
        "measuring WOBBLE twice gives equal hashes",
        "V2-CV-07",
        _determinism,
    ),
    Check("converged-corpus-exact", "CONVERGED with its surface, exactly", "V2-CV-06", _converged),
    Check("wobble-math-exact", "WOBBLE's per-ref and global terms, exactly", "V2-CV-07", _wobble),
    Check(
        "ratchet-proposals",
        "RATCHET proposes one enum-tighten, one noise-quarantine",
        "V2-CV-08",
        _ratchet_proposals,
    ),
    Check(
        "surface-apply-purity",
        "applying proposals leaves the input byte-identical",
        "V2-CV-08",
        _apply_purity,
    ),
    Check(
        "ratchet-monotone",
        "the gate passes with the spec's scores and delta",
        "V2-CV-09",
        _ratchet_monotone,
    ),
    Check(
        "ratchet-converged",
        "a second round on the compiled surface proposes nothing",
        "V2-CV-09",
        _ratchet_converged,
    ),
    Check(
        "compiler-loop",
        "compile: one overlay, one quarantine, two ledger entries",
        "V2-CV-10",
        _compiler_loop,
    ),
    Check(
        "compiler-converged",
        "recompiling converges on the same artifact object",
        "V2-CV-10",
        _compiler_converged,
    ),
    Check(
        "compiled-surface-overlay",
        "the artifact overlays a fresh live surface purely",
        "V2-CV-11",
        _compiled_overlay,
    ),
    Check(
        "compiler-gate-reject", "a divergent corpus is rejected by replay", "V2-CV-13", _gate_reject
    ),
    Check(
        "compiled-store-roundtrip",
        "save, load and a no-op save in a temporary agent dir",
        "V2-CV-11",
        _store_roundtrip,
    ),
    Check(
        "score-decomposition",
        "static + behavioral == score with the spec's splits",
        "V2-CV-09",
        _decomposition,
    ),
    Check(
        "structure-proposals",
        "STRUCTURE_HL fuses a sequence and splits an overload",
        "V2-CV-16",
        _structure,
    ),
    Check(
        "session-jsonl-ingestion",
        "the ingestion JSONL yields 2 traces of 10 operations",
        "V2-CV-17",
        _ingestion,
    ),
    Check("session-model-attribution", "byModel attributes both models", "V2-CV-17", _attribution),
    Check(
        "audit-value-observations",
        "audits give 11 observations and a declare-enum",
        "V2-CV-17",
        _audit_observations,
    ),
    Check("closed-domain-guard", "a free string never gets an enum", "V2-CV-21", _closed_domain),
    Check("pooled-evidence", "the pool merges once and feeds an enum-tighten", "V2-CV-22", _pooled),
    Check("trial-audit-replay", "audits replay in the trial", "V2-CV-28", _trial_audit),
)
CHECK_IDS: tuple[str, ...] = tuple(check.id for check in CHECKS)
CORPUS_CHECK_IDS: tuple[str, ...] = ("corpus-mode", "trial-mode", "trial-costs")


def check_by_id(check_id: str) -> Check:
    """The check with this id (``KeyError`` when there is none)."""
    for check in CHECKS:
        if check.id == check_id:
            return check
    raise KeyError(check_id)


def run_check(check: Check, run: FixtureRun) -> CheckResult:
    """Run one check; an exception is a failed check naming it (the run never aborts)."""
    try:
        return check.run(run)
    except Exception as error:
        evidence = f"raised {type(error).__name__}: {error}"
        return CheckResult(check.id, False, evidence, (evidence,))
