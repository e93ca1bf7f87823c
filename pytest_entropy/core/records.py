"""Typed records: meter inputs, audit evidence and the report (spec §1.5, §1.10).

Inputs are small immutable tuples (``NamedTuple``) because millions of them flow through
the ingest hot path; results are frozen dataclasses. Every record converts to and from the
reference's JSON shape with the reference's camelCase field names and field order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pytest_entropy.core.plain_record import Record
from pytest_entropy.core.typing_lite import NamedTuple
from pytest_entropy.core.versions import ENTROPY_METRIC_VERSION

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ENTROPY_METRIC_VERSION",
    "ENTROPY_METRIC_VERSION_V3",
    "METRIC_VERSIONS",
    "AuditCall",
    "ModelRow",
    "Operation",
    "RefRow",
    "RepairRow",
    "Report",
    "ShapeCount",
    "Totals",
    "Trace",
    "ValueObservation",
    "action_schemas",
    "audit_fields",
    "check_metric_version",
    "coerce_repairs",
    "observation_fields",
    "operations_of",
]

# The generations a report, a state directory and every command can be asked for: 2 (the
# reference, the default) and 3 (the upstream's current generation, core/v3/).
METRIC_VERSIONS = (2, 3)
# Metric v3's number (re-exported by core/v3, which the modules v2 runs load do not import).
ENTROPY_METRIC_VERSION_V3 = 3


def check_metric_version(metric_version: object) -> int:
    """``metric_version`` itself when it names a generation (2 or 3), else ``ValueError``."""
    if type(metric_version) is not int or metric_version not in METRIC_VERSIONS:
        raise ValueError(f"metric version must be 2 or 3, not {metric_version!r}")
    return metric_version


class Operation(NamedTuple):
    """One recorded call as the meter sees it (``EntropyOperationInput``)."""

    ref: str
    args: dict[str, Any]
    outcome: str
    failure_stage: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ref": self.ref, "args": self.args, "outcome": self.outcome}
        if self.failure_stage is not None:
            out["failureStage"] = self.failure_stage
        return out

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Operation:
        return cls(value["ref"], value["args"], value["outcome"], value.get("failureStage"))


class Trace(NamedTuple):
    """One execution: its operations, task key and (when stamped) the producing model."""

    operations: tuple[Operation, ...]
    task_key: str | None = None
    model: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"operations": [op.to_json() for op in self.operations]}
        if self.task_key is not None:
            out["taskKey"] = self.task_key
        if self.model is not None:
            out["model"] = self.model
        return out

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Trace:
        return cls(
            tuple(Operation.from_json(op) for op in value.get("operations", ())),
            value.get("taskKey"),
            value.get("model"),
        )


class AuditCall(NamedTuple):
    """Verbatim arguments of one executed (or attempted) call (``EntropyAuditCall``)."""

    ref: str
    args: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "args": self.args}

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> AuditCall:
        return cls(value["ref"], value["args"])


class ValueObservation(Record, frozen=True):
    """One observed primitive argument value; ``count`` absent means 1."""

    ref: str
    key: str
    value: str | int | float | bool
    count: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ref": self.ref, "key": self.key, "value": self.value}
        if self.count is not None:
            out["count"] = self.count
        return out

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> ValueObservation:
        return cls(value["ref"], value["key"], value["value"], value.get("count"))


class RepairRow(NamedTuple):
    """A normalised repair row (``EntropyRepairRowInput``); the meter counts rows per ref."""

    kind: str
    ref: str
    source: str
    target: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "ref": self.ref, "from": self.source, "to": self.target}

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> RepairRow:
        return cls(value["kind"], value["ref"], value["from"], value["to"])


def coerce_repairs(repairs: Iterable[RepairRow | Mapping[str, Any]] | None) -> list[RepairRow]:
    """Accept :class:`RepairRow` records or meter-row dicts (``{kind, ref, from, to}``)."""
    if repairs is None:
        return []
    out: list[RepairRow] = []
    for row in repairs:
        out.append(row if isinstance(row, RepairRow) else RepairRow.from_json(row))
    return out


# ------------------------------------------------------------------------------ report


class Totals(Record, frozen=True):
    traces: int = 0
    operations: int = 0
    action_operations: int = 0
    discovery_operations: int = 0
    workflow_operations: int = 0
    succeeded: int = 0
    failed: int = 0
    aborted: int = 0
    timed_out: int = 0
    invocation_rejections: int = 0
    invocation_rejections_per_1k: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "traces": self.traces,
            "operations": self.operations,
            "actionOperations": self.action_operations,
            "discoveryOperations": self.discovery_operations,
            "workflowOperations": self.workflow_operations,
            "succeeded": self.succeeded,
            "failed": self.failed,
            "aborted": self.aborted,
            "timedOut": self.timed_out,
            "invocationRejections": self.invocation_rejections,
            "invocationRejectionsPer1k": self.invocation_rejections_per_1k,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Totals:
        return cls(
            value["traces"],
            value["operations"],
            value["actionOperations"],
            value["discoveryOperations"],
            value["workflowOperations"],
            value["succeeded"],
            value["failed"],
            value["aborted"],
            value["timedOut"],
            value["invocationRejections"],
            value["invocationRejectionsPer1k"],
        )


class ShapeCount(Record, frozen=True):
    signature: str
    count: int

    def to_json(self) -> dict[str, Any]:
        return {"signature": self.signature, "count": self.count}


class RefRow(Record, frozen=True):
    ref: str
    calls: int
    succeeded: int
    failed: int
    shape_signatures: tuple[ShapeCount, ...]
    shape_entropy_bits: float
    failure_stage_entropy_bits: float
    churn_rate: float
    lexicon_rows: int
    static_freedom: float
    score: float

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "calls": self.calls,
            "succeeded": self.succeeded,
            "failed": self.failed,
            "shapeSignatures": [s.to_json() for s in self.shape_signatures],
            "shapeEntropyBits": self.shape_entropy_bits,
            "failureStageEntropyBits": self.failure_stage_entropy_bits,
            "churnRate": self.churn_rate,
            "lexiconRows": self.lexicon_rows,
            "staticFreedom": self.static_freedom,
            "score": self.score,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> RefRow:
        return cls(
            value["ref"],
            value["calls"],
            value["succeeded"],
            value["failed"],
            tuple(ShapeCount(s["signature"], s["count"]) for s in value["shapeSignatures"]),
            value["shapeEntropyBits"],
            value["failureStageEntropyBits"],
            value["churnRate"],
            value["lexiconRows"],
            value["staticFreedom"],
            value["score"],
        )


class ModelRow(Record, frozen=True):
    model: str
    operations: int
    action_operations: int
    succeeded: int
    invocation_rejections: int
    invocation_rejections_per_1k: float
    behavioral_score: float

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "operations": self.operations,
            "actionOperations": self.action_operations,
            "succeeded": self.succeeded,
            "invocationRejections": self.invocation_rejections,
            "invocationRejectionsPer1k": self.invocation_rejections_per_1k,
            "behavioralScore": self.behavioral_score,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> ModelRow:
        return cls(
            value["model"],
            value["operations"],
            value["actionOperations"],
            value["succeeded"],
            value["invocationRejections"],
            value["invocationRejectionsPer1k"],
            value["behavioralScore"],
        )


class Report(Record, frozen=True):
    """An ``EntropyReport`` (spec §1.10). :meth:`to_json` is what the report hash covers."""

    metric_version: int
    catalog_digest: str
    totals: Totals
    shape_entropy_bits: float
    failure_stage_entropy_bits: float
    churn_rate: float
    navigation_ratio: float
    flow_entropy_bits: float
    lexicon_rows: int
    static_freedom: float
    static_score: float
    behavioral_score: float
    score: float
    refs: tuple[RefRow, ...]
    by_model: tuple[ModelRow, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "metricVersion": self.metric_version,
            "catalogDigest": self.catalog_digest,
            "totals": self.totals.to_json(),
            "shapeEntropyBits": self.shape_entropy_bits,
            "failureStageEntropyBits": self.failure_stage_entropy_bits,
            "churnRate": self.churn_rate,
            "navigationRatio": self.navigation_ratio,
            "flowEntropyBits": self.flow_entropy_bits,
            "lexiconRows": self.lexicon_rows,
            "staticFreedom": self.static_freedom,
            "staticScore": self.static_score,
            "behavioralScore": self.behavioral_score,
            "score": self.score,
            "refs": [row.to_json() for row in self.refs],
            "byModel": [row.to_json() for row in self.by_model],
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Report:
        return cls(
            value["metricVersion"],
            value["catalogDigest"],
            Totals.from_json(value["totals"]),
            value["shapeEntropyBits"],
            value["failureStageEntropyBits"],
            value["churnRate"],
            value["navigationRatio"],
            value["flowEntropyBits"],
            value["lexiconRows"],
            value["staticFreedom"],
            value["staticScore"],
            value["behavioralScore"],
            value["score"],
            tuple(RefRow.from_json(row) for row in value["refs"]),
            tuple(ModelRow.from_json(row) for row in value["byModel"]),
        )

    def ref(self, name: str) -> RefRow | None:
        """The row of one ref, or ``None`` when the corpus never called it."""
        for row in self.refs:
            if row.ref == name:
                return row
        return None


def operations_of(trace: Trace | Mapping[str, Any]) -> Sequence[Operation]:
    """The operations of a trace given as a record or as a spec-shaped dict."""
    if isinstance(trace, Trace):
        return trace.operations
    return [Operation.from_json(op) for op in trace.get("operations", ())]


def audit_fields(call: AuditCall | Mapping[str, Any]) -> tuple[str, Any]:
    """``(ref, args)`` of an audit call given as a record or as a spec-shaped dict."""
    if isinstance(call, AuditCall):
        return call.ref, call.args
    return call["ref"], call["args"]


def observation_fields(
    observation: ValueObservation | Mapping[str, Any],
) -> tuple[str, str, Any, int]:
    """``(ref, key, value, weight)`` of a value observation (a missing count weighs 1)."""
    if isinstance(observation, ValueObservation):
        count = observation.count
        return observation.ref, observation.key, observation.value, 1 if count is None else count
    count = observation.get("count")
    return (
        observation["ref"],
        observation["key"],
        observation["value"],
        1 if count is None else count,
    )


def action_schemas(surface: Mapping[str, Any]) -> dict[str, Any]:
    """ref -> ``inputSchema`` of a surface snapshot's actions (a repeated ref: the last)."""
    return {action["ref"]: action.get("inputSchema") for action in surface.get("actions") or ()}
