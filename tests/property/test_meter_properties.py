"""Meter properties: key-order invariance, merge == one pass, associativity, determinism."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_entropy.core.canonical import canonical_json
from pytest_entropy.core.fingerprint import shape_signature
from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.core.meter import MeterState, measure, report_hash
from pytest_entropy.core.meter_report import ref_order
from pytest_entropy.testing import strategies as es

corpora = st.lists(es.traces(), max_size=8)


def reverse_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: reverse_keys(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reverse_keys(item) for item in value]
    return value


@given(corpora, st.one_of(st.none(), es.surfaces()))
def test_report_ignores_argument_key_order(traces: list[dict[str, Any]], surface: Any) -> None:
    shuffled = [
        {
            **trace,
            "operations": [{**op, "args": reverse_keys(op["args"])} for op in trace["operations"]],
        }
        for trace in traces
    ]
    assert report_hash(measure(traces, surface)) == report_hash(measure(shuffled, surface))


@given(corpora, st.data())
def test_merge_of_slices_equals_one_pass(traces: list[dict[str, Any]], data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(traces)), max_size=4)))
    bounds = [0, *cuts, len(traces)]
    states = []
    for start, end in itertools.pairwise(bounds):
        state = MeterState()
        state.add_traces(traces[start:end])
        states.append(state)
    root = MeterState(retain_terms=False)
    for state in states:
        root.merge(state)
    assert report_hash(root.finalize()) == report_hash(measure(traces))


@given(corpora, corpora, corpora)
def test_merge_is_associative(a: list[Any], b: list[Any], c: list[Any]) -> None:
    def state(traces: list[Any]) -> MeterState:
        made = MeterState()
        made.add_traces(traces)
        return made

    left = state(a).merge(state(b)).merge(state(c))
    right = state(a).merge(state(b).merge(state(c)))
    assert report_hash(left.finalize()) == report_hash(right.finalize())
    assert report_hash(left.finalize()) == report_hash(measure(a + b + c))


@given(corpora)
def test_merge_leaves_its_argument_untouched(traces: list[Any]) -> None:
    other = MeterState()
    other.add_traces(traces)
    before = report_hash(other.finalize())
    MeterState().merge(other).merge(other)
    assert report_hash(other.finalize()) == before


@given(es.json_values(max_leaves=30))
def test_canonicalising_twice_changes_nothing(value: Any) -> None:
    once = canonical_json(value)
    assert canonical_json(json.loads(once)) == once


def test_report_hash_is_independent_of_the_hash_seed() -> None:
    code = (
        "from pytest_entropy.core.meter import measure, report_hash\n"
        "traces = [{'operations': [{'ref': r, 'args': {k: 1 for k in 'zyxwvu'}, "
        "'outcome': o, 'failureStage': 'validate'} for r in ('b.x', 'a.y', 'c.z') "
        "for o in ('failed', 'succeeded')], 'taskKey': t, 'model': m} "
        "for t in ('t1', 't2') for m in ('p/a', 'p/b')]\n"
        "print(report_hash(measure(traces)))\n"
    )
    hashes = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        )
        hashes.add(result.stdout.strip())
    assert len(hashes) == 1


def _slots(state: MeterState) -> Any:
    """Everything a state holds, maps in their order (floats compared exactly)."""
    plain = {name: getattr(state, name) for name in MeterState.__slots__}
    plain["refs"] = [
        (ref, [(name, getattr(acc, name)) for name in type(acc).__slots__])
        for ref, acc in state.refs.items()
    ]
    plain["task_sequences"] = [
        (task, list(seq.items())) for task, seq in state.task_sequences.items()
    ]
    plain["models"] = [(model, _slots(inner)) for model, inner in state.models.items()]
    return plain


@given(st.lists(es.traces(), max_size=10), st.booleans())
def test_signed_batches_accumulate_as_traces_do(traces: list[Any], retain: bool) -> None:
    """One state fed trace by trace, one fed the same traces as one batch of signed traces
    (what a scanner hands over), and both merge on alike."""
    state = MeterState(retain_terms=retain)
    for trace in traces:
        state.add_trace(trace)
    batch = MeterState(retain_terms=retain)
    batch.add_signed_many(
        [
            (
                [
                    (op["ref"], op["args"], op["outcome"], op.get("failureStage"), sig)
                    for op in trace["operations"]
                    for sig in (shape_signature(op["args"]),)
                ],
                trace.get("taskKey"),
                trace.get("model"),
            )
            for trace in traces
        ]
    )
    assert _slots(batch) == _slots(state)
    assert report_hash(batch.finalize()) == report_hash(state.finalize())
    if retain:  # the states merge on alike
        assert report_hash(MeterState().merge(batch).merge(batch).finalize()) == report_hash(
            MeterState().merge(state).merge(state).finalize()
        )


@given(st.sets(st.text(max_size=3)), st.sets(st.text(max_size=3)))
def test_a_models_refs_take_the_global_order(global_refs: set[str], extra: set[str]) -> None:
    """``ref_order`` filters the global state's sorted refs for a model's subset, and sorts
    anew when a ref is outside them; either way the refs come in code-unit order."""
    order = sorted(global_refs, key=code_unit_key)
    for refs in (dict.fromkeys(global_refs), dict.fromkeys(global_refs | extra)):
        assert ref_order(refs, order) == sorted(refs, key=code_unit_key)
    assert ref_order({"\U0001f600": 1, "\uffff": 2}, None) == ["\U0001f600", "\uffff"]
    assert ref_order({"b": 1, "a": 2}, ["a", "b", "c"]) == ["a", "b"]
