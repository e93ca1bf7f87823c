"""The certification's v2 check list (spec §12.3) as data, and its report (spec §12.2).

Every check is a :class:`Check` - an id and a pure ``run(FixtureRun) -> CheckResult`` - that
computes its actual values from the spec's fixed corpora (§13.0) and compares them with the
values the spec states, exactly. The two effects a check needs come in as ports from the
non-core runner (:mod:`pytest_entropy.certification`): scanning session lines (the ingestion
layer) and a temporary artifact store (the round-trip check). Nothing here reads files,
imports pytest or looks at a clock.

Corpus mode (§12.1) reads the user's directory, which is I/O; the pure pieces it needs - the
surface summary, the ``corpus-mode`` and ``trial-costs`` checks, the report and its human and
Markdown forms - live here so the CLI and the pytest plugin print the same bytes.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from .artifact import apply_compiled_surface
from .canonical import canonical_json, js_stringify, schema_digest, stable_json_hash
from .compiler import CompileOutcome, compile_entropy_surface
from .corpus import surface_hash
from .fingerprint import surface_freedom_report
from .jscompat import js_string
from .meter import measure, report_hash
from .pool import PoolMerge, merge_observation_window, pool_to_value_observations
from .proposals import Proposal, apply_proposals_to_surface, evaluate_gate
from .proposals import propose_entropy_reductions as propose
from .records import ENTROPY_METRIC_VERSION, AuditCall, Report, Trace, ValueObservation
from .trial import TrialReport, run_entropy_trial

__all__ = [
    "CERTIFICATION_KIND",
    "CHECKS",
    "CHECK_IDS",
    "CORPUS_CHECK_IDS",
    "NO_AGENT_ARTIFACT",
    "SURFACE_REQUIRES_SESSIONS",
    "TRIAL_REQUIRES_SURFACE",
    "ArtifactStore",
    "Check",
    "CheckResult",
    "FixtureRun",
    "Fixtures",
    "LineScanner",
    "Ports",
    "SessionScan",
    "certification_report",
    "check_by_id",
    "corpus_mode_check",
    "markdown_lines",
    "run_check",
    "sessions_not_found",
    "summary_lines",
    "surface_summary",
    "trial_costs_check",
    "trial_mode_failure",
    "trial_summary",
]

CERTIFICATION_KIND = "pi-fabric.entropy-certification"
CERTIFICATION_VERSION = 1
FIXTURES_KIND = "pytest-entropy.certification-fixtures"

# Evidence strings of §12.1, shared by the CLI and the plugin.
SURFACE_REQUIRES_SESSIONS = "--surface requires --sessions"
TRIAL_REQUIRES_SURFACE = "--trial requires --surface"
NO_AGENT_ARTIFACT = "no compiled surface in the agent dir (pass --artifact <path>)"


def sessions_not_found(directory: str) -> str:
    """The ``corpus-mode`` evidence for a missing sessions directory."""
    return f"sessions directory not found: {directory}"


def trial_mode_failure(reason: str) -> CheckResult:
    """The ``trial-mode`` check failing with one of the §12.1 reasons."""
    return CheckResult("trial-mode", False, reason)


# ------------------------------------------------------------------------------ records


@dataclass(frozen=True, slots=True)
class CheckResult:
    """``{id, passed, evidence}``; ``details`` (one line per mismatch) is not serialised."""

    id: str
    passed: bool
    evidence: str
    details: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "passed": self.passed, "evidence": self.evidence}

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> CheckResult:
        return cls(str(value["id"]), bool(value["passed"]), str(value["evidence"]))


class SessionScan(Protocol):
    """What one scan over session lines yields (``ingest.fabric.SessionEvidence``)."""

    @property
    def traces(self) -> Sequence[Trace]: ...

    @property
    def value_observations(self) -> Sequence[ValueObservation]: ...

    @property
    def audit_calls(self) -> Sequence[AuditCall]: ...


LineScanner = Callable[[Sequence[str]], SessionScan]


class ArtifactStore(Protocol):
    """A ``compiled.json`` store in a temporary agent directory (spec §1.8)."""

    def save(self, artifact: Mapping[str, Any]) -> bool:
        """Save under the lock; ``True`` when bytes were written."""
        ...

    def load(self) -> tuple[dict[str, Any] | None, str | None]:
        """``(file, error)``: ``(None, None)`` when there is no file."""
        ...


@dataclass(frozen=True, slots=True)
class Ports:
    """The effects a check may use, supplied by the runner outside the core."""

    scan_lines: LineScanner
    temporary_store: Callable[[], AbstractContextManager[ArtifactStore]] | None = None


@dataclass(frozen=True, slots=True)
class Fixtures:
    """The spec's shared fixtures (§13.0), as shipped in ``corpora/certification``."""

    converged_traces: list[Any]
    converged_surface: dict[str, Any]
    wobble_traces: Sequence[Any]
    ratchet_traces: list[Any]
    ratchet_surface: dict[str, Any]
    ratchet_repairs: list[Any]
    structure_traces: list[Any]
    ingestion_lines: list[str]
    annotated_surface: dict[str, Any]
    gate_reject: dict[str, Any]
    closed_domain: dict[str, Any]
    pooled: dict[str, Any]
    trial: dict[str, Any]

    @classmethod
    def from_json(cls, data: Mapping[str, Any], ingestion_lines: Sequence[str]) -> Fixtures:
        """Build from ``fixtures.json`` and the lines of its ingestion JSONL file."""
        if data.get("kind") != FIXTURES_KIND or data.get("version") != 1:
            raise ValueError(f"not a certification fixtures file (kind {data.get('kind')!r})")
        return cls(
            converged_traces=data["converged"]["traces"],
            converged_surface=data["converged"]["surface"],
            wobble_traces=data["wobble"]["traces"],
            ratchet_traces=data["ratchet"]["traces"],
            ratchet_surface=data["ratchet"]["surface"],
            ratchet_repairs=data["ratchet"]["repairs"],
            structure_traces=data["structure"]["traces"],
            ingestion_lines=list(ingestion_lines),
            annotated_surface=data["ingestion"]["annotatedSurface"],
            gate_reject=data["gateReject"],
            closed_domain=data["closedDomain"],
            pooled=data["pooled"],
            trial=data["trial"],
        )


# ------------------------------------------------------------------ expectations


def _same(actual: Any, expected: Any) -> bool:
    """Exact equality that keeps JavaScript's types apart (``True`` is not ``1``)."""
    if isinstance(actual, bool) or isinstance(expected, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return actual == expected
    if isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
        return len(actual) == len(expected) and all(map(_same, actual, expected))
    if isinstance(expected, dict) and isinstance(actual, dict):
        return actual.keys() == expected.keys() and all(
            _same(actual[key], expected[key]) for key in expected
        )
    return type(actual) is type(expected) and bool(actual == expected)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return js_stringify(value)
    except (TypeError, ValueError):
        return repr(value)


class _Expect:
    """Collects ``label: expected X, got Y`` lines; the evidence is the first mismatches."""

    def __init__(self) -> None:
        self.mismatches: list[str] = []
        self.observed: list[str] = []

    def equal(self, label: str, actual: Any, expected: Any) -> None:
        self.observed.append(f"{label} {_text(actual)}")
        if not _same(actual, expected):
            self.mismatches.append(f"{label}: expected {_text(expected)}, got {_text(actual)}")

    def true(self, label: str, condition: bool, actual: Any = None) -> None:
        shown = "" if actual is None else f" (got {_text(actual)})"
        self.observed.append(label if condition else f"not {label}")
        if not condition:
            self.mismatches.append(f"expected {label}{shown}")

    def result(self, check_id: str, evidence: str | None = None) -> CheckResult:
        if self.mismatches:
            return CheckResult(check_id, False, "; ".join(self.mismatches), tuple(self.mismatches))
        return CheckResult(check_id, True, evidence or " ".join(self.observed))


def _kinds(proposals: Sequence[Mapping[str, Any]]) -> list[str]:
    return [str(proposal.get("kind")) for proposal in proposals]


def _schema_of(surface: Mapping[str, Any], ref: str) -> Any:
    for action in surface.get("actions") or ():
        if action.get("ref") == ref:
            return action.get("inputSchema")
    return None


def _enum_of(surface: Mapping[str, Any], ref: str, key: str) -> Any:
    schema = _schema_of(surface, ref)
    if not isinstance(schema, dict):
        return None
    prop = (schema.get("properties") or {}).get(key)
    return prop.get("enum") if isinstance(prop, dict) else None


# ------------------------------------------------------------------------ the run


class FixtureRun:
    """Everything the fixture checks compute, each computed once on first use."""

    def __init__(self, fixtures: Fixtures, ports: Ports) -> None:
        self.fixtures = fixtures
        self.ports = ports

    @cached_property
    def converged(self) -> Report:
        return measure(self.fixtures.converged_traces, self.fixtures.converged_surface)

    @cached_property
    def wobble(self) -> Report:
        return measure(self.fixtures.wobble_traces)

    @cached_property
    def ratchet_before(self) -> Report:
        f = self.fixtures
        return measure(f.ratchet_traces, f.ratchet_surface, f.ratchet_repairs)

    @cached_property
    def ratchet_proposals(self) -> list[Proposal]:
        f = self.fixtures
        return propose(self.ratchet_before, f.ratchet_traces, f.ratchet_surface, f.ratchet_repairs)

    @cached_property
    def ratchet_apply(self) -> tuple[dict[str, Any], str, str]:
        """``(compiled surface, input JSON before, input JSON after)``."""
        surface = self.fixtures.ratchet_surface
        before = js_stringify(surface)
        compiled = apply_proposals_to_surface(surface, self.ratchet_proposals)
        return compiled, before, js_stringify(surface)

    @cached_property
    def ratchet_after(self) -> Report:
        f = self.fixtures
        return measure(f.ratchet_traces, self.ratchet_apply[0], f.ratchet_repairs)

    @cached_property
    def ratchet_gate(self) -> dict[str, Any]:
        return evaluate_gate(self.ratchet_before, self.ratchet_after)

    @cached_property
    def ratchet_round_two(self) -> list[Proposal]:
        f = self.fixtures
        return propose(
            self.ratchet_after, f.ratchet_traces, self.ratchet_apply[0], f.ratchet_repairs
        )

    @cached_property
    def compiled(self) -> CompileOutcome:
        f = self.fixtures
        return compile_entropy_surface(f.ratchet_traces, f.ratchet_surface, f.ratchet_repairs)

    @cached_property
    def ingestion(self) -> SessionScan:
        return self.ports.scan_lines(self.fixtures.ingestion_lines)

    @cached_property
    def ingestion_report(self) -> Report:
        return measure(self.ingestion.traces)

    @cached_property
    def structure_proposals(self) -> list[Proposal]:
        traces = self.fixtures.structure_traces
        return propose(measure(traces), traces)

    # ---- the report's ``fixtures`` section (spec §12.2)

    def summary(self) -> dict[str, Any]:
        """``fixtures``: one entry per corpus; an entry that raises reports its error."""
        sections: dict[str, Callable[[], dict[str, Any]]] = {
            "converged": self._converged_summary,
            "wobble": self._wobble_summary,
            "ratchet": self._ratchet_summary,
            "compiler": self._compiler_summary,
            "structure": lambda: {"proposals": self.structure_proposals},
            "ingestion": self._ingestion_summary,
        }
        out: dict[str, Any] = {}
        for name, build in sections.items():
            try:
                out[name] = build()
            except Exception as error:  # a broken fixture must not hide the other sections
                out[name] = {"error": f"{type(error).__name__}: {error}"}
        return out

    def _converged_summary(self) -> dict[str, Any]:
        report = self.converged
        return {
            "score": report.score,
            "staticFreedom": report.static_freedom,
            "totals": report.totals.to_json(),
        }

    def _wobble_summary(self) -> dict[str, Any]:
        report = self.wobble
        return {
            "score": report.score,
            "shapeEntropyBits": report.shape_entropy_bits,
            "failureStageEntropyBits": report.failure_stage_entropy_bits,
            "churnRate": report.churn_rate,
            "navigationRatio": report.navigation_ratio,
            "flowEntropyBits": report.flow_entropy_bits,
        }

    def _ratchet_summary(self) -> dict[str, Any]:
        gate = self.ratchet_gate
        return {
            "beforeScore": self.ratchet_before.score,
            "afterScore": self.ratchet_after.score,
            "delta": gate["delta"],
            "proposals": self.ratchet_proposals,
            "gate": gate,
        }

    def _compiler_summary(self) -> dict[str, Any]:
        outcome = self.compiled
        return {
            "status": outcome.status,
            "beforeScore": outcome.report.score,
            "afterScore": outcome.after.score if outcome.after is not None else None,
            "applied": (outcome.artifact or {}).get("applied", []),
        }

    def _ingestion_summary(self) -> dict[str, Any]:
        report = self.ingestion_report
        return {
            "traces": len(self.ingestion.traces),
            "operations": report.totals.operations,
            "valueObservations": len(self.ingestion.value_observations),
            "byModel": [row.to_json() for row in report.by_model],
        }


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
    expect = _Expect()
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
    expect = _Expect()
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
    expect = _Expect()
    kinds = _kinds(run.ratchet_proposals)
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
    expect = _Expect()
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
    expect = _Expect()
    expect.equal("second-round proposals", run.ratchet_round_two, [])
    return expect.result("ratchet-converged", "second round proposes nothing")


def _compiler_loop(run: FixtureRun) -> CheckResult:
    outcome = run.compiled
    surface = run.fixtures.ratchet_surface
    expect = _Expect()
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
            schema_digest(_schema_of(surface, "mcp.report.render")),
        )
        expect.equal(
            "overlay format.enum",
            _enum_of({"actions": overlays}, overlays[0]["ref"], "format"),
            ["pdf", "html"],
        )
    expect.equal(
        "quarantined",
        artifact.get("quarantined"),
        [
            {
                "ref": "mcp.flaky.run",
                "baseSchemaDigest": schema_digest(_schema_of(surface, "mcp.flaky.run")),
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
    expect = _Expect()
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
    expect = _Expect()
    if artifact is None:
        expect.true("an artifact from the compile", False, run.compiled.status)
        return expect.result("compiled-surface-overlay")
    live = copy.deepcopy(run.fixtures.ratchet_surface)
    before = js_stringify(live)
    effective = apply_compiled_surface(live, artifact)
    refs = [action.get("ref") for action in effective.get("actions") or ()]
    expect.true("input unmodified", js_stringify(live) == before)
    expect.equal("actions", len(refs), 2)
    render_enum = _enum_of(effective, "mcp.report.render", "format")
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
    expect = _Expect()
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
    expect = _Expect()
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
    expect = _Expect()
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
    kinds = _kinds(proposals)
    expect = _Expect()
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
    expect = _Expect()
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
    expect = _Expect()
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
    expect = _Expect()
    expect.equal("observations", len(observations), 11)
    render = [o for o in observations if o.ref == "mcp.report.render"]
    expect.equal("render observations", len(render), 8)
    report = measure(traces, surface)
    trace_only = _kinds(propose(report, traces, surface))
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
    expect = _Expect()
    expect.equal("status", outcome.status, "converged")
    expect.true("no artifact", outcome.artifact is None)
    expect.equal("proposals", outcome.proposals, [])
    return expect.result("closed-domain-guard", outcome.status)


def _pooled(run: FixtureRun) -> CheckResult:
    case = run.fixtures.pooled
    once: PoolMerge = merge_observation_window(None, case["windows"])
    again: PoolMerge = merge_observation_window(once.file, case["windows"])
    expect = _Expect()
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
    expect = _Expect()
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


# ----------------------------------------------------------------- corpus mode pieces


def surface_summary(path: str, surface: Mapping[str, Any]) -> dict[str, Any]:
    """``{path, actions, freedomTotal, freedomMean, digest}`` (spec §12.1)."""
    freedom = surface_freedom_report(surface)
    return {
        "path": path,
        "actions": len(freedom["actions"]),
        "freedomTotal": freedom["total"],
        "freedomMean": freedom["mean"],
        "digest": surface_hash(surface),
    }


def corpus_mode_check(files: int, traces: int, report: Report) -> CheckResult:
    """``corpus-mode`` passes iff the corpus has operations."""
    operations = report.totals.operations
    evidence = f"files {files} traces {traces} operations {operations}"
    return CheckResult("corpus-mode", operations > 0, evidence)


def trial_costs_check(trial: TrialReport) -> CheckResult:
    """``trial-costs`` passes iff no held-out successful call is rejected (spec §10)."""
    cost = trial.totals["tighteningCost"]
    evidence = f"{cost} held-out successful calls rejected by the compiled schema"
    return CheckResult("trial-costs", cost == 0, evidence)


def trial_summary(trial: TrialReport) -> dict[str, Any]:
    """``{verdict, declaredScore, effectiveScore, delta, totals, divergences}``."""
    return trial.to_json()


# ---------------------------------------------------------------------- the report


def certification_report(
    fixtures: Mapping[str, Any],
    checks: Sequence[CheckResult],
    *,
    corpus: Mapping[str, Any] | None = None,
    surface: Mapping[str, Any] | None = None,
    trial: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON report of spec §12.2 (serialise it with ``file_text``)."""
    report: dict[str, Any] = {
        "kind": CERTIFICATION_KIND,
        "version": CERTIFICATION_VERSION,
        "metricVersion": ENTROPY_METRIC_VERSION,
        "fixtures": dict(fixtures),
    }
    if corpus is not None:
        report["corpus"] = dict(corpus)
    if surface is not None:
        report["surface"] = dict(surface)
    if trial is not None:
        report["trial"] = dict(trial)
    failed = [check.id for check in checks if not check.passed]
    report["evaluation"] = {
        "passed": not failed,
        "checks": [check.to_json() for check in checks],
        "failed": failed,
    }
    return report


def _num(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return js_string(value)
    return "?"


def _headline_lines(report: Mapping[str, Any]) -> Iterator[str]:
    fixtures = report.get("fixtures") or {}
    converged = fixtures.get("converged") or {}
    wobble = fixtures.get("wobble") or {}
    ratchet = fixtures.get("ratchet") or {}
    yield (
        f"converged: score {_num(converged.get('score'))} · static freedom"
        f" {_num(converged.get('staticFreedom'))}"
    )
    yield (
        f"wobble: shape {_num(wobble.get('shapeEntropyBits'))} bits · stages"
        f" {_num(wobble.get('failureStageEntropyBits'))} · churn {_num(wobble.get('churnRate'))}"
        f" · flow {_num(wobble.get('flowEntropyBits'))}"
    )
    yield (
        f"ratchet: {_num(ratchet.get('beforeScore'))} → {_num(ratchet.get('afterScore'))}"
        f" (delta {_num(ratchet.get('delta'))}) · {len(ratchet.get('proposals') or [])} proposals"
    )
    corpus = report.get("corpus")
    if corpus is not None:
        totals = corpus.get("totals") or {}
        yield (
            f"corpus: {_num(totals.get('operations'))} operations · score"
            f" {_num(corpus.get('score'))} · rejections/1k"
            f" {_num(totals.get('invocationRejectionsPer1k'))}"
        )
    surface = report.get("surface")
    if surface is not None:
        yield (
            f"surface: {_num(surface.get('actions'))} actions · freedom"
            f" {_num(surface.get('freedomTotal'))} (mean {_num(surface.get('freedomMean'))})"
            f" · digest {str(surface.get('digest'))[:12]}"
        )
    trial = report.get("trial")
    if trial is not None:
        totals = trial.get("totals") or {}
        wins = totals.get("typedFailureWin", 0) + totals.get("quarantineWin", 0)
        costs = totals.get("tighteningCost", 0) + totals.get("quarantineCost", 0)
        yield (
            f"trial: {trial.get('verdict')} · score {_num(trial.get('declaredScore'))} →"
            f" {_num(trial.get('effectiveScore'))} (delta {_num(trial.get('delta'))}) · wins"
            f" {wins} · costs {costs}"
        )


def summary_lines(report: Mapping[str, Any]) -> list[str]:
    """The human summary of spec §12.2, one string per line."""
    lines = ["Entropy certification (metric v2)"]
    lines.extend(f"  {line}" for line in _headline_lines(report))
    evaluation = report.get("evaluation") or {}
    for check in evaluation.get("checks") or []:
        if check.get("passed"):
            lines.append(f"  ✓ {check.get('id')}")
        else:
            lines.append(f"  ✗ {check.get('id')} — {check.get('evidence')}")
    lines.append("  PASS" if evaluation.get("passed") else "  FAIL")
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_lines(report: Mapping[str, Any]) -> list[str]:
    """A Markdown summary for CI step summaries (``$GITHUB_STEP_SUMMARY``)."""
    evaluation = report.get("evaluation") or {}
    checks = evaluation.get("checks") or []
    verdict = "PASS" if evaluation.get("passed") else "FAIL"
    failed = len(evaluation.get("failed") or [])
    lines = [
        f"## Entropy certification (metric v2): {verdict}",
        "",
        f"{len(checks) - failed} of {len(checks)} checks passed.",
        "",
    ]
    lines.extend(f"- {_cell(line)}" for line in _headline_lines(report))
    lines += ["", "| Check | Result | Evidence |", "| --- | --- | --- |"]
    for check in checks:
        mark = "✓ pass" if check.get("passed") else "✗ **fail**"
        lines.append(f"| `{check.get('id')}` | {mark} | {_cell(str(check.get('evidence', '')))} |")
    report_digest = stable_json_hash(dict(report))
    lines += ["", f"Report hash `{report_digest}`."]
    return lines
