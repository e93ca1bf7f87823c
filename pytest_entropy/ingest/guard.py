"""The trace-V1 guard (spec §1.2): which traces the meter hears, and why the others are skipped.

:func:`guard_signed` checks one envelope in the reference's order and refuses with its
reason; a passing trace's operations come back with their shape signatures, checked and
computed in one walk of each argument tree. The Rust core's ``guard.rs`` and
``signature.rs`` mirror this module (``tests/property/test_native_scan_differential.py``).
"""

from __future__ import annotations

from pytest_entropy.core.canonical import js_stringify
from pytest_entropy.core.fingerprint import shape_signature
from pytest_entropy.core.jscompat import MAX_SAFE_INTEGER
from pytest_entropy.core.records import ENTROPY_METRIC_VERSION, Operation

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, Final, TypeAlias

__all__ = [
    "FAILURE_STAGES",
    "MAX_ARGS_DEPTH",
    "MAX_FLOAT_GROWTH",
    "OUTCOMES",
    "TRACE_KIND",
    "TRACE_SIZE_BOUND",
    "SignedOperation",
    "guard_signed",
    "guard_trace",
    "signed_args",
    "value_floats",
]

TRACE_KIND: Final = "pi-fabric.execution"
TRACE_SIZE_BOUND: Final = 524_288
MAX_ARGS_DEPTH: Final = 14
# Integers at or beyond this magnitude are ±Infinity to JavaScript (core.jscompat.js_number).
INT_OVERFLOW: Final = 2**1024 - 2**970
# The longest JavaScript text of one double ("-1.2345678901234567e-123" and the like). The
# source text of a number is at least one byte, so each float can lengthen the
# serialisation by at most this much; no other JSON value can serialise longer in
# JavaScript than in valid UTF-8 source (strings only lose escapes, integers keep digits).
MAX_FLOAT_GROWTH: Final = 24

# One guarded operation with its shape signature: (ref, args, outcome, failure stage, signature).
SignedOperation: TypeAlias = "tuple[str, dict[str, Any], str, str | None, str]"

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
_METRIC_VERSION_V3: Final = 3
_COUNT_KEYS: Final = frozenset(
    {"droppedValues", "truncatedValues", "redactedValues", "droppedOperations"}
)
OUTCOMES: Final = frozenset({"succeeded", "failed", "aborted", "timed_out"})
FAILURE_STAGES: Final = frozenset({"resolve", "prepare", "validate", "approve", "invoke", "guard"})


class _Refused(Exception):
    """A check failed; ``args[0]`` is the reason the diagnostics count."""


# ------------------------------------------------------------------------ values


def _tree_floats(container: Any, depth: int) -> int:
    """Floats in a JSON value tree, or -1 if it is not one (non-finite number, foreign type,
    or a container deeper than 14 levels below ``args``)."""
    if depth > MAX_ARGS_DEPTH:
        return -1
    floats = 0
    values = container.values() if type(container) is dict else container
    for value in values:
        t = type(value)
        if t is str or t is bool or value is None:
            continue
        if t is int:
            # JavaScript reads an integer beyond the double range as Infinity.
            if -INT_OVERFLOW < value < INT_OVERFLOW:
                continue
            return -1
        if t is float:
            if value - value != 0.0:  # NaN or an infinity
                return -1
            floats += 1
            continue
        if t is dict or t is list:
            if value:
                inner = _tree_floats(value, depth + 1)
                if inner < 0:
                    return -1
                floats += inner
            elif depth + 1 > MAX_ARGS_DEPTH:
                return -1
            continue
        return -1
    return floats


def value_floats(value: Any) -> int:
    """The floats of any JSON value, -1 when it is not a bounded one."""
    t = type(value)
    if t is dict or t is list:
        return _tree_floats(value, 0)
    if t is float:
        return 1 if value - value == 0.0 else -1
    if t is int:
        return 0 if -INT_OVERFLOW < value < INT_OVERFLOW else -1
    return 0 if (t is str or t is bool or value is None) else -1


def _count_float(value: Any) -> int:
    """0 or 1 for a safe-count candidate (the envelope's numbers)."""
    return 1 if type(value) is float else 0


def _safe_count(value: Any) -> bool:
    t = type(value)
    if t is int:
        return bool(0 <= value <= MAX_SAFE_INTEGER)
    if t is float:
        return bool(value - value == 0.0 and value == int(value) and 0 <= value <= MAX_SAFE_INTEGER)
    return False


def signed_args(args: dict[str, Any]) -> tuple[str, int] | None:
    """``(shape signature, floats)`` of a valid ``args`` tree, ``None`` if it is invalid."""
    if not args:
        return "()", 0
    floats = _tree_floats(args, 0)
    if floats < 0:
        return None
    return shape_signature(args), floats


# ------------------------------------------------------------------------ checks


def _check_envelope(trace: Any) -> int:
    """The envelope's checks before its operations; returns the floats it holds."""
    if type(trace) is not dict:
        raise _Refused("trace is not an object")
    if not _ENVELOPE_KEYS.issuperset(trace):
        raise _Refused("unknown envelope key")
    get = trace.get
    if get("kind") != TRACE_KIND:
        raise _Refused("kind is not pi-fabric.execution")
    version = get("version")
    if (type(version) is not int and type(version) is not float) or version != 1:
        raise _Refused("version is not 1")
    outcome = get("outcome")
    if type(outcome) is not str or outcome not in OUTCOMES:
        raise _Refused("invalid envelope outcome")
    phases = get("phases")
    if type(phases) is not list:
        raise _Refused("phases is not an array")
    if any(type(phase) is not str for phase in phases):
        raise _Refused("phases holds a non-string")
    if type(get("operations")) is not list:
        raise _Refused("operations is not an array")
    counts = get("counts")
    if type(counts) is not dict or counts.keys() != _COUNT_KEYS:
        raise _Refused("invalid counts")
    floats = _count_float(version)
    for count in counts.values():
        if not _safe_count(count):
            raise _Refused("invalid counts")
        floats += _count_float(count)
    if "error" in trace and type(trace["error"]) is not str:
        raise _Refused("envelope error is not a string")
    return floats


def _check_sequence(sequence: Any, previous: int | float) -> int:
    """The sequence rule (an integer above the previous one, at most 2**53 - 1); returns
    the floats it adds."""
    if type(sequence) is int:
        if sequence <= previous or sequence > MAX_SAFE_INTEGER:
            raise _Refused("invalid or non-increasing sequence")
        return 0
    if not _safe_count(sequence) or sequence <= previous:
        raise _Refused("invalid or non-increasing sequence")
    return 1


def _check_optional(op: dict[str, Any]) -> tuple[str | None, int]:
    """The checks of an operation's optional members: its failure stage, its result's
    floats (and, under metric v3, its normal-form witness)."""
    if "provider" in op and type(op["provider"]) is not str:
        raise _Refused("provider is not a string")
    if "action" in op and type(op["action"]) is not str:
        raise _Refused("action is not a string")
    stage = None
    if "failureStage" in op:
        stage = op["failureStage"]
        if type(stage) is not str or stage not in FAILURE_STAGES:
            raise _Refused("invalid failureStage")
    if "error" in op and type(op["error"]) is not str:
        raise _Refused("operation error is not a string")
    floats = 0
    if "result" in op:
        floats = value_floats(op["result"])
        if floats < 0:
            raise _Refused("result is not a bounded JSON value")
    if "resultTruncated" in op and type(op["resultTruncated"]) is not bool:
        raise _Refused("resultTruncated is not a boolean")
    if "normalization" in op:  # only the v3 guard lets the key through
        from pytest_entropy.core.v3.normal_form import is_normal_form_witness

        if not is_normal_form_witness(op["normalization"]):
            raise _Refused("normalization is not a normal-form witness")
    return stage, floats


def _check_operation(
    op: Any, previous: int | float, keys: frozenset[str] = _OPERATION_KEYS
) -> tuple[SignedOperation, int]:
    """One operation's checks in order; returns it signed, with the floats it holds."""
    if type(op) is not dict:
        raise _Refused("operation is not an object")
    if not keys.issuperset(op):
        raise _Refused("unknown operation key")
    if op.get("type") != "call":
        raise _Refused("operation type is not call")
    floats = _check_sequence(op.get("sequence"), previous)
    ref = op.get("ref")
    if type(ref) is not str:
        raise _Refused("ref is not a string")
    args = op.get("args")
    if type(args) is not dict:
        raise _Refused("args is not an object")
    outcome = op.get("outcome")
    if type(outcome) is not str or outcome not in OUTCOMES:
        raise _Refused("invalid operation outcome")
    stage, result_floats = _check_optional(op) if len(op) > 5 else (None, 0)
    shape = signed_args(args)
    if shape is None:
        raise _Refused("args is not a bounded JSON value")
    return (ref, args, outcome, stage, shape[0]), floats + result_floats + shape[1]


def _guard(trace: Any, source_length: int | None, v3: bool = False) -> list[SignedOperation]:
    floats = _check_envelope(trace)
    signed: list[SignedOperation] = []
    previous: int | float = -1
    keys = _OPERATION_KEYS_V3 if v3 else _OPERATION_KEYS
    for op in trace["operations"]:
        operation, more = _check_operation(op, previous, keys)
        previous = op["sequence"]
        floats += more
        signed.append(operation)
    if (
        source_length is None or source_length + MAX_FLOAT_GROWTH * floats > TRACE_SIZE_BOUND
    ) and len(js_stringify(trace).encode("utf-8")) > TRACE_SIZE_BOUND:
        raise _Refused("trace larger than 512 KiB")
    return signed


def guard_signed(
    trace: Any, source_length: int | None, *, metric_version: int = ENTROPY_METRIC_VERSION
) -> tuple[list[SignedOperation], str]:
    """Check a trace against the V1 guard (spec §1.2): ``(signed operations, "")`` when it
    passes, ``([], reason)`` when it fails. ``metric_version=3`` is the v3 guard, which
    also accepts an operation's ``normalization`` witness.

    ``source_length`` is the byte length of the valid UTF-8 line the trace was parsed from
    (``None`` when unknown); when the line plus the worst-case growth of its floats fits the
    512 KiB bound, the exact JavaScript serialisation need not be built.
    """
    try:
        return _guard(trace, source_length, metric_version == _METRIC_VERSION_V3), ""
    except _Refused as refused:
        return [], str(refused.args[0])
    except Exception as error:  # the reference treats any exception as a failure
        return [], f"guard error: {type(error).__name__}"


def guard_trace(
    trace: Any, *, metric_version: int = ENTROPY_METRIC_VERSION
) -> tuple[tuple[Operation, ...], str]:
    """Check a trace against the V1 guard (spec §1.2); ``metric_version=3`` is the v3
    guard, which also accepts an operation's ``normalization`` witness.

    Returns ``(operations, "")`` when it passes and ``((), reason)`` when it fails.
    """
    signed, reason = guard_signed(trace, None, metric_version=metric_version)
    return tuple(tuple.__new__(Operation, op[:4]) for op in signed), reason
