"""The ingest accelerator: typed msgspec decoding of trace and model lines.

msgspec decodes a line straight into the few fields the scanner reads and checks most of
the trace guard's structure in C (exact key sets, enumerations, string arrays), skipping
everything else (tool output text, content blocks) without building Python objects.

It is an accelerator only. Whatever it refuses - malformed JSON, a guard violation, a lone
surrogate, a number out of range, deep nesting - goes to the generic path (orjson, the
JavaScript-compatible fallback parser and the Python guard), which decides exactly as the
reference does and counts the reason. What it accepts it reads with JavaScript's values:
the last of duplicate keys wins, insertion order is kept. ``tests/property`` compares both
paths on generated hostile lines.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec
from msgspec import UNSET, Struct, UnsetType

from pytest_entropy.core.jscompat import MAX_SAFE_INTEGER
from pytest_entropy.ingest.argtree import signed_args, value_floats

__all__ = [
    "FAST_ERRORS",
    "AuditedTraceLine",
    "MeterLine",
    "ModelLine",
    "TraceV1",
    "audited_decoder",
    "meter_decoder",
    "model_decoder",
    "struct_guard",
]

Outcome = Literal["succeeded", "failed", "aborted", "timed_out"]
Stage = Literal["resolve", "prepare", "validate", "approve", "invoke", "guard"]
Number = int | float

# Every Struct here is declared ``gc=False``: the collector does not track them (smaller
# instances, cheaper allocation and deallocation, fewer collections while a scan allocates).
# That is safe because a decoded Struct cannot be part of a reference cycle: its fields hold
# JSON values (fresh trees, no back references) and other such Structs, and nothing ever
# stores a Struct inside the values it holds.


class OperationV1(Struct, forbid_unknown_fields=True, gc=False):
    type: Literal["call"]
    sequence: Number
    ref: str
    args: dict[str, Any]
    outcome: Outcome
    provider: str | UnsetType = UNSET
    action: str | UnsetType = UNSET
    failureStage: Stage | UnsetType = UNSET
    error: str | UnsetType = UNSET
    result: Any = UNSET
    resultTruncated: bool | UnsetType = UNSET


class CountsV1(Struct, forbid_unknown_fields=True, gc=False):
    droppedValues: Number
    truncatedValues: Number
    redactedValues: Number
    droppedOperations: Number


class TraceV1(Struct, forbid_unknown_fields=True, gc=False):
    kind: Literal["pi-fabric.execution"]
    version: Number
    outcome: Outcome
    phases: list[str]
    operations: list[OperationV1]
    counts: CountsV1
    error: str | UnsetType = UNSET


class _MeterDetails(Struct, gc=False):
    trace: TraceV1 | UnsetType = UNSET


class _MeterMessage(Struct, gc=False):
    details: _MeterDetails | UnsetType = UNSET


class MeterLine(Struct, gc=False):
    """A trace line as measurement needs it (audits are skipped unread)."""

    details: _MeterDetails | UnsetType = UNSET
    message: _MeterMessage | UnsetType = UNSET


class _AuditedDetails(Struct, gc=False):
    trace: TraceV1 | UnsetType = UNSET
    audits: Any = UNSET


class _AuditedMessage(Struct, gc=False):
    details: _AuditedDetails | UnsetType = UNSET


class AuditedTraceLine(Struct, gc=False):
    """A trace line with its audits (for proposals, compilation and the pool)."""

    details: _AuditedDetails | UnsetType = UNSET
    message: _AuditedMessage | UnsetType = UNSET


class _ModelMessage(Struct, gc=False):
    role: Any = UNSET
    provider: Any = UNSET
    model: Any = UNSET


class ModelLine(Struct, gc=False):
    type: Any = UNSET
    provider: Any = UNSET
    modelId: Any = UNSET
    message: _ModelMessage | UnsetType = UNSET


meter_decoder: Final = msgspec.json.Decoder(MeterLine)
audited_decoder: Final = msgspec.json.Decoder(AuditedTraceLine)
model_decoder: Final = msgspec.json.Decoder(ModelLine)

# Everything the accelerator may raise; any of them sends the line to the generic path.
FAST_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)


def _safe_count(value: int | float) -> bool:
    if type(value) is int:
        return 0 <= value <= MAX_SAFE_INTEGER
    return value == int(value) and 0 <= value <= MAX_SAFE_INTEGER


def model_of(line: ModelLine) -> str | None:
    """The model a decoded model line announces (same rules as the generic path)."""
    if line.type == "model_change":
        provider, model_id = line.provider, line.modelId
        if type(provider) is str and provider and type(model_id) is str and model_id:
            return provider + "/" + model_id
        return None
    message = line.message
    if message is not UNSET and message.role == "assistant":
        provider, model = message.provider, message.model
        if type(provider) is str and provider and type(model) is str and model:
            return provider + "/" + model
    return None


def struct_guard(trace: TraceV1) -> tuple[list[tuple[Any, ...]], int, str]:
    """The guard checks msgspec cannot express: values of numbers and argument trees.

    Returns ``(signed operations, floats, "")`` or ``([], 0, reason)``; ``floats`` feeds
    the size-bound shortcut.
    """
    version = trace.version
    if version != 1:
        return [], 0, "version is not 1"
    floats = 1 if type(version) is float else 0
    counts = trace.counts
    for count in (
        counts.droppedValues,
        counts.truncatedValues,
        counts.redactedValues,
        counts.droppedOperations,
    ):
        if not _safe_count(count):
            return [], 0, "invalid counts"
        if type(count) is float:
            floats += 1
    signed: list[tuple[Any, ...]] = []
    append = signed.append
    previous: int | float = -1
    for op in trace.operations:
        sequence = op.sequence
        if type(sequence) is int:
            if sequence <= previous or sequence > MAX_SAFE_INTEGER:
                return [], 0, "invalid or non-increasing sequence"
        else:
            if not _safe_count(sequence) or sequence <= previous:
                return [], 0, "invalid or non-increasing sequence"
            floats += 1
        previous = sequence
        result = op.result
        if result is not UNSET:
            result_floats = value_floats(result)
            if result_floats < 0:
                return [], 0, "result is not a bounded JSON value"
            floats += result_floats
        shape = signed_args(op.args)
        if shape is None:
            return [], 0, "args is not a bounded JSON value"
        floats += shape[1]
        stage = op.failureStage
        append((op.ref, op.args, op.outcome, None if stage is UNSET else stage, shape[0]))
    return signed, floats, ""
