"""The meter kernel's batch (``add_signed_many``) against one call per trace and the Python.

Within one batch the kernel adds a state's totals (traces, operations, outcomes, churn pairs)
up as C numbers and puts them into the state once, and it reuses what it looked up (a
model's state, a task's sequence counts, the accumulators of a ref met again) while no
Python code ran. These tests check that nothing of it shows: states filled by a batch equal
those filled trace by trace and on the Python paths, with odd values in the state (huge
ints, ints about to pass a C long, bools, floats, -0.0), more models than the kernel keeps
at once, and Python code (``signature_distance``, the accumulator's constructor) that
looks at the states or changes them in the middle of a batch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_entropy.core import meter
from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.meter_apply import _RefAccumulator
from tests.native_support import paths
from tests.property.test_meter_native import PATHS, dump, outcome_of, traces

LONG_MAX = 2**63 - 1

# More models than the kernel keeps pending totals or cached lookups for (16 each).
many_models = st.one_of(st.none(), st.just(""), st.integers(0, 40).map(lambda n: f"m{n}"))
batch_traces = st.one_of(traces, traces.map(lambda trace: (trace[0], trace[1], None))).flatmap(
    lambda trace: many_models.map(lambda model: (trace[0], trace[1], model))
)

odd_counts = st.one_of(
    st.integers(0, 300),
    st.integers(LONG_MAX - 40, LONG_MAX),
    st.integers(2**64, 2**80),
    st.integers(-(2**70), -1),
    st.booleans(),
    st.sampled_from([0.5, -0.0, 1e308, 2.0**53]),
)
COUNTER_SLOTS = (
    "traces",
    "operations",
    "action_operations",
    "discovery_operations",
    "workflow_operations",
    "succeeded",
    "failed",
    "aborted",
    "timed_out",
    "invocation_rejections",
)
odd_states = st.dictionaries(st.sampled_from(COUNTER_SLOTS), odd_counts, max_size=4)


def _fill(values: dict[str, Any]) -> Callable[[MeterState], None]:
    def prepare(state: MeterState) -> None:
        for name, value in values.items():
            setattr(state, name, value)
        inner = MeterState(retain_terms=state.retain_terms)
        for name, value in values.items():
            setattr(inner, name, value)
        state.models["m1"] = inner

    return prepare


def batch_paths(
    batch: list[Any], *, retain: bool, prepare: Callable[[MeterState], None] | None = None
) -> list[tuple[Any, Any, Any]]:
    """Per path: the state after one add_signed_many, its outcome, and the state after one
    add_signed per trace (each from a fresh prepared state)."""
    seen = []
    for kind in PATHS:
        with paths(kind):
            state = MeterState(retain_terms=retain)
            one_by_one = MeterState(retain_terms=retain)
            if prepare is not None:
                prepare(state)
                prepare(one_by_one)
            result = outcome_of(lambda s=state: s.add_signed_many(list(batch)))
            for operations, task_key, model in batch:
                one_by_one.add_signed(operations, task_key, model)
        seen.append((dump(state), result, dump(one_by_one)))
    return seen


@settings(max_examples=150)
@given(st.lists(batch_traces, max_size=40), st.booleans(), odd_states)
def test_a_batch_fills_odd_states_as_one_call_per_trace(
    batch: list[Any], retain: bool, values: dict[str, Any]
) -> None:
    seen = batch_paths(batch, retain=retain, prepare=_fill(values))
    (native, native_result, native_one), (python, python_result, _), (plain, _, plain_one) = seen
    assert native_result is None
    assert python_result is None
    assert native == native_one
    assert native == python == plain == plain_one


@pytest.mark.parametrize("retain", [True, False])
def test_counters_about_to_pass_a_c_long_in_a_batch(retain: bool) -> None:
    def prepare(state: MeterState) -> None:
        state.traces = LONG_MAX - 2
        state.operations = LONG_MAX - 5
        state.succeeded = LONG_MAX
        state.failed = 2**64

    operations = [
        ("pi.read", {}, "failed", "validate", "(a:str)"),
        ("pi.read", {}, "succeeded", None, "()"),
        ("fabric.discovery.x", {}, "succeeded", None, "()"),
    ]
    batch = [(operations, "t", None), (operations, "t", "p/a")] * 4
    seen = batch_paths(batch, retain=retain, prepare=prepare)
    assert seen[0][0] == seen[0][2] == seen[1][0] == seen[2][0]
    assert seen[0][1] is None


def _observed(
    monkeypatch: pytest.MonkeyPatch,
    batch: list[Any],
    hook: Callable[[MeterState, list[Any]], None],
    *,
    kinds: tuple[str, ...] = PATHS,
) -> list[tuple[Any, Any, list[Any]]]:
    """Each path's state, outcome and what ``hook`` saw, with hook(state, seen) run by every
    signature_distance call (which then answers 0.25)."""
    results = []
    for kind in kinds:
        state = MeterState()
        seen: list[Any] = []

        def distance(_a: str, _b: str, s: MeterState = state, log: list[Any] = seen) -> float:
            hook(s, log)
            return 0.25

        monkeypatch.setattr(meter, "signature_distance", distance)
        with paths(kind):
            result = outcome_of(lambda s=state: s.add_signed_many(list(batch)))
        results.append((dump(state), result, seen))
    return results


CHURNING = [
    ("pi.read", {}, "failed", "resolve", "(a:str)"),
    ("pi.read", {}, "succeeded", None, "(a:str,b:int)"),
    ("pi.write", {}, "succeeded", None, "()"),
]
QUIET = [("pi.read", {}, "succeeded", None, "()"), ("pi.write", {}, "aborted", None, "()")]


def _totals(state: MeterState) -> tuple[Any, ...]:
    return tuple(getattr(state, name) for name in (*COUNTER_SLOTS, "churn_pairs"))


def test_python_code_in_a_batch_sees_the_totals_so_far(monkeypatch: pytest.MonkeyPatch) -> None:
    def look(state: MeterState, log: list[Any]) -> None:
        log.append((_totals(state), {name: _totals(s) for name, s in state.models.items()}))

    batch = [(QUIET, "t", "p/a"), (QUIET, "u", None), (CHURNING, "t", "p/a")] * 3
    seen = _observed(monkeypatch, batch, look)
    assert seen[0] == seen[1] == seen[2]
    assert len(seen[0][2]) == 3
    assert seen[0][2][0][0][0] == 2  # two traces were in when the first distance was asked


MUTATIONS: list[tuple[str, Callable[[MeterState], None]]] = [
    ("the models are dropped", lambda s: s.models.clear()),
    ("a model's state is replaced", lambda s: s.models.update({"p/a": MeterState()})),
    ("the sequence counts are dropped", lambda s: s.task_sequences.clear()),
    ("a task's counts are replaced", lambda s: s.task_sequences.update({"t": {"x": 7}})),
    ("the refs are dropped", lambda s: s.refs.clear()),
    ("a ref's accumulator is replaced", lambda s: s.refs.update({"pi.read": _RefAccumulator()})),
    ("a counter becomes a float", lambda s: setattr(s, "traces", 0.5)),
    ("a counter becomes huge", lambda s: setattr(s, "succeeded", 2**90)),
    ("the maps are new objects", lambda s: setattr(s, "task_sequences", {})),
]


@pytest.mark.parametrize(("label", "change"), MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_python_code_that_changes_the_state_mid_batch_is_seen(
    monkeypatch: pytest.MonkeyPatch, label: str, change: Callable[[MeterState], None]
) -> None:
    def mutate(state: MeterState, log: list[Any]) -> None:
        log.append(_totals(state))
        change(state)

    # The same ref again after the churn (a reused accumulator), the same model and task.
    again = [*CHURNING, ("pi.read", {}, "succeeded", None, "()")]
    batch = [(QUIET, "t", "p/a"), (again, "t", "p/a"), (QUIET, "t", "p/a"), (again, "t", None)]
    seen = _observed(monkeypatch, batch, mutate)
    assert seen[0] == seen[1] == seen[2]
    assert seen[0][1] is None


def test_the_accumulator_constructor_sees_the_totals_so_far(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The fast paths (native and python) make the model's accumulator of an item right
    # after the state's; the plain code makes the state's of every item first.
    created: list[Any] = []
    holder: list[MeterState] = []
    original = _RefAccumulator.__init__

    def init(self: _RefAccumulator) -> None:
        created.append(_totals(holder[0]) if holder else None)
        original(self)

    monkeypatch.setattr(_RefAccumulator, "__init__", init)
    operations = [("a", {}, "succeeded", None, "()"), ("b", {}, "failed", None, "()")]
    batch = [(operations, "t", "p/a"), ([("c", {}, "succeeded", None, "()")], "t", "p/b")]
    logs = []
    for kind in ("native", "python"):
        created.clear()
        holder[:] = [MeterState()]
        with paths(kind):
            holder[0].add_signed_many(list(batch))
        logs.append((list(created), dump(holder[0])))
    assert logs[0] == logs[1]
    # The second trace's accumulators are made with the first trace's totals in the state.
    assert logs[0][0][-1] == (1, 2, 2, 0, 0, 1, 1, 0, 0, 0, 0)


def test_an_accumulator_met_again_is_looked_up_again_after_python_ran(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Making the model's accumulator of "a" empties the state's refs: the next "a" of the
    # trace must not reuse the state's accumulator the kernel found for the first one.
    holder: list[MeterState] = []
    original = _RefAccumulator.__init__
    made = [0]

    def init(self: _RefAccumulator) -> None:
        made[0] += 1
        if made[0] == 2:
            holder[0].refs.clear()
        original(self)

    monkeypatch.setattr(_RefAccumulator, "__init__", init)
    operations = [("a", {}, "succeeded", None, "()"), ("a", {}, "failed", None, "(x:str)")]
    dumps = []
    for kind in ("native", "python"):
        made[0] = 0
        holder[:] = [MeterState()]
        with paths(kind):
            holder[0].add_signed_many([(operations, "t", "p/a"), (operations, "t", "p/a")])
        dumps.append(dump(holder[0]))
    assert dumps[0] == dumps[1]
    assert holder[0].refs["a"].calls == 3  # the first call went with the emptied refs


ref_text = st.text(
    alphabet=st.sampled_from(["a", ".", "é", "ÿ", "→", "读", "\U0001f600", "\x00"]), max_size=6
)


def test_a_replaced_state_constructor_is_called_as_python_calls_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The kernel builds a model's state itself only while MeterState.__init__ is the one it
    # checked at import; a replaced one is called (and sees the totals so far).
    created: list[Any] = []
    holder: list[MeterState] = []
    original = MeterState.__init__

    def init(self: MeterState, *, retain_terms: bool = True) -> None:
        created.append((retain_terms, _totals(holder[0]) if holder else None))
        original(self, retain_terms=retain_terms)
        self.traces = 5

    operations = [("a", {}, "succeeded", None, "()")]
    batch = [(operations, "t", "p/a"), (operations, "t", "p/b"), (operations, "u", "p/a")]
    logs = []
    for kind in ("native", "python"):
        created.clear()
        holder[:] = [MeterState(retain_terms=False)]
        monkeypatch.setattr(MeterState, "__init__", init)
        with paths(kind):
            holder[0].add_signed_many(list(batch))
        monkeypatch.setattr(MeterState, "__init__", original)
        logs.append((list(created), dump(holder[0])))
    assert logs[0] == logs[1]
    # Each model's state is made before its first trace goes in: p/b after one trace.
    assert logs[0][0] == [(False, (0,) * 11), (False, (1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0))]
    assert holder[0].models["p/a"].traces == 7


def test_an_accumulator_whose_init_code_changed_is_made_by_that_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The same __init__ function with other code (what it sets differs): the kernel, which
    # checks the code too, must call it rather than build what the old code built.
    def seeded(self: Any) -> None:
        self.calls = 0
        self.succeeded = 0
        self.failed = 0
        self.signatures = {"seed": 0}
        self.stages = {}
        self.churn_pairs = 0
        self.churn_sum = -0.0
        self.churn_terms = []

    monkeypatch.setattr(_RefAccumulator.__init__, "__code__", seeded.__code__)
    operations = [("a", {}, "failed", "resolve", "()"), ("a", {}, "succeeded", None, "(x:str)")]
    batch = [(operations, "t", "p/a"), ([("b", {}, "succeeded", None, "()")], "t", None)]
    seen = batch_paths(batch, retain=True)
    assert seen[0][0] == seen[1][0] == seen[2][0]
    assert list(seen[0][0]) == list(seen[0][2])
    state = MeterState()
    with paths("native"):
        state.add_signed_many(list(batch))
    assert list(state.refs["a"].signatures) == ["seed", "()", "(x:str)"]
    assert math.copysign(1.0, state.refs["b"].churn_sum) == -1.0


def _whole(state: MeterState) -> bool:
    # With every trace holding an action, a state's traces equal its sequence counts and
    # its operations the calls of its accumulators.
    sequences = sum(sum(counts.values()) for counts in state.task_sequences.values())
    calls = sum(acc.calls for acc in state.refs.values())
    return state.traces == sequences and state.operations == calls
