"""Metric v3 properties: the score is a rate, so duplicating a corpus cannot move it."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_entropy.core.meter import MeterState, measure, report_hash
from pytest_entropy.testing import strategies as es

corpora = st.lists(es.traces(), max_size=8)


def _scores(report: Any) -> tuple[Any, ...]:
    return (
        report.score,
        report.behavioral_score,
        tuple((row.ref, row.score) for row in report.refs),
        tuple((row.model, row.behavioral_score) for row in report.by_model),
    )


@given(corpora, st.integers(2, 5), st.one_of(st.none(), es.surfaces()))
def test_duplicating_a_corpus_leaves_the_v3_score_unchanged(
    traces: list[dict[str, Any]], copies: int, surface: Any
) -> None:
    once = measure(traces, surface, metric_version=3)
    many = measure(traces * copies, surface, metric_version=3)
    assert _scores(many) == _scores(once)
    assert many.totals.action_operations == once.totals.action_operations * copies
    assert many.totals.invocation_rejections == once.totals.invocation_rejections * copies
    assert 0 <= once.score <= 1
    assert once.behavioral_score == once.score


@given(corpora, st.data())
def test_v3_merge_of_slices_equals_one_pass(
    traces: list[dict[str, Any]], data: st.DataObject
) -> None:
    cut = data.draw(st.integers(0, len(traces)))
    left, right = MeterState(), MeterState()
    left.add_traces(traces[:cut])
    right.add_traces(traces[cut:])
    merged = left.merge(right).finalize(metric_version=3)
    assert report_hash(merged) == report_hash(measure(traces, metric_version=3))
