"""Partial compiles and apply on generated corpora: whatever is vetoed or skipped, what is
applied keeps the reference's promises, and the applied file reads back as the effective
surface."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import assume, event, given
from hypothesis import strategies as st

from pytest_entropy.core.apply import plan_apply
from pytest_entropy.core.artifact import apply_compiled_surface
from pytest_entropy.core.canonical import schema_digest
from pytest_entropy.core.compiler import (
    compile_entropy_surface,
    replay_successful_calls,
    touched_refs,
)
from pytest_entropy.core.fingerprint import surface_freedom_report
from pytest_entropy.core.proposals import AUTO_APPLY_PROPOSAL_KINDS
from pytest_entropy.core.steering import Steering, steer_entropy_surface
from pytest_entropy.core.validation import accepts
from pytest_entropy.ingest.surface_writers import rewrite_surface, tool_slots
from pytest_entropy.ingest.surfaces import surface_from_parsed
from pytest_entropy.testing import strategies as es

FORMATS = ["pdf", "html", "docx", "md", "web"]
MODES = ["fast", "slow", "safe"]
REFS = ["mcp.report.render", "mcp.flaky.run", "mcp.notes.search"]
STAGES = ["validate", "invoke", "prepare"]


@st.composite
def corpora(draw: st.DrawFn) -> dict[str, Any]:
    """Tools with two enum parameters; calls, audits and value observations drawn apart, so
    tightenings (several on one tool) and quarantines get vetoed in every combination."""
    actions = []
    for ref in REFS:
        properties = {
            "format": {"type": "string", "enum": draw(st.permutations(FORMATS))[:4]},
            "mode": {"type": "string", "enum": list(MODES)},
        }
        actions.append({"ref": ref, "inputSchema": {"type": "object", "properties": properties}})
    call = st.fixed_dictionaries(
        {"format": st.sampled_from(FORMATS[:3]), "mode": st.sampled_from(MODES)}
    )
    traces = []
    for _ in range(draw(st.integers(1, 4))):
        ops = []
        for _ in range(draw(st.integers(2, 16))):
            op: dict[str, Any] = {
                "ref": draw(st.sampled_from(REFS)),
                "args": draw(call),
                "outcome": draw(st.sampled_from(["succeeded", "succeeded", "failed"])),
            }
            if op["outcome"] == "failed":
                op["failureStage"] = draw(st.sampled_from(STAGES))
            ops.append(op)
        traces.append({"operations": ops, "taskKey": "t"})
    audits = draw(
        st.lists(st.fixed_dictionaries({"ref": st.sampled_from(REFS), "args": call}), max_size=4)
    )
    observation = st.builds(
        lambda ref, key, value, count: {"ref": ref, "key": key, "value": value, "count": count},
        st.sampled_from(REFS),
        st.sampled_from(["format", "mode"]),
        st.sampled_from(FORMATS[:3] + MODES),
        st.integers(1, 6),
    )
    # None (the trace arguments), drawn apart, or the calls' own values plus a few more
    # (mostly safe tightenings, now and then one that refuses a recorded call).
    derived = [
        {"ref": op["ref"], "key": key, "value": op["args"][key]}
        for trace in traces
        for op in trace["operations"]
        if op["outcome"] == "succeeded" and draw(st.integers(0, 5)) > 0
        for key in ("format", "mode")
    ]
    observations = draw(
        st.one_of(
            st.none(),
            st.lists(observation, max_size=16),
            st.lists(observation, max_size=3).map(lambda extra: derived + extra),
        )
    )
    tokens = st.sampled_from(
        [*AUTO_APPLY_PROPOSAL_KINDS, *REFS, *(f"{r}.{k}" for r in REFS for k in ("format", "mode"))]
    )
    steering = Steering(
        partial=True,
        exclude=tuple(draw(st.lists(tokens, max_size=2))),
        min_gain=draw(st.sampled_from([None, 0.0, 1e-6, 1e-3])),
    )
    return {
        "surface": {"version": 1, "actions": actions},
        "traces": traces,
        "audits": audits or None,
        "observations": observations,
        "steering": steering,
    }


def _identity(entry: dict[str, Any]) -> tuple[Any, ...]:
    return (entry["kind"], entry["ref"], entry.get("key"))


@given(corpora())
def test_a_partial_compile_keeps_every_promise_of_the_gate(case: dict[str, Any]) -> None:
    args = (case["traces"], case["surface"], None, case["observations"], case["audits"])
    snapshot = json.dumps(case["surface"])
    reference = compile_entropy_surface(*args)
    steered = steer_entropy_surface(*args, steering=case["steering"])
    assert json.dumps(case["surface"]) == snapshot
    outcome = steered.outcome
    event(f"{reference.status} -> {outcome.status}")
    event("some dropped" if steered.dropped else "none dropped")
    assert outcome.proposals == reference.proposals
    auto = [p for p in outcome.proposals if p["kind"] in AUTO_APPLY_PROPOSAL_KINDS]
    applied = [outcome.proposals[i] for i in steered.applied]
    left_out = [*steered.dropped, *steered.skipped]
    # Every auto proposal is applied, dropped or skipped: exactly one of them.
    assert sorted(map(_identity, applied + left_out)) == sorted(map(_identity, auto))
    selects = case["steering"].exclude or case["steering"].min_gain is not None
    if reference.status == "compiled" and not selects:
        assert outcome.to_json() == reference.to_json()  # partial changes only rejections
    if outcome.status == "converged":
        assert applied == [] and outcome.artifact is None
        return
    if outcome.status == "rejected":
        assert applied == [] and reference.status == "rejected"
        return
    assert outcome.after is not None and outcome.artifact is not None and applied
    assert [(a["kind"], a["ref"]) for a in outcome.artifact["applied"]] == [
        (p["kind"], p["ref"]) for p in applied
    ]
    assert outcome.after.score <= outcome.report.score
    assert outcome.after.totals.succeeded >= outcome.report.totals.succeeded
    effective = apply_compiled_surface(case["surface"], outcome.artifact)
    touched = touched_refs(effective, case["surface"])
    assert (
        replay_successful_calls(effective, case["surface"], case["traces"], touched, case["audits"])
        == []
    )
    # Said plainly: no recorded success and no executed audited call stops validating.
    schemas = {a["ref"]: a["inputSchema"] for a in effective["actions"]}
    declared = {a["ref"]: a["inputSchema"] for a in case["surface"]["actions"]}
    audited = {a["ref"] for a in case["audits"] or ()}
    for trace in case["traces"]:
        for op in trace["operations"]:
            ref = op["ref"]
            if op["outcome"] != "succeeded" or ref in audited:
                continue
            if accepts(declared[ref], op["args"]):  # a call that ran is never refused
                assert op["ref"] in schemas and accepts(schemas[op["ref"]], op["args"])
    for audit in case["audits"] or ():
        if accepts(declared[audit["ref"]], audit["args"]):
            assert accepts(schemas[audit["ref"]], audit["args"])
    # apply, read back, measure: the effective surface's freedom.
    document = {
        "tools": [{"name": a["ref"], "inputSchema": a["inputSchema"]} for a in declared_tools(case)]
    }
    plan = plan_apply(case["surface"], outcome.artifact)
    written = rewrite_surface(document, tool_slots(document, "mcp") or [], plan)
    back = surface_from_parsed(written, source="applied", surface_format="mcp")
    assert surface_freedom_report(back) == surface_freedom_report(effective)


def declared_tools(case: dict[str, Any]) -> list[dict[str, Any]]:
    return list(case["surface"]["actions"])


def _as(surface_format: str, surface: dict[str, Any]) -> Any:
    tools = [(a["ref"], a["inputSchema"]) for a in surface["actions"]]
    if surface_format == "snapshot":
        return surface
    if surface_format == "mcp":
        return {"tools": [{"name": n, "inputSchema": s} for n, s in tools]}
    if surface_format == "openai":
        return [{"type": "function", "function": {"name": n, "parameters": s}} for n, s in tools]
    return {"tools": [{"name": n, "input_schema": s} for n, s in tools]}


@given(es.surface_pairs(), st.data(), st.sampled_from(["snapshot", "mcp", "openai", "anthropic"]))
def test_apply_then_freedom_is_the_effective_surfaces_freedom(
    pair: tuple[dict[str, Any], dict[str, Any]], data: st.DataObject, surface_format: str
) -> None:
    declared, tighter = pair
    if surface_format == "mcp":
        assume(all(type(a["inputSchema"]) is dict for a in declared["actions"]))
    document = _as(surface_format, declared)
    surface = surface_from_parsed(document, source="declared", surface_format=surface_format)
    digests = {a["ref"]: schema_digest(a["inputSchema"]) for a in surface["actions"]}
    quarantined = data.draw(st.lists(st.sampled_from(sorted(digests) or [""]), max_size=2))
    stale = data.draw(st.booleans())
    artifact = {
        "actions": [
            {
                "ref": a["ref"],
                "inputSchema": a["inputSchema"],
                "baseSchemaDigest": "0" * 64 if stale else digests[a["ref"]],
            }
            for a in tighter["actions"]
        ],
        "quarantined": [{"ref": r, "baseSchemaDigest": digests.get(r, "")} for r in quarantined],
    }
    effective = apply_compiled_surface(surface, artifact)
    plan = plan_apply(surface, artifact)
    assert bool(plan.stale) == (stale and bool(tighter["actions"])) or "" in quarantined
    slots = tool_slots(document, surface_format)
    assert slots is not None
    back = surface_from_parsed(
        rewrite_surface(document, slots, plan), source="applied", surface_format=surface_format
    )
    assert surface_freedom_report(back) == surface_freedom_report(effective)
    assert [(a["ref"], a["inputSchema"]) for a in back["actions"]] == [
        (a["ref"], a["inputSchema"]) for a in effective["actions"]
    ]
