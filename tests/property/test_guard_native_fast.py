"""The guard kernel's shortcuts decide exactly as the general code and the Python twins.

Two shortcuts in ``ingest/_guard_native.c`` are checked here against ``signed_args``,
``shape_signature`` and ``struct_guard``:

* the one-byte signature writer (every key an exact one-byte str, at most 32 keys per
  dictionary): keys at the 32/33 boundary at every depth, ASCII beside Latin-1 keys (the
  signature's kind), prefixes and NUL characters (byte order), a wider key or a key
  subclass anywhere (the general writer takes over from scratch), nesting to the
  signature's depth and beyond it, non-flat values that make the whole tree be checked;
* reading a decoded Struct's fields from their slots: subclasses that lie about a field,
  deleted fields, Structs holding values msgspec would never decode.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_entropy.core.fingerprint import shape_signature
from pytest_entropy.ingest.argtree import _tree_floats, signed_args
from pytest_entropy.ingest.native_decode import (
    CountsV1,
    OperationV1,
    TraceV1,
    meter_decoder,
    struct_guard,
)
from tests.native_support import native_kernel

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# One-byte keys: prefixes of each other, NUL, DEL, the signature's punctuation, Latin-1.
ONE_BYTE = ["", "a", "ab", "a\x00", "\x00", "b", "\x7f", ":", ",", "{", "é", "ÿ", "\x80", "aé"]
# Keys that leave the shortcut: wider kinds (BMP, astral, a lone surrogate).
WIDE = ["Ā", "中", "…", "\uffff", "\U0001f600", "\ud83d"]


class _Key(str):
    pass


class _Int(int):
    pass


one_byte_keys = st.one_of(
    st.sampled_from(ONE_BYTE), st.text(st.sampled_from("abé\x00ÿ"), max_size=3)
)
any_keys = st.one_of(
    one_byte_keys, st.sampled_from(WIDE), st.builds(_Key, st.sampled_from(ONE_BYTE))
)
leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([2**64, -(2**70), 0.0, -0.0, 1.0, 1e308, 5e-324]),
    st.floats(),  # NaN and the infinities make a tree invalid
    st.text(max_size=2),
    st.sampled_from([[], {}, [1.5], [[{}]], (1,), _Int(2), b"x"]),
)
json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([2**64, -(2**70), 0.0, -0.0, 1.0, 1e308, 5e-324, [], {}, [1.5], [[{}]]]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=2),
)


@st.composite
def sized_dicts(draw: st.DrawFn, values: st.SearchStrategy[Any], key_strategy: Any) -> Any:
    """A dict of 0-5 keys, or of 30-34 keys (across the 32-key cut)."""
    if draw(st.integers(0, 3)):
        return draw(st.dictionaries(key_strategy, values, max_size=5))
    size = draw(st.integers(30, 34))
    names = [f"k{i:02d}" for i in range(size)]
    tree: dict[str, Any] = dict.fromkeys(names)
    for name in draw(st.lists(st.sampled_from(names), max_size=3)):
        tree[name] = draw(values)
    for key in draw(st.lists(key_strategy, max_size=2)):
        tree[key] = draw(values)
    return tree


def trees(key_strategy: Any, leaf_strategy: Any = leaves) -> st.SearchStrategy[Any]:
    return st.recursive(
        sized_dicts(leaf_strategy, key_strategy),
        lambda inner: sized_dicts(
            st.one_of(leaf_strategy, inner, st.lists(inner, max_size=2)), key_strategy
        ),
        max_leaves=12,
    )


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return math.copysign(1.0, a) == math.copysign(1.0, b) and (
            a == b or (math.isnan(a) and math.isnan(b))
        )
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _plain(tree: dict[str, Any]) -> Any:
    floats = _tree_floats(tree, 0)
    return None if floats < 0 else (shape_signature(tree), floats)


@SETTINGS
@given(tree=trees(one_byte_keys))
def test_one_byte_trees_sign_as_the_python(tree: dict[str, Any]) -> None:
    kernel = native_kernel("ingest._guard_native")
    native = kernel.signed_args(tree)
    assert native is not NotImplemented  # exact str keys: inside the kernel's domain
    assert _same(native, signed_args(tree))
    assert _same(native, _plain(tree))
    if native is not None:
        # Equal strings of the same (canonical) kind: ASCII only when every character is.
        assert native[0].isascii() == all(ord(c) < 128 for c in native[0])
    shape = kernel.shape_signature(tree)
    assert shape is NotImplemented or _same(shape, shape_signature(tree))


@SETTINGS
@given(tree=trees(any_keys))
def test_any_keys_sign_as_the_python_or_go_back(tree: dict[str, Any]) -> None:
    kernel = native_kernel("ingest._guard_native")
    native = kernel.signed_args(tree)
    if native is not NotImplemented:
        assert _same(native, signed_args(tree))
        assert _same(native, _plain(tree))


@SETTINGS
@given(tree=trees(st.one_of(one_byte_keys, st.sampled_from(WIDE[:5])), json_leaves))
def test_decoded_trees_sign_as_the_python(tree: dict[str, Any]) -> None:
    """Through the decoder (as the scanner meets them), inside the guard."""
    text = json.dumps(tree, ensure_ascii=False)
    kernel = native_kernel("ingest._guard_native")
    line = (
        '{"details":{"trace":{"kind":"pi-fabric.execution","version":1,'
        '"outcome":"failed","phases":["p"],"operations":[{"type":"call","sequence":0,'
        f'"ref":"r","args":{text},"outcome":"failed"}}],"counts":{{"droppedValues":0,'
        '"truncatedValues":0,"redactedValues":0,"droppedOperations":0}}}}'
    ).encode()
    trace = meter_decoder.decode(line).details.trace
    native = kernel.struct_guard(trace)
    assert native is not NotImplemented
    assert _same(native, struct_guard(trace))


class _LyingTrace(TraceV1):
    def __getattribute__(self, name: str) -> Any:
        if name == "version":
            return 2
        return super().__getattribute__(name)


class _LyingOperation(OperationV1):
    def __getattribute__(self, name: str) -> Any:
        if name == "args":
            return {"lie": 1.5}
        if name == "sequence":
            return 7
        return super().__getattribute__(name)


class _LyingCounts(CountsV1):
    def __getattribute__(self, name: str) -> Any:
        return -1 if name == "redactedValues" else super().__getattribute__(name)


def _counts(kind: type[CountsV1] = CountsV1) -> CountsV1:
    return kind(droppedValues=0, truncatedValues=0, redactedValues=0, droppedOperations=0)


def _operation(kind: type[OperationV1] = OperationV1, sequence: Any = 0) -> OperationV1:
    return kind(type="call", sequence=sequence, ref="r", args={"a": 1}, outcome="failed")


def _trace(operations: list[Any], kind: type[TraceV1] = TraceV1, counts: Any = None) -> TraceV1:
    return kind(
        kind="pi-fabric.execution",
        version=1,
        outcome="failed",
        phases=[],
        operations=operations,
        counts=_counts() if counts is None else counts,
    )


def _outcome(function: Any, trace: Any) -> Any:
    try:
        return function(trace)
    except Exception as error:
        return type(error), str(error)


def _native_then_python(trace: Any) -> Any:
    kernel = native_kernel("ingest._guard_native")
    guarded = kernel.struct_guard(trace)
    return struct_guard(trace) if guarded is NotImplemented else guarded


@pytest.mark.parametrize(
    "make",
    [
        lambda: _trace([_operation()], kind=_LyingTrace),
        lambda: _trace([_operation(), _operation(_LyingOperation, 3)]),
        lambda: _trace([_operation(_LyingOperation)], counts=_counts(_LyingCounts)),
        lambda: _trace([_operation(sequence=0), _operation(sequence=1)]),
    ],
)
def test_subclassed_structs_are_read_as_the_python_reads_them(make: Any) -> None:
    trace = make()
    assert _same(_outcome(_native_then_python, trace), _outcome(struct_guard, trace))


@pytest.mark.parametrize("field", ["result", "args", "sequence", "ref", "failureStage"])
def test_deleted_operation_fields_fail_as_in_python(field: str) -> None:
    op = _operation()
    second = _operation(sequence=1)
    delattr(second, field)
    trace = _trace([op, second])
    native = _outcome(_native_then_python, trace)
    assert native == _outcome(struct_guard, trace)
    assert native[0] is AttributeError


@pytest.mark.parametrize("field", ["version", "counts", "operations"])
def test_deleted_trace_fields_fail_as_in_python(field: str) -> None:
    trace = _trace([_operation()])
    delattr(trace, field)
    native = _outcome(_native_then_python, trace)
    assert native == _outcome(struct_guard, trace)
    assert native[0] is AttributeError


def test_deleted_count_fields_fail_as_in_python() -> None:
    counts = _counts()
    del counts.droppedOperations
    trace = _trace([_operation()], counts=counts)
    native = _outcome(_native_then_python, trace)
    assert native == _outcome(struct_guard, trace)
    assert native[0] is AttributeError


class _ResizingOperation(OperationV1):
    """Reading its ``ref`` appends to or pops from the trace's operation list (Python code
    running in the middle of the guard)."""

    def __getattribute__(self, name: str) -> Any:
        if name == "ref":
            operations, grow = _RESIZE["operations"], _RESIZE["grow"]
            if grow and len(operations) < 6:
                operations.append(_operation(_ResizingOperation, len(operations) + 10))
            elif not grow and len(operations) > 1:
                operations.pop()
        return super().__getattribute__(name)


_RESIZE: dict[str, Any] = {}


@pytest.mark.parametrize("grow", [True, False])
@pytest.mark.parametrize("count", [1, 3])
def test_operations_resized_during_the_guard_are_read_as_python_iterates(
    grow: bool, count: int
) -> None:
    results = []
    for guard in (_native_then_python, struct_guard):
        operations: list[Any] = [_operation(_ResizingOperation, sequence=0)]
        operations += [_operation(_ResizingOperation, sequence=i) for i in range(1, count)]
        _RESIZE.update(operations=operations, grow=grow)
        results.append(_outcome(guard, _trace(operations)))
    assert _same(results[0], results[1])
    # Growing: every appended operation is read. Shrinking: the second operation pops
    # itself while it is read (it is still signed), and nothing comes after it.
    assert results[0][2] == "" and len(results[0][0]) == (6 if grow else min(count, 2))
