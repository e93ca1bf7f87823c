"""Replay preservation and compilation (spec §7.5, §8).

``compile_entropy_surface`` is measure -> propose -> apply -> re-measure -> gate + replay:
it never lets the score rise, and never lets a recorded successful call (or an executed
audited call) stop validating.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_entropy.core.artifact import (
    MAX_COMPILED_SURFACE_PROPOSALS,
    Artifact,
    apply_compiled_surface,
)
from pytest_entropy.core.canonical import json_copy, stable_json_hash
from pytest_entropy.core.compile_digests import CompileDigests, compile_digests
from pytest_entropy.core.gate import evaluate_gate
from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.proposals import (
    AUTO_APPLY_PROPOSAL_KINDS,
    Proposal,
    ProposalEvidence,
)
from pytest_entropy.core.records import (
    AuditCall,
    RepairRow,
    Report,
    Trace,
    ValueObservation,
    action_schemas,
    audit_fields,
    operations_of,
)
from pytest_entropy.core.validation import CallChecks, accepts

__all__ = [
    "ABSENT_REASON",
    "INVALID_REASON",
    "CompileInputs",
    "CompileOutcome",
    "DigestCounts",
    "EvidenceCounts",
    "ReplayCounts",
    "ReplayTally",
    "compile_entropy_surface",
    "compile_from_evidence",
    "compile_inputs",
    "replay_successful_calls",
    "touched_refs",
]

ABSENT_REASON = "absent from the candidate surface"
INVALID_REASON = "recorded arguments no longer validate against the compiled schema"


@dataclass(slots=True)
class ReplayCounts:
    """What a replay found, as plain data that travels between processes.

    ``audit_invalid``: per touched ref with audit calls, how many of them the candidate
    rejects, in order of the ref's first audit call. ``trace_runs``: ``[ref, reason,
    repeats]`` runs of trace violations in corpus order. Small however large the corpus,
    and ``merge`` of consecutive pieces equals one pass; an empty one is the start.
    """

    audit_invalid: dict[str, int] = field(default_factory=dict)
    trace_runs: list[list[Any]] = field(default_factory=list)

    def add_violation(self, ref: str, reason: str, repeats: int = 1) -> None:
        runs = self.trace_runs
        if runs and runs[-1][0] == ref and runs[-1][1] == reason:
            runs[-1][2] += repeats
        else:
            runs.append([ref, reason, repeats])

    def merge(self, other: ReplayCounts) -> ReplayCounts:
        """Fold in the counts of the input that follows; returns ``self``."""
        for ref, invalid in other.audit_invalid.items():
            self.audit_invalid[ref] = self.audit_invalid.get(ref, 0) + invalid
        for ref, reason, repeats in other.trace_runs:
            self.add_violation(ref, reason, repeats)
        return self


class ActionSchemas(dict[str, Any]):
    """``action_schemas(surface)`` computed once, for tallies built per file from one surface."""

    __slots__ = ()


def _schemas_of(surface: Mapping[str, Any]) -> dict[str, Any]:
    return surface if isinstance(surface, ActionSchemas) else action_schemas(surface)


class ReplayTally:
    """The replay of spec §7.5 as a mergeable accumulator.

    ``audited`` are the touched refs with at least one audit call anywhere in the corpus
    (audits take precedence per ref, wholesale, so that set must be known up front when the
    corpus is replayed in pieces). What it found is kept in :attr:`counts`
    (:class:`ReplayCounts`); the schemas stay with the tally, so a worker sends back only
    the counts and the client merges them into its own tally.
    """

    __slots__ = ("_audited", "_before", "_candidate", "_checks", "_touched", "counts")

    def __init__(
        self,
        candidate: Mapping[str, Any],
        before: Mapping[str, Any],
        touched: Iterable[str],
        audited: Iterable[str] = (),
        checks: CallChecks | None = None,
    ) -> None:
        self._candidate = _schemas_of(candidate)
        self._before = _schemas_of(before)
        self._touched = set(touched)
        self._audited = set(audited)
        # ``checks`` (one per command) answers ``accepts`` with compiled checks; None: accepts.
        self._checks = checks
        self.counts = ReplayCounts()

    def _accepts(self, schema: Any, args: Any) -> bool:
        checks = self._checks
        return accepts(schema, args) if checks is None else checks(schema)(args)

    def add_audit(self, call: AuditCall | Mapping[str, Any]) -> None:
        ref, args = audit_fields(call)
        if ref not in self._touched:
            return
        audit_invalid = self.counts.audit_invalid
        invalid = audit_invalid.get(ref)
        if invalid is None:
            invalid = audit_invalid[ref] = 0
        schema = self._candidate.get(ref)
        if ref not in self._candidate:
            return  # one "absent" violation for the ref, however many calls
        if ref in self._before and not self._accepts(self._before[ref], args):
            return  # never executed: the live schema already refused it
        if not self._accepts(schema, args):
            audit_invalid[ref] = invalid + 1

    def add_trace(self, trace: Trace | Mapping[str, Any]) -> None:
        self._add_operations(operations_of(trace))

    def add_signed(self, signed: Sequence[Sequence[Any]], task_key: str, model: str | None) -> None:
        """:meth:`add_trace` of the trace a scanner builds from its guarded operations
        ``signed`` (``(ref, args, outcome, failure stage, signature)``), not built."""
        self._add_operations(signed)

    def _add_operations(self, operations: Sequence[Sequence[Any]]) -> None:
        touched, audited, candidate = self._touched, self._audited, self._candidate
        add_violation = self.counts.add_violation
        for op in operations:
            ref, args, outcome = op[0], op[1], op[2]
            if outcome != "succeeded" or ref not in touched or ref in audited:
                continue
            if ref.startswith("fabric."):
                continue
            if ref not in candidate:
                add_violation(ref, ABSENT_REASON)
            elif not self._accepts(candidate[ref], args):
                add_violation(ref, INVALID_REASON)

    def merge(self, counts: ReplayCounts) -> ReplayTally:
        """Fold in the counts of the input that follows; returns ``self``."""
        self.counts.merge(counts)
        return self

    def violations(self) -> list[dict[str, str]]:
        """Replay violations ``{ref, reason}`` in the reference's order: audited refs first
        (by first audit call), then trace calls in corpus order."""
        out: list[dict[str, str]] = []
        for ref, invalid in self.counts.audit_invalid.items():
            if ref not in self._candidate:
                out.append({"ref": ref, "reason": ABSENT_REASON})
            else:
                out.extend({"ref": ref, "reason": INVALID_REASON} for _ in range(invalid))
        for ref, reason, repeats in self.counts.trace_runs:
            out.extend({"ref": ref, "reason": reason} for _ in range(repeats))
        return out


def replay_successful_calls(
    candidate: Mapping[str, Any],
    before: Mapping[str, Any],
    traces: Iterable[Trace | Mapping[str, Any]],
    touched: Iterable[str],
    audit_calls: Iterable[AuditCall | Mapping[str, Any]] | None = None,
) -> list[dict[str, str]]:
    """Replay violations ``{ref, reason}`` (spec §7.5).

    Audits take precedence over projected trace arguments per ref, wholesale: a ref with
    any audit call in scope is judged by its audits only, and audits the ``before`` schema
    already rejected are not protected (those calls never executed).
    """
    touched_set = set(touched)
    audits = list(audit_calls) if audit_calls is not None else []
    audited = {ref for ref in (audit_fields(call)[0] for call in audits) if ref in touched_set}
    tally = ReplayTally(candidate, before, touched_set, audited)
    for call in audits:
        tally.add_audit(call)
    for trace in traces:
        tally.add_trace(trace)
    return tally.violations()


def touched_refs(candidate: Mapping[str, Any], effective: Mapping[str, Any]) -> set[str]:
    """Refs whose schema the candidate changed, plus refs it removed (spec §8.2)."""
    effective_schemas = action_schemas(effective)
    candidate_schemas = action_schemas(candidate)
    touched = {
        ref
        for ref, schema in candidate_schemas.items()
        if ref not in effective_schemas
        or stable_json_hash(schema) != stable_json_hash(effective_schemas[ref])
    }
    touched.update(ref for ref in effective_schemas if ref not in candidate_schemas)
    return touched


@dataclass(frozen=True, slots=True)
class CompileOutcome:
    """``{status, artifact?, report, after?, proposals, gate?}`` (spec §1.11).

    ``artifact`` is the new artifact when ``compiled`` and the *input* artifact object
    itself (possibly ``None``) when ``converged`` or ``rejected``.
    """

    status: str
    report: Report
    proposals: list[Proposal]
    artifact: Artifact | None = None
    after: Report | None = None
    gate: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status}
        if self.artifact is not None:
            out["artifact"] = self.artifact
        out["report"] = self.report.to_json()
        if self.after is not None:
            out["after"] = self.after.to_json()
        out["proposals"] = self.proposals
        if self.gate is not None:
            out["gate"] = self.gate
        return out


def _detail(proposal: Mapping[str, Any]) -> str:
    if proposal["kind"] == "enum-tighten":
        return f"{proposal['key']}: {len(proposal['values'])} observed values"
    return f"{proposal['failed']} failed vs {proposal['succeeded']} succeeded"


def _new_artifact(
    surface: Mapping[str, Any],
    effective: Mapping[str, Any],
    candidate: Mapping[str, Any],
    auto: list[Proposal],
    previous: Mapping[str, Any] | None,
    report: Report,
    after: Report,
    counts: DigestCounts,
    digests: CompileDigests | None = None,
) -> Artifact:
    digests = digests or CompileDigests()
    value_hash = digests.value_hash
    declared = action_schemas(surface)
    candidate_schemas = action_schemas(candidate)
    overlays = []
    for action in candidate.get("actions") or ():
        ref = action["ref"]
        live_schema = declared.get(ref)
        if value_hash(action["inputSchema"]) != value_hash(live_schema):
            overlays.append(
                {
                    "ref": ref,
                    # A copy: a candidate built with shared schemas holds the inputs' own.
                    "inputSchema": json_copy(action["inputSchema"]),
                    "baseSchemaDigest": value_hash(live_schema),
                }
            )
    quarantined = [
        {"ref": action["ref"], "baseSchemaDigest": value_hash(action.get("inputSchema"))}
        for action in surface.get("actions") or ()
        if action["ref"] not in candidate_schemas
    ]
    applied = [dict(entry) for entry in (previous or {}).get("applied") or ()]
    identities = {f"{entry['kind']}:{entry['ref']}:{entry['detail']}" for entry in applied}
    for proposal in auto:
        detail = _detail(proposal)
        identity = f"{proposal['kind']}:{proposal['ref']}:{detail}"
        if identity in identities:
            continue
        identities.add(identity)
        applied.append({"kind": proposal["kind"], "ref": proposal["ref"], "detail": detail})
    applied = applied[:MAX_COMPILED_SURFACE_PROPOSALS]
    evidence = {
        "traces": counts.traces,
        "operations": report.totals.operations,
        "succeeded": report.totals.succeeded,
        "failed": report.totals.failed,
        "surface": digests.surface_hash(effective),
        "repairs": counts.repairs,
        "valueObservations": counts.value_observations_hash,
        "auditCalls": counts.audit_calls_hash,
    }
    return {
        "version": 1,
        "metricVersion": report.metric_version,
        "actions": overlays,
        "quarantined": quarantined,
        "applied": applied,
        "gate": {
            "passed": True,
            "beforeScore": report.score,
            "afterScore": after.score,
            "reasons": [],
        },
        "evidenceDigest": stable_json_hash(evidence),
    }


def _as_json(records: Sequence[Any]) -> list[Any]:
    return [record.to_json() if hasattr(record, "to_json") else record for record in records]


# replay(candidate, effective, touched, digest_needed) -> violations
Replay = Callable[[Mapping[str, Any], Mapping[str, Any], set[str], bool], list[dict[str, str]]]


@dataclass(frozen=True, slots=True)
class DigestCounts:
    """What the artifact's evidence digest records about the corpus (spec §8.3)."""

    traces: int
    repairs: int
    value_observations_hash: str
    audit_calls_hash: str


# The first name of DigestCounts (the distributed compile imports it).
EvidenceCounts = DigestCounts


@dataclass(frozen=True, slots=True)
class CompileInputs:
    """In-memory records ready for :func:`compile_from_evidence`: the corpus's meter state and
    proposal evidence, its replay and its digest counts."""

    state: MeterState
    evidence: ProposalEvidence
    replay: Replay
    evidence_counts: Callable[[], DigestCounts]
    repairs: list[RepairRow | Mapping[str, Any]] | None


def compile_inputs(
    traces: Iterable[Trace | Mapping[str, Any]],
    repairs: Iterable[RepairRow | Mapping[str, Any]] | None = None,
    value_observations: Iterable[ValueObservation | Mapping[str, Any]] | None = None,
    audit_calls: Iterable[AuditCall | Mapping[str, Any]] | None = None,
) -> CompileInputs:
    """What the compile of in-memory records needs (see :func:`compile_entropy_surface`)."""
    trace_list = list(traces)
    repair_list = list(repairs) if repairs is not None else None
    observations = list(value_observations) if value_observations is not None else None
    audits = list(audit_calls) if audit_calls is not None else None
    state = MeterState(retain_terms=False)
    state.add_traces(trace_list)
    evidence = ProposalEvidence(trace_values=observations is None)
    evidence.add_traces(trace_list)
    if observations is not None:
        evidence.add_observations(observations)

    def replay(
        candidate: Mapping[str, Any],
        effective: Mapping[str, Any],
        touched: set[str],
        digest_needed: bool,
    ) -> list[dict[str, str]]:
        return replay_successful_calls(candidate, effective, trace_list, touched, audits)

    def counts() -> DigestCounts:
        return DigestCounts(
            len(trace_list),
            len(repair_list or []),
            stable_json_hash(_as_json(observations or [])),
            stable_json_hash(_as_json(audits or [])),
        )

    return CompileInputs(state, evidence, replay, counts, repair_list)


def compile_entropy_surface(
    traces: Iterable[Trace | Mapping[str, Any]],
    surface: Mapping[str, Any],
    repairs: Iterable[RepairRow | Mapping[str, Any]] | None = None,
    value_observations: Iterable[ValueObservation | Mapping[str, Any]] | None = None,
    audit_calls: Iterable[AuditCall | Mapping[str, Any]] | None = None,
    artifact: Artifact | None = None,
    catalog_digest: str | None = None,
) -> CompileOutcome:
    """``compileEntropySurface`` (spec §8.1) against the live declared ``surface``."""
    inputs = compile_inputs(traces, repairs, value_observations, audit_calls)
    return compile_from_evidence(
        inputs.state,
        inputs.evidence,
        surface,
        replay=inputs.replay,
        evidence_counts=inputs.evidence_counts,
        repairs=inputs.repairs,
        artifact=artifact,
        catalog_digest=catalog_digest,
    )


def compile_from_evidence(
    state: MeterState,
    evidence: ProposalEvidence,
    surface: Mapping[str, Any],
    *,
    replay: Replay,
    evidence_counts: Callable[[], DigestCounts],
    repairs: Sequence[RepairRow | Mapping[str, Any]] | None = None,
    artifact: Artifact | None = None,
    catalog_digest: str | None = None,
) -> CompileOutcome:
    """The compiler's steps after reading: finalize, propose, apply, re-measure, gate.

    ``state`` and ``evidence`` hold the whole corpus (read in one pass or merged from
    pieces); ``replay(candidate, effective, touched, digest_needed)`` returns the replay
    violations (``digest_needed``: the score gate passed, so a clean replay will need
    ``evidence_counts()``, the artifact's evidence, next). Each is called only when needed.
    """
    # Every surface and schema hash of this compile, each schema written once on the fast
    # paths (compile_digests; the plain ones hash afresh, as the specification does).
    digests = compile_digests()
    effective = apply_compiled_surface(surface, artifact)
    before_digest = (
        catalog_digest if catalog_digest is not None else digests.surface_hash(effective)
    )
    report = state.finalize(effective, repairs, before_digest)
    proposals = evidence.proposals(report, effective)
    auto = [p for p in proposals if p["kind"] in AUTO_APPLY_PROPOSAL_KINDS]
    if not auto:
        return CompileOutcome("converged", report, proposals, artifact=artifact)
    candidate = digests.apply(effective, auto)
    after = state.finalize(candidate, repairs, digests.surface_hash(candidate))
    score_gate = evaluate_gate(report, after)
    # After the candidate's hash: every candidate schema has been written by then.
    violations = replay(
        candidate, effective, digests.touched(candidate, effective), score_gate["passed"]
    )
    passed = score_gate["passed"] and not violations
    gate = {
        "passed": passed,
        "beforeScore": report.score,
        "afterScore": after.score,
        "delta": score_gate["delta"],
        "reasons": []
        if passed
        else [*score_gate["reasons"], *(f"{v['ref']}: {v['reason']}" for v in violations)],
    }
    if not passed:
        return CompileOutcome(
            "rejected", report, proposals, artifact=artifact, after=after, gate=gate
        )
    new_artifact = _new_artifact(
        surface, effective, candidate, auto, artifact, report, after, evidence_counts(), digests
    )
    return CompileOutcome(
        "compiled", report, proposals, artifact=new_artifact, after=after, gate=gate
    )
