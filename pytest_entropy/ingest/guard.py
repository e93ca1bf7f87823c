"""The native format: session JSONL with ``FabricExecutionTraceV1`` envelopes (spec §1.1-§1.5).

:class:`SessionScanner` consumes raw lines and produces the session evidence: meter traces
stamped with the current model, audit calls and value observations. It is the single place
that decides what a line means; every skipped line is counted in :class:`ScanDiagnostics`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from pytest_entropy.core.canonical import js_stringify
from pytest_entropy.core.jscompat import MAX_SAFE_INTEGER
from pytest_entropy.core.records import ENTROPY_METRIC_VERSION, Operation
from pytest_entropy.core.v3 import ENTROPY_METRIC_VERSION_V3 as METRIC_VERSION_V3
from pytest_entropy.core.v3.normal_form import is_normal_form_witness
from pytest_entropy.ingest.argtree import (
    MAX_FLOAT_GROWTH,
    SignedOperation,
    count_float,
    safe_count,
    signed_args,
    value_floats,
)

# signed_args, or a twin that may answer NotImplemented (then signed_args decides).
Signer = Callable[[dict[str, Any]], Any]

TRACE_KIND: Final = "pi-fabric.execution"
TRACE_SIZE_BOUND: Final = 524_288

_ENVELOPE_KEYS: Final = frozenset(
    {"kind", "version", "outcome", "phases", "operations", "counts", "error"}
)
_OPERATION_KEYS: Final = frozenset(
    {
        "type",
        "sequence",
        "ref",
        "provider",
        "action",
        "args",
        "outcome",
        "failureStage",
        "error",
        "result",
        "resultTruncated",
    }
)
# Metric v3's guard also lists ``normalization`` (a normal-form witness, which must be
# well formed); the v2 guard rejects a trace whose operation carries one (spec §1.2).
_OPERATION_KEYS_V3: Final = _OPERATION_KEYS | {"normalization"}
_COUNT_KEYS: Final = frozenset(
    {"droppedValues", "truncatedValues", "redactedValues", "droppedOperations"}
)
OUTCOMES: Final = frozenset({"succeeded", "failed", "aborted", "timed_out"})
FAILURE_STAGES: Final = frozenset({"resolve", "prepare", "validate", "approve", "invoke", "guard"})


# ------------------------------------------------------------------------------ guard


def guard_trace(
    trace: Any, *, metric_version: int = ENTROPY_METRIC_VERSION
) -> tuple[tuple[Operation, ...], str]:
    """Check a trace against the V1 guard (spec §1.2); ``metric_version=3`` is the v3
    guard, which also accepts an operation's ``normalization`` witness.

    Returns ``(operations, "")`` when it passes and ``((), reason)`` when it fails.
    """
    signed, reason = guard_signed(trace, None, metric_version=metric_version)
    return tuple(tuple.__new__(Operation, op[:4]) for op in signed), reason


def guard_signed(
    trace: Any,
    source_length: int | None,
    signer: Signer | None = None,
    *,
    metric_version: int = ENTROPY_METRIC_VERSION,
) -> tuple[list[SignedOperation], str]:
    """The guard on the ingest hot path: passing operations come back with their signature.

    ``source_length`` is the byte length of the valid UTF-8 line the trace was parsed from
    (``None`` when unknown); when the line plus the worst-case growth of its floats fits the
    512 KiB bound, the exact JavaScript serialisation need not be built. ``signer`` stands in
    for :func:`signed_args` (the native kernel's twin, whose ``NotImplemented`` hands an
    argument tree back to the Python).
    """
    try:
        return _guard(trace, source_length, signer, metric_version == METRIC_VERSION_V3)
    except Exception as error:  # the reference treats any exception as a failure
        return [], f"guard error: {type(error).__name__}"


def _guard(
    trace: Any, source_length: int | None, signer: Signer | None, v3: bool = False
) -> tuple[list[SignedOperation], str]:
    if type(trace) is not dict:
        return [], "trace is not an object"
    if not _ENVELOPE_KEYS.issuperset(trace):
        return [], "unknown envelope key"
    get = trace.get
    if get("kind") != TRACE_KIND:
        return [], "kind is not pi-fabric.execution"
    version = get("version")
    if (type(version) is not int and type(version) is not float) or version != 1:
        return [], "version is not 1"
    outcome = get("outcome")
    if type(outcome) is not str or outcome not in OUTCOMES:
        return [], "invalid envelope outcome"
    phases = get("phases")
    if type(phases) is not list:
        return [], "phases is not an array"
    for phase in phases:
        if type(phase) is not str:
            return [], "phases holds a non-string"
    operations = get("operations")
    if type(operations) is not list:
        return [], "operations is not an array"
    counts = get("counts")
    if type(counts) is not dict or counts.keys() != _COUNT_KEYS:
        return [], "invalid counts"
    floats = count_float(version)
    for count in counts.values():
        if not safe_count(count):
            return [], "invalid counts"
        floats += count_float(count)
    if "error" in trace and type(trace["error"]) is not str:
        return [], "envelope error is not a string"
    signed: list[SignedOperation] = []
    append = signed.append
    previous: int | float = -1
    operation_keys = (_OPERATION_KEYS_V3 if v3 else _OPERATION_KEYS).issuperset
    outcomes = OUTCOMES
    sign = signed_args if signer is None else signer
    for op in operations:
        if type(op) is not dict:
            return [], "operation is not an object"
        if not operation_keys(op):
            return [], "unknown operation key"
        op_get = op.get
        if op_get("type") != "call":
            return [], "operation type is not call"
        sequence: Any = op_get("sequence")
        if type(sequence) is int:
            if sequence <= previous or sequence > MAX_SAFE_INTEGER:
                return [], "invalid or non-increasing sequence"
        elif not safe_count(sequence) or sequence <= previous:
            return [], "invalid or non-increasing sequence"
        else:
            floats += 1
        previous = sequence
        ref = op_get("ref")
        if type(ref) is not str:
            return [], "ref is not a string"
        args = op_get("args")
        if type(args) is not dict:
            return [], "args is not an object"
        op_outcome = op_get("outcome")
        if type(op_outcome) is not str or op_outcome not in outcomes:
            return [], "invalid operation outcome"
        stage = None
        if len(op) > 5:
            if "provider" in op and type(op["provider"]) is not str:
                return [], "provider is not a string"
            if "action" in op and type(op["action"]) is not str:
                return [], "action is not a string"
            if "failureStage" in op:
                stage = op["failureStage"]
                if type(stage) is not str or stage not in FAILURE_STAGES:
                    return [], "invalid failureStage"
            if "error" in op and type(op["error"]) is not str:
                return [], "operation error is not a string"
            if "result" in op:
                result_floats = value_floats(op["result"])
                if result_floats < 0:
                    return [], "result is not a bounded JSON value"
                floats += result_floats
            if "resultTruncated" in op and type(op["resultTruncated"]) is not bool:
                return [], "resultTruncated is not a boolean"
            if "normalization" in op and not is_normal_form_witness(op["normalization"]):
                return [], "normalization is not a normal-form witness"
        shape = sign(args)
        if shape is NotImplemented:
            shape = signed_args(args)
        if shape is None:
            return [], "args is not a bounded JSON value"
        floats += shape[1]
        append((ref, args, op_outcome, stage, shape[0]))
    if (
        source_length is None or source_length + MAX_FLOAT_GROWTH * floats > TRACE_SIZE_BOUND
    ) and len(js_stringify(trace).encode("utf-8")) > TRACE_SIZE_BOUND:
        return [], "trace larger than 512 KiB"
    return signed, ""
