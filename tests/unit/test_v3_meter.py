"""Metric v3 finalisation: the upstream's asserted values (notes CV-30 report, CV-31, the
v3 wobble/converged/per-model cases of tests/entropy-meter.test.ts @ monotykamary a76ea93)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_entropy.core.meter import MeterState, check_metric_version, measure, report_hash
from pytest_entropy.core.records import ENTROPY_METRIC_VERSION
from pytest_entropy.core.v3 import ENTROPY_METRIC_VERSION_V3
from tests.v3_support import (
    converged_surface,
    converged_traces,
    cv30_live,
    cv30_traces,
    op,
    surface,
    trace,
    wobble_traces,
)


def v3(traces: list[Any], **kwargs: Any) -> dict[str, Any]:
    return measure(traces, metric_version=3, **kwargs).to_json()


def test_versions() -> None:
    assert ENTROPY_METRIC_VERSION == 2
    assert ENTROPY_METRIC_VERSION_V3 == 3
    assert measure([]).metric_version == 2
    assert measure([], metric_version=3).metric_version == 3
    for bad in (1, 4, "3", True, 3.0):
        with pytest.raises(ValueError, match="metric version must be 2 or 3"):
            check_metric_version(bad)
        with pytest.raises(ValueError):
            measure([], metric_version=bad)  # type: ignore[arg-type]


def test_converged_corpus() -> None:
    report = v3(converged_traces(), surface=converged_surface())
    assert report["score"] == 0
    assert report["staticFreedom"] == 3.5
    assert report["shapeEntropyBits"] == 0
    assert report["churnRate"] == 0
    assert report["navigationRatio"] == 0
    assert report["flowEntropyBits"] == 0
    assert report["totals"]["succeeded"] == 4
    assert report["totals"]["actionOperations"] == 4
    assert report["staticScore"] == 0.3125
    assert report["behavioralScore"] == 0


def test_wobble_species() -> None:
    report = v3(wobble_traces())
    expand = next(row for row in report["refs"] if row["ref"] == "memory.expand")
    assert report["score"] == 0.166667
    assert expand["score"] == 0.5
    assert expand["shapeEntropyBits"] == 0.811278
    assert expand["failureStageEntropyBits"] == 1
    assert expand["churnRate"] == 0.48
    assert report["churnRate"] == 0.32
    assert report["flowEntropyBits"] == 0.666667
    assert report["navigationRatio"] == 0.083333
    assert report["totals"]["invocationRejectionsPer1k"] == 166.666667
    assert report["totals"]["operations"] == 14
    assert report["totals"]["discoveryOperations"] == 1
    assert report["totals"]["workflowOperations"] == 1
    assert report["staticScore"] == 0
    assert report["behavioralScore"] == report["score"]
    assert report["refs"][0]["ref"] == "memory.expand"
    # Ties at score 0 keep code-unit order of the ref.
    assert [row["ref"] for row in report["refs"][1:]] == [
        "pi.bash",
        "pi.edit",
        "pi.grep",
        "pi.read",
    ]
    # v2 on the same corpus scores differently (the sum of entropy terms over successes).
    assert measure(wobble_traces()).score != report["score"]


def test_deterministic_and_argument_order_invariant() -> None:
    first = measure(wobble_traces(), metric_version=3)
    second = measure(wobble_traces(), metric_version=3)
    assert report_hash(first) == report_hash(second)
    shuffled = [
        {
            **source,
            "operations": [
                {**operation, "args": dict(reversed(list(operation["args"].items())))}
                for operation in source["operations"]
            ],
        }
        for source in wobble_traces()
    ]
    assert report_hash(measure(shuffled, metric_version=3)) == report_hash(first)


def test_hundredfold_duplication_keeps_rates_and_diagnostics() -> None:
    traces = [
        {**source, "model": "p/alpha" if index == 0 else "p/beta"}
        for index, source in enumerate(wobble_traces())
    ]
    kwargs: dict[str, Any] = {
        "surface": converged_surface(),
        "repairs": [{"kind": "keyAlias", "ref": "pi.read", "from": "file", "to": "path"}],
    }
    baseline = v3(traces, **kwargs)
    repeated = v3(traces * 100, **kwargs)
    for key in (
        "score",
        "behavioralScore",
        "staticScore",
        "staticFreedom",
        "shapeEntropyBits",
        "failureStageEntropyBits",
        "churnRate",
        "navigationRatio",
        "flowEntropyBits",
        "lexiconRows",
    ):
        assert repeated[key] == baseline[key], key
    assert repeated["totals"]["actionOperations"] == baseline["totals"]["actionOperations"] * 100
    assert (
        repeated["totals"]["invocationRejections"]
        == baseline["totals"]["invocationRejections"] * 100
    )
    assert [(r["ref"], r["score"]) for r in repeated["refs"]] == [
        (r["ref"], r["score"]) for r in baseline["refs"]
    ]
    assert [(m["model"], m["behavioralScore"]) for m in repeated["byModel"]] == [
        (m["model"], m["behavioralScore"]) for m in baseline["byModel"]
    ]


@pytest.mark.parametrize("stage", ["resolve", "prepare", "validate"])
def test_repeated_identical_rejections_score_one(stage: str) -> None:
    report = v3(
        [trace([op("pi.read", {}, "failed", stage) for _ in range(100)])],
        surface=converged_surface(),
    )
    assert report["score"] == 1
    assert report["behavioralScore"] == 1
    assert report["refs"][0]["score"] == 1
    assert report["totals"]["invocationRejectionsPer1k"] == 1000
    assert report["shapeEntropyBits"] == 0
    assert report["failureStageEntropyBits"] == 0
    assert report["churnRate"] == 0
    assert report["staticScore"] == 0.375


def test_optional_shapes_repairs_and_navigation_are_free() -> None:
    live = surface(
        (
            "pi.read",
            {
                "type": "object",
                "required": ["path"],
                "additionalProperties": False,
                "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
            },
        )
    )
    baseline = v3([trace([op("pi.read", {"path": "a"})])], surface=live)
    varied = v3(
        [
            trace([op("pi.read", {"path": "a"})]),
            trace([op("fabric.discovery.search", {}), op("pi.read", {"path": "b", "limit": 5})]),
        ],
        surface=live,
        repairs=[{"kind": "keyAlias", "ref": "pi.read", "from": "file", "to": "path"}],
    )
    assert varied["shapeEntropyBits"] == 1
    assert varied["navigationRatio"] == 0.5
    assert varied["lexiconRows"] == 1
    assert varied["staticScore"] > 0
    assert varied["staticScore"] == baseline["staticScore"] == 0.4375
    assert varied["score"] == baseline["score"]
    assert varied["behavioralScore"] == 0


def test_denominator_counts_every_action_outcome() -> None:
    report = v3(
        [
            trace(
                [
                    op("pi.read", {}, "failed", "resolve"),
                    op("pi.read", {}, "failed", "invoke"),
                    op("pi.read", {}, "failed"),
                    op("pi.read", {}, "aborted", "validate"),
                    op("pi.read", {}, "timed_out", "prepare"),
                    op("fabric.discovery.search", {}, "failed", "resolve"),
                    op("fabric.workflow.phase", {}, "failed", "validate"),
                ]
            )
        ]
    )
    assert report["score"] == 0.2
    assert report["refs"][0]["score"] == 0.2
    assert report["totals"]["actionOperations"] == 5
    assert report["totals"]["invocationRejections"] == 1


def test_zero_without_action_calls() -> None:
    traces = [{**trace([op("fabric.discovery.search", {}, "failed", "resolve")]), "model": "p/a"}]
    report = v3(traces, surface=converged_surface())
    assert report["score"] == 0
    assert report["behavioralScore"] == 0
    assert report["staticScore"] == 0
    assert report["byModel"][0]["behavioralScore"] == 0
    empty = v3([])
    assert empty["score"] == 0 and empty["refs"] == [] and empty["totals"]["operations"] == 0


def test_per_model_attribution() -> None:
    alpha = {
        **trace(
            [
                op("pi.read", {"path": "a"}, "failed", "validate"),
                op("pi.read", {"path": "a", "limit": 5}),
            ],
            "ta",
        ),
        "model": "p/alpha",
    }
    beta = {
        **trace([op("pi.edit", {"path": "a"}), op("pi.edit", {"path": "a"})], "tb"),
        "model": "p/beta",
    }
    unstamped = trace([op("pi.bash", {"command": "x"})], "tc")
    report = v3([alpha, beta, unstamped])
    assert report["metricVersion"] == 3
    assert report["totals"]["operations"] == 5
    assert [row["model"] for row in report["byModel"]] == ["p/alpha", "p/beta"]
    assert report["byModel"][0] == {
        "model": "p/alpha",
        "operations": 2,
        "actionOperations": 2,
        "succeeded": 1,
        "invocationRejections": 1,
        "invocationRejectionsPer1k": 500,
        "behavioralScore": 0.5,
    }
    assert report["byModel"][1]["operations"] == 2
    assert report["byModel"][1]["succeeded"] == 2
    assert report["byModel"][1]["behavioralScore"] == 0
    assert report["score"] == 0.2
    assert report["behavioralScore"] == 0.2
    assert v3([trace([op("pi.read", {"path": "a"})], "t")])["byModel"] == []


def test_cv30_certification_fixture_report() -> None:
    report = measure(cv30_traces(), cv30_live(), metric_version=3)
    body = report.to_json()
    assert body["score"] == 0.333333
    assert body["behavioralScore"] == body["score"]
    assert body["totals"]["invocationRejections"] == 1
    assert body["staticFreedom"] == 2.01416
    assert body["staticScore"] == 0.50354
    assert body["shapeEntropyBits"] == 0.918296
    assert body["failureStageEntropyBits"] == 1
    assert body["churnRate"] == 0.333333
    assert body["navigationRatio"] == 0.333333
    assert body["flowEntropyBits"] == 0
    assert body["totals"]["invocationRejectionsPer1k"] == 333.333333
    assert report_hash(report) == "6a7a3d246d20fc066ae3c966e88e8b2e95faea3b7a07d25cf6bf8257abf06875"
    # sample-count-invariance: tripling keeps score, staticScore and the model's score.
    tripled = measure(cv30_traces() * 3, cv30_live(), metric_version=3)
    assert (tripled.score, tripled.static_score) == (report.score, report.static_score)
    assert tripled.by_model[0].behavioral_score == report.by_model[0].behavioral_score
    # diagnostics-not-objective: the surface changes staticScore, never the score.
    assert report.static_score > 0
    assert measure(cv30_traces(), metric_version=3).score == report.score
    # allfail-nonzero: only the rejected call, no model.
    only = [{"operations": [cv30_traces()[0]["operations"][0]]}]
    alone = measure(only, metric_version=3)
    assert (alone.score, alone.behavioral_score) == (1, 1)


def test_state_merge_then_v3_finalise_equals_one_pass() -> None:
    traces = wobble_traces() + converged_traces()
    for split in range(len(traces) + 1):
        left, right = MeterState(), MeterState()
        left.add_traces(traces[:split])
        right.add_traces(traces[split:])
        merged = left.merge(right).finalize(converged_surface(), metric_version=3)
        assert merged == measure(traces, converged_surface(), metric_version=3)
