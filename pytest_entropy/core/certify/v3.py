"""The certification check list of metric v3 (notes §9.2, CV-30), as data.

Every check recomputes its values from the fixtures of :mod:`.v3_fixtures` and states the
upstream's expectation exactly; a passing check's evidence is empty, as upstream's is, and a
failing one names what differed in its ``details`` (never serialised).

The two effects the list needs come in as :class:`~pytest_entropy.core.certify.fixtures.Ports`:
a scanner of session lines that follows metric v3's ingestion, and a temporary store that
loads and saves version-2 artifacts.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_entropy.core.canonical import stable_json_hash
from pytest_entropy.core.certify.fixtures import CERTIFICATION_KIND, CheckResult
from pytest_entropy.core.certify.v3_fixtures import (
    AUDIT_SCHEMA,
    CANONICAL,
    CERTIFICATION_VERSION_V3,
    REF,
    SCHEMA,
    SPILLED,
    V3Run,
    ingestion_lines,
    measure_v3,
    unguarded_line,
)
from pytest_entropy.core.certify.v3_fixtures import same as _same
from pytest_entropy.core.jscompat import js_string
from pytest_entropy.core.meter import report_hash
from pytest_entropy.core.v3.artifact import (
    apply_compiled_surface,
    merge_compiled_surfaces,
    parse_compiled_surface_artifact,
)
from pytest_entropy.core.v3.compiler import compile_entropy_surface_v3
from pytest_entropy.core.v3.normal_form import (
    apply_normal_form_plan,
    derive_normal_form_plan,
    proves_normal_form_plan,
)
from pytest_entropy.core.v3.trial import run_entropy_trial_v3

__all__ = [
    "CERTIFICATION_VERSION_V3",
    "V3_CHECKS",
    "V3_CHECK_IDS",
    "V3Check",
    "V3Run",
    "ingestion_lines",
    "measure_v3",
    "run_v3_checks",
    "v3_certification_report",
    "v3_summary_lines",
]

METRIC_VERSION: Final = 3

# ------------------------------------------------------------------------ the checks


def _metric_exact(run: V3Run) -> bool:
    report = run.report
    return (
        report.metric_version == 3
        and report.score == 0.333333
        and report.behavioral_score == report.score
        and report.totals.invocation_rejections == 1
    )


def _sample_count(run: V3Run) -> bool:
    report, repeated = run.report, run.repeated
    return (
        repeated.score == report.score
        and repeated.static_score == report.static_score
        and repeated.by_model[0].behavioral_score == report.by_model[0].behavioral_score
    )


def _diagnostics(run: V3Run) -> bool:
    return run.report.static_score > 0 and measure_v3(run.traces).score == run.report.score


def _allfail(run: V3Run) -> bool:
    return run.allfail.score == 1 and run.allfail.behavioral_score == 1


def _determinism(run: V3Run) -> bool:
    return bool(report_hash(run.report) == report_hash(measure_v3(run.traces, run.live)))


def _static_compilation(run: V3Run) -> bool:
    artifact = run.artifact
    return (
        run.compiled.status == "compiled"
        and artifact["version"] == 2
        and artifact["actions"] == []
        and artifact["quarantined"] == []
        and proves_normal_form_plan(run.plan, SCHEMA)
    )


def _empty_corpus(run: V3Run) -> bool:
    empty = compile_entropy_surface_v3([], run.live).artifact
    return empty is not None and _same(empty["normalizations"], run.artifact["normalizations"])


def _historical(run: V3Run) -> bool:
    compiled = run.compiled
    return (
        compiled.after is compiled.report
        and compiled.after.score == run.report.score
        and (compiled.gate or {}).get("delta") == 0
        and stable_json_hash({"traces": run.traces, "surface": run.live}) == run.snapshot
    )


def _compile_determinism(run: V3Run) -> bool:
    again = compile_entropy_surface_v3(run.traces, run.live)
    return _same(run.compiled.to_json(), again.to_json())


def _converge(run: V3Run) -> bool:
    converged = compile_entropy_surface_v3(run.traces, run.live, artifact=run.artifact)
    return converged.status == "converged" and converged.artifact is run.artifact


def _static_preservation(run: V3Run) -> bool:
    schema = run.live["actions"][0]["inputSchema"]
    return apply_compiled_surface(run.live, run.artifact) is run.live and _same(schema, SCHEMA)


def _canonical_identity(run: V3Run) -> bool:
    for member in SCHEMA["properties"]["outputFormat"]["enum"]:
        args = {"outputFormat": member, "limit": 1}
        result = apply_normal_form_plan(REF, SCHEMA, args, run.plan)
        if result.args is not args or result.witness is not None:
            return False
    return True


def _idempotence(run: V3Run) -> bool:
    once = apply_normal_form_plan(REF, SCHEMA, SPILLED, run.plan)
    twice = apply_normal_form_plan(REF, SCHEMA, once.args, run.plan)
    return (
        _same(once.args, CANONICAL)
        and once.witness is not None
        and len(once.witness["rules"]) == 4
        and twice.args is once.args
        and twice.witness is None
    )


def _refusal(run: V3Run) -> bool:
    refused = [
        {**CANONICAL, "output-format": "PDF"},
        {"output-format": "PDF", "output_format": "HTML", "limit": 1},
        {**CANONICAL, "limit": "02"},
        {**CANONICAL, "limit": "9007199254740993"},
        {**SPILLED, "unknown": True},
    ]
    if any(apply_normal_form_plan(REF, SCHEMA, a, run.plan).args is not a for a in refused):
        return False
    ambiguous = copy.deepcopy(SCHEMA)
    ambiguous["properties"]["outputFormat"] = {"type": "string", "enum": ["a-b", "a_b"]}
    args = {"outputFormat": "A B", "limit": 1}
    plan = derive_normal_form_plan(REF, ambiguous)
    return apply_normal_form_plan(REF, ambiguous, args, plan).args is args


def _unsupported(run: V3Run) -> bool:
    return derive_normal_form_plan(REF, {**SCHEMA, "additionalProperties": True}) is None


def _forged(run: V3Run) -> bool:
    forged = {**run.plan, "rules": run.plan["rules"][1:]}
    merged = merge_compiled_surfaces(None, {**run.artifact, "normalizations": [forged]}, run.live)
    return (
        not proves_normal_form_plan(forged, SCHEMA)
        and merged["droppedNormalizations"] == 1
        and merged["file"]["normalizations"] == []
        and apply_normal_form_plan(REF, SCHEMA, SPILLED, forged).args is SPILLED
    )


def _drift(run: V3Run) -> bool:
    drift = {**SCHEMA, "required": ["note"]}
    drifted = {"version": 1, "actions": [{"ref": REF, "inputSchema": drift}]}
    return (
        not proves_normal_form_plan(run.plan, drift)
        and apply_normal_form_plan(REF, drift, SPILLED, run.plan).args is SPILLED
        and merge_compiled_surfaces(None, run.artifact, drifted)["droppedNormalizations"] == 1
    )


def _exact_merge(run: V3Run) -> bool:
    merged = merge_compiled_surfaces(None, run.artifact, run.live)
    return _same(merged["file"]["normalizations"], run.artifact["normalizations"])


def _legacy(run: V3Run) -> bool:
    migrated = merge_compiled_surfaces(None, run.legacy, run.live)
    recompiled = compile_entropy_surface_v3(run.traces, run.live, artifact=run.legacy).artifact
    return (
        parse_compiled_surface_artifact(run.legacy) is not None
        and apply_compiled_surface(run.live, run.legacy) is run.live
        and migrated["droppedOverlays"] == 1
        and migrated["droppedQuarantines"] == 1
        and migrated["file"]["actions"] == []
        and migrated["file"]["quarantined"] == []
        and recompiled is not None
        and recompiled["version"] == 2
    )


def _store_roundtrip(run: V3Run) -> bool:
    if run.ports.temporary_store is None:
        return False
    with run.ports.temporary_store() as store:
        store.save(run.artifact)
        loaded, _ = store.load()
    return loaded is not None and _same(loaded, run.artifact)


def _requires_envelope(run: V3Run) -> bool:
    unguarded = run.ports.scan_lines([unguarded_line()])
    return (
        len(unguarded.traces) == 0
        and len(unguarded.audit_calls) == 0
        and len(unguarded.value_observations) == 0
    )


def _audit_args(call: Any) -> tuple[str, Any]:
    return (call.ref, call.args) if hasattr(call, "ref") else (call["ref"], call["args"])


def _verbatim_audits(run: V3Run) -> bool:
    evidence = run.ingestion
    audits = [_audit_args(call) for call in evidence.audit_calls]
    render = [args for ref, args in audits if ref == REF]
    traces = list(evidence.traces)
    return (
        len(traces) == 2
        and run.ingestion_report.totals.operations == 10
        and len(render) == 8
        and any(type(args) is dict and args.get("format") == "html" for args in render)
        and all(_same(op[1] if isinstance(op, tuple) else op["args"], {}) for op in _ops(traces[1]))
    )


def _ops(trace: Any) -> list[Any]:
    return list(trace.operations if hasattr(trace, "operations") else trace["operations"])


def _model_attribution(run: V3Run) -> bool:
    rows = [[row.model, row.action_operations] for row in run.ingestion_report.by_model]
    return _same(rows, [["coralbricks/glm-5.3-fp4", 8], ["zro/kimi-k3", 2]])


def _value_observations(run: V3Run) -> bool:
    for row in run.ingestion.value_observations:
        value = row.to_json() if hasattr(row, "to_json") else row
        if (
            value.get("ref") == REF
            and value.get("key") == "format"
            and value.get("value") == "html"
        ):
            return True
    return False


def _trial_verbatim(run: V3Run) -> bool:
    live = {"version": 1, "actions": [{"ref": REF, "inputSchema": AUDIT_SCHEMA}]}
    artifact = compile_entropy_surface_v3([], live).artifact
    trial = run_entropy_trial_v3(run.ingestion.traces, live, artifact, run.ingestion.audit_calls)
    totals = trial.totals
    return totals["operations"] == 8 and totals["bothAccept"] == 8 and totals["bothReject"] == 0


def _same_normalizer(run: V3Run) -> bool:
    trial, score = run.trial, run.report.score
    totals = trial.totals
    return (
        totals["normalizationWin"] == 1
        and totals["bothAccept"] == 1
        and totals["operations"] == 2
        and totals["canonicalIdentityChecks"] == 1
        and totals["canonicalIdentityCost"] == 0
        and totals["idempotenceCost"] == 0
        and trial.declared_score == score
        and trial.effective_score == score
        and trial.delta == 0
    )


def _no_quarantine_wins(run: V3Run) -> bool:
    trial = run_entropy_trial_v3(run.traces, run.live, run.legacy)
    totals = trial.totals
    return (
        totals["quarantineWin"] == 0
        and totals["typedFailureWin"] == 0
        and totals["tighteningCost"] == 0
        and totals["bothAccept"] == 2
        and trial.verdict == "no-evidence"
    )


@dataclass(frozen=True, slots=True)
class V3Check:
    """One v3 check: its id, what it asserts and the predicate that decides it."""

    id: str
    asserts: str
    run: Callable[[V3Run], bool] = field(repr=False)

    def result(self, run: V3Run) -> CheckResult:
        """Run the predicate; an exception fails the check and is named in ``details``."""
        try:
            passed = bool(self.run(run))
        except Exception as error:
            return CheckResult(self.id, False, "", (f"raised {type(error).__name__}: {error}",))
        return CheckResult(self.id, passed, "", () if passed else (f"expected {self.asserts}",))


V3_CHECKS: Final = (
    V3Check("metric-v3-exact", "score 0.333333 = behavioralScore, 1 rejection", _metric_exact),
    V3Check("sample-count-invariance", "tripling the corpus keeps the scores", _sample_count),
    V3Check("diagnostics-not-objective", "the surface never changes the score", _diagnostics),
    V3Check("allfail-nonzero", "an all-rejected corpus scores 1", _allfail),
    V3Check("determinism-double-run", "two measurements hash alike", _determinism),
    V3Check("static-compilation", "a version-2 artifact of proven plans", _static_compilation),
    V3Check("empty-corpus-compilation", "no corpus compiles the same plans", _empty_corpus),
    V3Check("historical-outcomes-unchanged", "after is the report, delta 0", _historical),
    V3Check("compile-determinism", "two compiles hash alike", _compile_determinism),
    V3Check("identical-plans-converge", "recompiling converges on the artifact", _converge),
    V3Check(
        "static-preservation", "the artifact leaves the surface as it is", _static_preservation
    ),
    V3Check("canonical-identity", "canonical calls come back identical", _canonical_identity),
    V3Check("normalization-idempotence", "normalising twice changes nothing", _idempotence),
    V3Check("ambiguity-and-loss-refusal", "ambiguous or lossy calls stay as they are", _refusal),
    V3Check("unsupported-schema-no-plan", "an open schema has no plan", _unsupported),
    V3Check("forged-plan-refusal", "a forged plan proves nothing", _forged),
    V3Check("schema-drift-refusal", "a drifted schema refuses the plan", _drift),
    V3Check("exact-plan-merge", "merging keeps the exact plans", _exact_merge),
    V3Check("legacy-inert-migration", "legacy restrictions are inert and migrate", _legacy),
    V3Check("artifact-store-roundtrip", "the store saves and loads the artifact", _store_roundtrip),
    V3Check("ingestion-requires-trace-envelope", "no envelope, no records", _requires_envelope),
    V3Check("ingestion-verbatim-audits", "audits keep the verbatim arguments", _verbatim_audits),
    V3Check("ingestion-model-attribution", "both models attributed", _model_attribution),
    V3Check("ingestion-value-observations", "audits give value observations", _value_observations),
    V3Check("ingestion-trial-verbatim", "the trial replays the audits", _trial_verbatim),
    V3Check("same-normalizer-trial", "the trial uses the runtime normaliser", _same_normalizer),
    V3Check("no-quarantine-wins", "a legacy artifact wins nothing", _no_quarantine_wins),
)
V3_CHECK_IDS: Final = tuple(check.id for check in V3_CHECKS)


def run_v3_checks(run: V3Run) -> list[CheckResult]:
    """Every v3 fixture check, in the upstream's order."""
    return [check.result(run) for check in V3_CHECKS]


def v3_certification_report(
    fixtures: dict[str, Any],
    checks: Sequence[CheckResult],
    *,
    corpus: dict[str, Any] | None = None,
    surface: dict[str, Any] | None = None,
    trial: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The v3 certification report: kind, ``version`` 2, ``metricVersion`` 3, fixtures,
    the optional corpus sections and the evaluation."""
    report: dict[str, Any] = {
        "kind": CERTIFICATION_KIND,
        "version": CERTIFICATION_VERSION_V3,
        "metricVersion": METRIC_VERSION,
        "fixtures": fixtures,
    }
    if corpus is not None:
        report["corpus"] = corpus
    if surface is not None:
        report["surface"] = surface
    if trial is not None:
        report["trial"] = trial
    report["evaluation"] = {
        "passed": all(check.passed for check in checks),
        "checks": [check.to_json() for check in checks],
        "failed": [check.id for check in checks if not check.passed],
    }
    return report


def v3_summary_lines(report: dict[str, Any]) -> list[str]:
    """The human summary of a v3 certification report, in the upstream's words."""
    lines = [f"Entropy certification (metric v{report['metricVersion']}; offline normal forms)"]
    corpus = report.get("corpus")
    if corpus is not None:
        lines.append(
            f"  corpus: {corpus['totals']['actionOperations']} action operations;"
            f" rejection rate {js_string(corpus['score'])}"
        )
    surface = report.get("surface")
    if surface is not None:
        lines.append(f"  surface: {surface['actions']} actions; digest {surface['digest'][:12]}")
    trial = report.get("trial")
    if trial is not None:
        lines.append(
            f"  trial: {trial['verdict']}; representation wins"
            f" {trial['totals']['normalizationWin']}; historical score unchanged"
            f" {js_string(trial['declaredScore'])}"
        )
    for check in report["evaluation"]["checks"]:
        status = "PASS" if check["passed"] else "FAIL"
        tail = "" if check["passed"] else f" — {check['evidence']}"
        lines.append(f"  {status} {check['id']}{tail}")
    lines.append("  PASS" if report["evaluation"]["passed"] else "  FAIL")
    return lines
