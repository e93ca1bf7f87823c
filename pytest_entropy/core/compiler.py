"""Replay preservation and compilation (spec §7.5, §8).

``compile_entropy_surface`` is measure -> propose -> apply -> re-measure -> gate + replay:
it never lets the score rise, and never lets a recorded successful call (or an executed
audited call) stop validating.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .artifact import MAX_COMPILED_SURFACE_PROPOSALS, Artifact, apply_compiled_surface
from .canonical import schema_digest, stable_json_hash
from .corpus import surface_hash
from .meter import measure
from .proposals import (
    AUTO_APPLY_PROPOSAL_KINDS,
    Proposal,
    apply_proposals_to_surface,
    evaluate_gate,
    propose_entropy_reductions,
)
from .records import AuditCall, Operation, RepairRow, Report, Trace, ValueObservation
from .validation import accepts

__all__ = [
    "ABSENT_REASON",
    "INVALID_REASON",
    "CompileOutcome",
    "compile_entropy_surface",
    "replay_successful_calls",
    "touched_refs",
]

ABSENT_REASON = "absent from the candidate surface"
INVALID_REASON = "recorded arguments no longer validate against the compiled schema"


def _schemas(surface: Mapping[str, Any]) -> dict[str, Any]:
    schemas: dict[str, Any] = {}
    for action in surface.get("actions") or ():
        schemas[action["ref"]] = action.get("inputSchema")
    return schemas


def _audit_fields(call: AuditCall | Mapping[str, Any]) -> tuple[str, Any]:
    if isinstance(call, AuditCall):
        return call.ref, call.args
    return call["ref"], call["args"]


def _operations(trace: Trace | Mapping[str, Any]) -> Sequence[Any]:
    if isinstance(trace, Trace):
        return trace.operations
    return [
        Operation(op["ref"], op["args"], op["outcome"], op.get("failureStage"))
        for op in trace.get("operations", ())
    ]


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
    candidate_schemas = _schemas(candidate)
    before_schemas = _schemas(before)
    violations: list[dict[str, str]] = []
    audited: set[str] = set()
    if audit_calls is not None:
        buckets: dict[str, list[Any]] = {}
        for call in audit_calls:
            ref, args = _audit_fields(call)
            if ref in touched_set:
                buckets.setdefault(ref, []).append(args)
        for ref, bucket in buckets.items():
            audited.add(ref)
            if ref not in candidate_schemas:
                violations.append({"ref": ref, "reason": ABSENT_REASON})
                continue
            schema = candidate_schemas[ref]
            for args in bucket:
                if ref in before_schemas and not accepts(before_schemas[ref], args):
                    continue
                if not accepts(schema, args):
                    violations.append({"ref": ref, "reason": INVALID_REASON})
    for trace in traces:
        for op in _operations(trace):
            ref, args, outcome = op[0], op[1], op[2]
            if (
                outcome != "succeeded"
                or ref.startswith("fabric.")
                or ref not in touched_set
                or ref in audited
            ):
                continue
            if ref not in candidate_schemas:
                violations.append({"ref": ref, "reason": ABSENT_REASON})
            elif not accepts(candidate_schemas[ref], args):
                violations.append({"ref": ref, "reason": INVALID_REASON})
    return violations


def touched_refs(candidate: Mapping[str, Any], effective: Mapping[str, Any]) -> set[str]:
    """Refs whose schema the candidate changed, plus refs it removed (spec §8.2)."""
    effective_schemas = _schemas(effective)
    candidate_schemas = _schemas(candidate)
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
    trace_count: int,
    repair_count: int,
    value_observations: Sequence[Any] | None,
    audit_calls: Sequence[Any] | None,
) -> Artifact:
    declared = _schemas(surface)
    candidate_schemas = _schemas(candidate)
    overlays = []
    for action in candidate.get("actions") or ():
        ref = action["ref"]
        live_schema = declared.get(ref)
        if stable_json_hash(action["inputSchema"]) != stable_json_hash(live_schema):
            overlays.append(
                {
                    "ref": ref,
                    "inputSchema": action["inputSchema"],
                    "baseSchemaDigest": schema_digest(live_schema),
                }
            )
    quarantined = [
        {"ref": action["ref"], "baseSchemaDigest": schema_digest(action.get("inputSchema"))}
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
        "traces": trace_count,
        "operations": report.totals.operations,
        "succeeded": report.totals.succeeded,
        "failed": report.totals.failed,
        "surface": surface_hash(effective),
        "repairs": repair_count,
        "valueObservations": stable_json_hash(_as_json(value_observations or [])),
        "auditCalls": stable_json_hash(_as_json(audit_calls or [])),
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
    trace_list = list(traces)
    repair_list = list(repairs) if repairs is not None else None
    observations = list(value_observations) if value_observations is not None else None
    audits = list(audit_calls) if audit_calls is not None else None
    effective = apply_compiled_surface(surface, artifact)
    before_digest = catalog_digest if catalog_digest is not None else surface_hash(effective)
    report = measure(trace_list, effective, repair_list, before_digest)
    proposals = propose_entropy_reductions(report, trace_list, effective, repair_list, observations)
    auto = [p for p in proposals if p["kind"] in AUTO_APPLY_PROPOSAL_KINDS]
    if not auto:
        return CompileOutcome("converged", report, proposals, artifact=artifact)
    candidate = apply_proposals_to_surface(effective, auto)
    after = measure(trace_list, candidate, repair_list, surface_hash(candidate))
    score_gate = evaluate_gate(report, after)
    violations = replay_successful_calls(
        candidate, effective, trace_list, touched_refs(candidate, effective), audits
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
        surface,
        effective,
        candidate,
        auto,
        artifact,
        report,
        after,
        len(trace_list),
        len(repair_list or []),
        observations,
        audits,
    )
    return CompileOutcome(
        "compiled", report, proposals, artifact=new_artifact, after=after, gate=gate
    )
