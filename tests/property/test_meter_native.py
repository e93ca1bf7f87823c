"""The meter's native kernel (``core/_meter_native.c``) against its Python twin and the plain code.

Every trace goes through ``MeterState.add_signed`` on three states, one per path (native,
python fast path, plain), and the states must agree in every slot: counts (and their types),
the insertion order of every map, float sums and churn terms bit for bit, the models' own
states. Inputs outside the kernel's domain must reach the Python (same result, same error)
and leave the state untouched by the kernel.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_entropy.core.meter import MeterState, measure, report_hash
from pytest_entropy.core.meter_apply import _RefAccumulator
from pytest_entropy.testing import strategies as es
from tests.native_support import paths

KERNEL = "core._meter_native"
PATHS = ("native", "python", "plain")

REFS = (
    "pi.read",
    "pi.write",
    "pi.读",
    "pi.\U0001f600",
    "fabric.discovery.list",
    "fabric.discovery.",
    "fabric.workflow.step",
    "fabric.workflow.",
    "fabric.other",
    "fabric.",
    "fabric",
    "fabric.discover",
    "fabric.\u0400workflow.x",
    "",
)
OUTCOMES = ("succeeded", "failed", "aborted", "timed_out", "", "Failed", "failed ")
STAGES = (None, "resolve", "prepare", "validate", "invoke", "unknown", "", "résolve", "\U0001f600")
SIGNATURES = (
    "()",
    "(path:str)",
    "(path:str,limit:int)",
    "(query:str)",
    "(ζ:str)",
    "(\U0001f600:int)",
)
MODELS = (None, "", "p/a", "p/b", "модель", "\U0001f600/x", "p/c", "p/d")
TASKS = (None, "", "t1", "t2", "задача")

signatures = st.one_of(st.sampled_from(SIGNATURES), st.text(max_size=6))
signed_operations = st.tuples(
    st.one_of(st.sampled_from(REFS), st.text(max_size=5)),
    st.just({}),
    st.sampled_from(OUTCOMES),
    st.sampled_from(STAGES),
    signatures,
)
traces = st.tuples(
    st.lists(signed_operations, max_size=7),
    st.one_of(st.sampled_from(TASKS), st.text(max_size=3)),
    st.sampled_from(MODELS),
)


def _bits(value: float) -> str:
    return struct.pack("<d", value).hex()


def dump(value: Any, inside: tuple[int, ...] = ()) -> Any:
    """A state (or anything in it) as nested tuples: types kept, maps in order, floats as bits
    (a state met again inside itself is named by its depth)."""
    kind = type(value)
    if id(value) in inside:
        return ("again", inside.index(id(value)))
    if isinstance(value, MeterState):
        inner = (*inside, id(value))
        fields = tuple((name, dump(getattr(value, name), inner)) for name in MeterState.__slots__)
        return (kind.__name__, fields)
    if kind is _RefAccumulator:
        return ("acc", tuple((name, dump(getattr(value, name))) for name in kind.__slots__))
    if kind is float:
        return ("float", _bits(value))
    if kind is dict or kind is _Dict:
        items = tuple((dump(key, inside), dump(item, inside)) for key, item in value.items())
        return (kind.__name__, items)
    if kind is list:
        return ("list", tuple(dump(item) for item in value))
    return (kind.__name__, repr(value))


def outcome_of(action: Callable[[], Any]) -> Any:
    try:
        action()
    except Exception as error:  # the paths must fail alike (same type, same words)
        return (type(error).__name__, str(error))
    return None


def run_paths(
    traces: list[Any], *, retain: bool, prepare: Callable[[MeterState], None] | None = None
) -> Iterator[tuple[str, MeterState, list[Any]]]:
    """Each path's state after the traces, with the outcome (None or the error) of each call."""
    for kind in PATHS:
        with paths(kind):
            state = MeterState(retain_terms=retain)
            if prepare is not None:
                prepare(state)
            results = [
                outcome_of(lambda s=state, trace=trace: s.add_signed(*trace)) for trace in traces
            ]
        yield kind, state, results


def assert_paths_agree(
    traces: list[Any], *, retain: bool, prepare: Callable[[MeterState], None] | None = None
) -> list[MeterState]:
    seen = list(run_paths(traces, retain=retain, prepare=prepare))
    assert_agree([(dump(state), results) for _, state, results in seen])
    return [state for _, state, _ in seen]


def assert_agree(seen: list[tuple[Any, list[Any]]]) -> None:
    """Native, python and plain (state dump, call outcomes) agree. A call that raised leaves
    the python fast path's state and the plain one's changed differently (each stops where
    the error arose), so then only the errors and the native and python states must agree:
    the kernel hands such input to the python fast path before changing anything."""
    (native, native_results), (python, python_results), (plain, plain_results) = seen
    assert native_results == python_results == plain_results
    assert native == python
    if not any(native_results):
        assert native == plain


@settings(max_examples=100)
@given(st.lists(st.tuples(signed_operations, st.booleans()), max_size=12), st.booleans())
def test_failures_followed_by_the_same_ref_churn_alike(
    chain: list[tuple[Any, bool]], retain: bool
) -> None:
    # One ref that fails and is called again, over and over: many churn terms per trace.
    operations = [("pi.read", {}, "failed" if fail else op[2], op[3], op[4]) for op, fail in chain]
    states = assert_paths_agree([(operations, "t", "p/a"), (operations, None, None)], retain=retain)
    assert states[0].churn_pairs == states[2].churn_pairs
    assert len(states[0].churn_terms) == (states[0].churn_pairs if retain else 0)


@settings(max_examples=30)
@given(st.lists(es.traces(), max_size=6), st.booleans())
def test_spec_shaped_traces_measure_alike(batch: list[Any], retain: bool) -> None:
    reports = set()
    dumps = []
    for kind in PATHS:
        with paths(kind):
            state = MeterState(retain_terms=retain)
            state.add_traces(batch)
            dumps.append(dump(state))
            reports.add(report_hash(measure(batch)))
    assert dumps[0] == dumps[1] == dumps[2]
    assert len(reports) == 1


class _Str(str):
    pass


class _Dict(dict):  # type: ignore[type-arg]
    pass


OUT_OF_DOMAIN: list[tuple[str, Any]] = [
    ("a generator of operations", lambda ops: (op for op in ops)),
    ("a 4-tuple", lambda ops: [op[:4] for op in ops]),
    ("a 6-tuple", lambda ops: [(*op, None) for op in ops]),
    ("an int ref", lambda ops: [(7, *op[1:]) for op in ops]),
    ("a str subclass ref", lambda ops: [(_Str(op[0]), *op[1:]) for op in ops]),
    ("a None outcome", lambda ops: [(op[0], op[1], None, *op[3:]) for op in ops]),
    ("a str subclass outcome", lambda ops: [(op[0], op[1], _Str("failed"), *op[3:]) for op in ops]),
    ("an int stage", lambda ops: [(op[0], op[1], "failed", 3, op[4]) for op in ops]),
    ("a list stage", lambda ops: [(op[0], op[1], "failed", [], op[4]) for op in ops]),
    ("a tuple signature", lambda ops: [(*op[:4], ("a",)) for op in ops]),
    ("a list of lists", lambda ops: [list(op) for op in ops]),
]


@pytest.mark.parametrize(("label", "change"), OUT_OF_DOMAIN, ids=[c[0] for c in OUT_OF_DOMAIN])
@pytest.mark.parametrize("retain", [True, False])
def test_odd_operations_behave_as_in_python(label: str, change: Any, retain: bool) -> None:
    base = [
        ("pi.read", {}, "failed", "validate", "(a:str)"),
        ("pi.read", {}, "succeeded", None, "(b:str)"),
        ("fabric.workflow.x", {}, "succeeded", None, "()"),
    ]
    # A fresh operations object per call and path (a generator is used up once).
    batch = [("model", "p/a"), ("unstamped", None)]
    seen = []
    for kind in PATHS:
        with paths(kind):
            state = MeterState(retain_terms=retain)
            results = [
                outcome_of(lambda s=state, m=model: s.add_signed(change(base), "t", m))
                for _, model in batch
            ]
        seen.append((dump(state), results))
    assert_agree(seen)


@pytest.mark.parametrize(
    ("task_key", "model"),
    [
        (3, "p/a"),
        (("t",), None),
        (_Str("t"), "p/a"),
        ("t", 1),
        ("t", 0),
        ("t", _Str("p/a")),
        ("t", ("p", "a")),
        (None, []),
    ],
)
def test_odd_task_keys_and_models_behave_as_in_python(task_key: Any, model: Any) -> None:
    operations = [("pi.read", {}, "succeeded", None, "()"), ("pi.read", {}, "failed", None, "()")]
    assert_paths_agree([(operations, task_key, model)] * 2, retain=True)


class _SubState(MeterState):
    __slots__ = ()


def _odd_state(state: MeterState) -> None:
    """Values the kernel meets in a state it did not fill: huge ints, odd floats, subclasses."""
    state.traces = 2**70
    state.operations = 2**63 - 1
    state.succeeded = -(2**64)
    state.failed = True
    state.churn_sum = 1e308
    acc = _RefAccumulator()
    acc.calls = 2**63 - 1
    acc.succeeded = 2.5
    acc.churn_sum = -0.0
    acc.signatures = _Dict({"()": 2**80})
    acc.stages = {"unknown": 2**62}
    state.refs["pi.read"] = acc
    state.refs["pi.none"] = None  # type: ignore[assignment]
    inner = MeterState(retain_terms=state.retain_terms)
    inner.churn_sum = math.inf
    inner.churn_terms = []
    state.models["p/a"] = inner
    state.task_sequences["t"] = {"pi.read": 2**64}


@pytest.mark.parametrize("retain", [True, False])
def test_a_state_with_odd_values_is_filled_as_python_fills_it(retain: bool) -> None:
    operations = [
        ("pi.read", {}, "failed", "validate", "(a:str)"),
        ("pi.read", {}, "succeeded", None, "()"),
        ("pi.none", {}, "failed", None, "()"),
        ("pi.none", {}, "aborted", None, "(b:str)"),
    ]
    assert_paths_agree(
        [(operations, "t", "p/a"), (operations, "t", None), (operations, "u", "p/b")],
        retain=retain,
        prepare=_odd_state,
    )


def test_a_model_state_of_another_kind_goes_to_python() -> None:
    def prepare(state: MeterState) -> None:
        state.models["p/a"] = _SubState()
        state.models["p/b"] = state

    operations = [
        ("pi.read", {}, "failed", None, "(a:str)"),
        ("pi.read", {}, "succeeded", None, "()"),
    ]
    assert_paths_agree(
        [(operations, "t", "p/a"), (operations, "t", "p/b")], retain=True, prepare=prepare
    )


def test_a_failing_distance_fails_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_entropy.core import meter

    def broken(a: str, b: str) -> float:
        raise RuntimeError(f"no distance for {a} {b}")

    monkeypatch.setattr(meter, "signature_distance", broken)
    operations = [
        ("pi.read", {}, "failed", None, "(a:str)"),
        ("pi.read", {}, "succeeded", None, "()"),
    ]
    states = assert_paths_agree(
        [(operations, "t", "p/a"), (operations[:1], "t", "p/a")], retain=True
    )
    assert states[0].traces == 1  # the failing trace added nothing


def test_a_distance_of_another_type_is_summed_as_python_sums_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_entropy.core import meter

    answers = iter([1, None, 0.1, 2**70, 0.2] * 10)
    monkeypatch.setattr(meter, "signature_distance", lambda _a, _b: next(answers))
    operations = [
        ("pi.read", {}, "failed", None, "(a:str)"),
        ("pi.read", {}, "succeeded", None, "()"),
    ]
    for retain in (True, False):
        seen = []
        for kind in PATHS:
            answers = iter([1, None, 0.1, 2**70, 0.2] * 10)
            with paths(kind):
                state = MeterState(retain_terms=retain)
                for model in ("p/a", None, "p/a", "p/b", None):
                    state.add_signed(operations, "t", model)
            seen.append(dump(state))
        assert seen[0] == seen[1] == seen[2]


odd_traces = st.one_of(
    traces,
    traces.map(lambda trace: ([(_Str(op[0]), *op[1:]) for op in trace[0]], *trace[1:])),
    traces.map(lambda trace: (tuple(trace[0]), trace[1], trace[2])),
    traces.map(lambda trace: [trace[0], trace[1], trace[2]]),  # an entry that is a list
    traces.map(lambda trace: (trace[0], 7, trace[2])),
)


@settings(max_examples=100)
@given(st.lists(odd_traces, max_size=10), st.booleans())
def test_a_batch_of_traces_fills_as_one_call_per_trace(batch: list[Any], retain: bool) -> None:
    seen = []
    for kind in PATHS:
        with paths(kind):
            state = MeterState(retain_terms=retain)
            state.add_signed_many(list(batch))
            one_by_one = MeterState(retain_terms=retain)
            for operations, task_key, model in batch:
                one_by_one.add_signed(operations, task_key, model)
        assert dump(state) == dump(one_by_one)
        seen.append(dump(state))
    assert seen[0] == seen[1] == seen[2]


def test_a_batch_stops_where_a_trace_fails_as_a_loop_would() -> None:
    good = ([("pi.read", {}, "succeeded", None, "()")], "t", "p/a")
    batch = [good, ([("pi.read", {}, "failed", [], "()")], "t", "p/a"), good]
    seen = []
    for kind in PATHS:
        with paths(kind):
            state = MeterState()
            seen.append(outcome_of(lambda s=state: s.add_signed_many(batch)))
    assert seen == [("TypeError", "unhashable type: 'list'")] * 3
