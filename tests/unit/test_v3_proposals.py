"""Metric v3 proposals: the upstream's asserted values (notes CV-36, CV-33 item 9;
tests/entropy-passes.test.ts @ monotykamary a76ea93)."""

from __future__ import annotations

import json
from typing import Any

from pytest_entropy.core.gate import evaluate_gate
from pytest_entropy.core.meter import measure
from pytest_entropy.core.proposals import (
    ProposalEvidence,
    format_review_signal,
    propose_entropy_reductions,
)
from pytest_entropy.core.v3.normal_form import derive_normal_form_plan
from pytest_entropy.core.v3.proposals import (
    V3_AUTO_APPLY_PROPOSAL_KINDS,
    apply_proposals_to_surface_v3,
    normal_form_proposals,
    review_signals_v3,
)
from tests.v3_support import closed, op, surface, trace


def ratchet_traces() -> list[dict[str, Any]]:
    return [
        trace(
            [op("mcp.report.render", {"format": "pdf"}) for _ in range(7)]
            + [op("mcp.report.render", {"format": "html"})],
            "ratchet",
        ),
        trace(
            [
                op("mcp.flaky.run", {"mode": "fast"}, "failed", "validate"),
                op("mcp.flaky.run", {"mode": "slow"}, "failed", "invoke"),
                op("mcp.flaky.run", {"mode": "fast"}, "failed", "validate"),
                op("mcp.flaky.run", {"mode": "fast"}, "failed", "invoke"),
            ],
            "ratchet",
        ),
        trace([op("memory.expand", {"session": f"s{i}"}) for i in range(1, 9)], "ratchet"),
    ]


def ratchet_surface() -> dict[str, Any]:
    return surface(
        (
            "mcp.report.render",
            closed(
                {"format": {"type": "string", "enum": ["docx", "html", "pdf", "web"]}}, ["format"]
            ),
        ),
        ("mcp.flaky.run", closed({"mode": {"type": "string"}}, ["mode"])),
        ("memory.expand", closed({"session": {"type": "string"}}, ["session"])),
    )


def v3_propose(traces: list[Any], live: Any = None, **kwargs: Any) -> list[dict[str, Any]]:
    report = measure(traces, live, metric_version=3)
    return propose_entropy_reductions(report, traces, live, metric_version=3, **kwargs)


def test_normal_forms_without_observations_and_no_restrictions() -> None:
    live = ratchet_surface()
    proposals = v3_propose([], live)
    assert len(proposals) == 3
    assert all(p["kind"] == "normal-form" for p in proposals)
    # One per action, in code-unit order of the ref, carrying the derived plan's fields.
    assert [p["ref"] for p in proposals] == ["mcp.flaky.run", "mcp.report.render", "memory.expand"]
    for proposal in proposals:
        schema = next(a["inputSchema"] for a in live["actions"] if a["ref"] == proposal["ref"])
        plan = derive_normal_form_plan(proposal["ref"], schema)
        assert plan is not None
        assert proposal == {
            "kind": "normal-form",
            "ref": plan["ref"],
            "baseSchemaDigest": plan["baseSchemaDigest"],
            "rules": plan["rules"],
        }
    assert apply_proposals_to_surface_v3(live, proposals) is live
    busy = v3_propose(ratchet_traces(), live)
    assert [p for p in busy if p["kind"] == "normal-form"] == proposals
    assert not any(p["kind"] in ("enum-tighten", "noise-quarantine") for p in busy)
    # The same corpus under v2 proposes the restrictions v3 never does.
    v2 = propose_entropy_reductions(measure(ratchet_traces(), live), ratchet_traces(), live)
    assert {p["kind"] for p in v2} >= {"enum-tighten", "noise-quarantine"}


def test_surface_is_never_rewritten() -> None:
    live = ratchet_surface()
    saved = json.dumps(live)
    proposals = v3_propose(
        ratchet_traces(),
        live,
        repairs=[
            {"kind": "keyAlias", "ref": "memory.expand", "from": "sessionId", "to": "session"}
        ],
    )
    assert apply_proposals_to_surface_v3(live, proposals) is live
    assert json.dumps(live) == saved
    legacy = [
        {
            "kind": "enum-tighten",
            "ref": "mcp.report.render",
            "key": "format",
            "values": ["pdf"],
            "calls": 8,
            "distinct": 1,
            "topShare": 1,
        },
        {
            "kind": "noise-quarantine",
            "ref": "mcp.flaky.run",
            "calls": 4,
            "failed": 4,
            "succeeded": 0,
            "failureStageEntropyBits": 1,
        },
    ]
    assert apply_proposals_to_surface_v3(live, legacy) is live


def test_no_domains_from_strings_numbers_booleans_or_unknown_refs() -> None:
    live = surface(
        (
            "demo.call",
            {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "text": {"type": "string"},
                    "count": {"type": "number", "minimum": 1},
                    "all": {"type": "boolean"},
                },
            },
        )
    )
    calls = [
        op(
            "demo.call",
            {
                "text": "a" if i < 7 else "b",
                "count": i % 2 + 1,
                "all": i % 2 == 0,
                "undeclared": "x",
            },
        )
        for i in range(8)
    ]
    traces = [trace(calls), trace([op("ghost.run", {"value": "a"})])]
    proposals = v3_propose(traces, live)
    assert len(proposals) == 1
    assert proposals[0]["kind"] == "normal-form"


def test_opted_in_vocabulary_is_advisory() -> None:
    live = surface(
        (
            "demo.call",
            {
                "type": "object",
                "additionalProperties": False,
                "properties": {"format": {"type": "string", "x-fabric-enum-candidate": True}},
            },
        )
    )
    observations = [
        {"ref": "demo.call", "key": "format", "value": "pdf", "count": 7},
        {"ref": "demo.call", "key": "format", "value": "html", "count": 1},
    ]
    proposals = v3_propose([], live, value_observations=observations)
    declare = next(p for p in proposals if p["kind"] == "declare-enum")
    assert declare == {
        "kind": "declare-enum",
        "ref": "demo.call",
        "key": "format",
        "values": ["pdf", "html"],
        "calls": 8,
        "distinct": 2,
        "topShare": 0.875,
    }
    assert [p["kind"] for p in proposals] == ["normal-form", "declare-enum"]
    assert apply_proposals_to_surface_v3(live, proposals) is live
    assert not any(p["kind"] == "declare-enum" for p in v3_propose([], live))
    assert review_signals_v3(proposals) == [declare]
    assert format_review_signal(declare) == "declare-enum demo.call.format (pdf, html)"
    assert format_review_signal(proposals[0]) == "normal-form demo.call"


def test_declared_enum_is_never_reinterpreted() -> None:
    observations = [
        {"ref": "mcp.report.render", "key": "format", "value": "pdf", "count": 70},
        {"ref": "mcp.report.render", "key": "format", "value": "rtf", "count": 10},
    ]
    proposals = v3_propose([], ratchet_surface(), value_observations=observations)
    assert proposals and all(p["kind"] == "normal-form" for p in proposals)


def test_gate_checks_regression_without_rewarding_shrinkage() -> None:
    before = measure(ratchet_traces(), ratchet_surface(), metric_version=3)
    same = measure(ratchet_traces(), ratchet_surface(), metric_version=3)
    gate = evaluate_gate(before, same)
    assert gate["passed"] is True and gate["delta"] == 0
    worse = {**same.to_json(), "score": before.score + 0.1}
    assert evaluate_gate(before, worse)["passed"] is False
    dropped = {**same.to_json(), "totals": {**same.totals.to_json(), "succeeded": 0}}
    assert "successful calls dropped" in " ".join(evaluate_gate(before, dropped)["reasons"])


def test_structural_signals_are_as_in_v2() -> None:
    structure = [
        trace(
            [
                op("pi.read", {"path": "a"}),
                op("pi.grep", {"path": "."}),
                op("pi.edit", {"path": "a"}),
            ],
            "loop",
        ),
        trace(
            [
                op("pi.read", {"path": "b"}),
                op("pi.grep", {"path": "."}),
                op("pi.edit", {"path": "b"}),
            ],
            "loop",
        ),
        trace(
            [op("mcp.store.put", {"key": "k", "value": "v"}) for _ in range(3)]
            + [op("mcp.store.put", {"prefix": "p", "limit": 10}) for _ in range(3)],
            "structure",
        ),
    ]
    assert v3_propose(structure) == [
        {
            "kind": "overload-split",
            "ref": "mcp.store.put",
            "shapeEntropyBits": 1,
            "clusters": [
                {"keys": ["key", "value"], "calls": 3},
                {"keys": ["limit", "prefix"], "calls": 3},
            ],
        }
    ]
    workflow = [
        op("memory.recall", {"query": "needle"}),
        op("memory.expand", {"session": "s1"}),
        op("state.get", {"key": "answer"}),
    ]
    repeated = [trace(workflow), trace(workflow), trace(workflow)]
    assert v3_propose(repeated) == [
        {
            "kind": "sequence-fuse",
            "sequence": ["memory.recall", "memory.expand", "state.get"],
            "occurrences": 3,
        }
    ]
    assert v3_propose([trace(workflow + workflow)]) == []
    fovea = [
        trace(
            [
                op("extensions.fovea_sketch", {}),
                op("extensions.fovea_focus", {}),
                op("extensions.fovea_focus", {}),
            ]
        )
        for _ in range(3)
    ]
    assert v3_propose(fovea) == []


def test_order_duplicates_and_cap() -> None:
    schema = closed({"n": {"type": "number"}}, ["n"])
    actions = [(f"demo.action{i:04d}", schema) for i in range(1003, -1, -1)]
    proposals = normal_form_proposals(surface(*actions, ("demo.action0000", schema)))
    # Sorted by ref (stable: the duplicate follows its twin), the first 1000 considered.
    assert len(proposals) == 1000
    assert proposals[0]["ref"] == proposals[1]["ref"] == "demo.action0000"
    assert proposals[-1]["ref"] == "demo.action0998"
    assert normal_form_proposals(None) == []
    assert V3_AUTO_APPLY_PROPOSAL_KINDS == ("normal-form",)


def test_evidence_route_equals_the_function() -> None:
    live = ratchet_surface()
    evidence = ProposalEvidence(trace_values=True)
    evidence.add_traces(ratchet_traces())
    report = measure(ratchet_traces(), live, metric_version=3)
    assert evidence.proposals(report, live, metric_version=3) == v3_propose(ratchet_traces(), live)


def test_review_signal_lines_and_repairs_never_review() -> None:
    from pytest_entropy.core.meter import measure as measure_v

    repairs = [
        {"kind": "keyAlias", "ref": "mcp.report.render", "from": "notAnAlias", "to": "format"}
    ]
    traces = [trace([op("mcp.report.render", {"format": "pdf"})])]
    report = measure_v(traces, metric_version=3)
    proposals = propose_entropy_reductions(report, traces, None, repairs, metric_version=3)
    assert review_signals_v3(proposals) == []
    declare = {"kind": "declare-enum", "ref": "mcp.report.render", "key": "format"}
    assert format_review_signal({**declare, "values": ["pdf", "html"]}) == (
        "declare-enum mcp.report.render.format (pdf, html)"
    )
    assert format_review_signal({**declare, "values": ["a", "b", "c", "d", "e"]}) == (
        "declare-enum mcp.report.render.format (a, b, c, d, ...)"
    )
    fuse = {"kind": "sequence-fuse", "sequence": ["pi.read", "pi.edit"], "occurrences": 3}
    assert format_review_signal(fuse) == "sequence-fuse pi.read -> pi.edit"
    normal = {"kind": "normal-form", "ref": "mcp.report.render", "baseSchemaDigest": "0" * 64}
    assert format_review_signal({**normal, "rules": []}) == "normal-form mcp.report.render"
    split = {
        "kind": "overload-split",
        "ref": "mcp.report.render",
        "shapeEntropyBits": 1,
        "clusters": [{"keys": ["a"], "calls": 2}, {"keys": ["b"], "calls": 2}],
    }
    assert format_review_signal(split) == "overload-split mcp.report.render (2 key-set clusters)"
