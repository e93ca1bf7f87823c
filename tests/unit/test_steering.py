"""The steered compile (compile --partial, --only, --exclude, --min-gain, --explain)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from pytest_entropy.core.artifact import apply_compiled_surface
from pytest_entropy.core.compiler import (
    compile_entropy_surface,
    replay_successful_calls,
    touched_refs,
)
from pytest_entropy.core.steering import Steering, proposal_matches, steer_entropy_surface
from tests.vectors import cases_of, ids

COMPILES = cases_of("compiler", "compileEntropySurface", key="kind")


def _args(case: dict[str, Any]) -> list[Any]:
    given = copy.deepcopy(case["input"])
    return [
        given["traces"],
        given["surface"],
        given.get("repairs"),
        given.get("valueObservations"),
        given.get("auditCalls"),
        given.get("artifact"),
        given.get("catalogDigest"),
    ]


@pytest.mark.parametrize("case", COMPILES, ids=ids(COMPILES))
def test_asking_for_nothing_is_the_reference(case: dict[str, Any]) -> None:
    steered = steer_entropy_surface(*_args(case), steering=Steering())
    assert steered.to_json() == case["expected"]["outcome"]
    assert steered.dropped == [] and steered.skipped == []


@pytest.mark.parametrize("case", COMPILES, ids=ids(COMPILES))
def test_partial_changes_only_what_the_reference_rejects(case: dict[str, Any]) -> None:
    steered = steer_entropy_surface(*_args(case), steering=Steering(partial=True))
    expected = case["expected"]["outcome"]
    out = steered.to_json()
    assert out.pop("dropped") == steered.dropped
    if expected["status"] != "rejected":
        assert out == expected
        assert steered.dropped == []
        return
    assert out["proposals"] == expected["proposals"]  # the reference's list, always
    assert steered.dropped, "a rejected compile drops at least one proposal"
    if steered.outcome.status == "rejected":  # nothing passed: the reference's rejection
        assert out == expected


def _case() -> dict[str, Any]:
    """render.format and notes.kind tighten safely; notes.mode would refuse an audited call
    (the observations never saw "c"); flaky.run's quarantine is vetoed by its audit."""
    surface = {
        "version": 1,
        "actions": [
            {
                "ref": "mcp.render",
                "inputSchema": {
                    "type": "object",
                    "properties": {"format": {"type": "string", "enum": ["pdf", "html", "md"]}},
                },
            },
            {
                "ref": "mcp.notes",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "mode": {"type": "string", "enum": ["a", "b", "c"]},
                        "kind": {"type": "string", "enum": ["x", "y", "z"]},
                    },
                },
            },
            {
                "ref": "mcp.flaky.run",
                "inputSchema": {"type": "object", "properties": {"n": {"type": "string"}}},
            },
        ],
    }
    ops: list[dict[str, Any]] = []
    ops += [{"ref": "mcp.render", "args": {}, "outcome": "succeeded"}] * 9
    ops += [{"ref": "mcp.notes", "args": {}, "outcome": "succeeded"}] * 9
    for stage in ("validate", "validate", "invoke", "invoke"):
        ops.append({"ref": "mcp.flaky.run", "args": {}, "outcome": "failed", "failureStage": stage})
    ops.append({"ref": "mcp.flaky.run", "args": {}, "outcome": "succeeded"})
    observations = [
        {"ref": "mcp.render", "key": "format", "value": "pdf", "count": 6},
        {"ref": "mcp.render", "key": "format", "value": "html", "count": 3},
        {"ref": "mcp.notes", "key": "mode", "value": "a", "count": 6},
        {"ref": "mcp.notes", "key": "mode", "value": "b", "count": 3},
        {"ref": "mcp.notes", "key": "kind", "value": "x", "count": 6},
        {"ref": "mcp.notes", "key": "kind", "value": "y", "count": 3},
    ]
    audits = [
        {"ref": "mcp.notes", "args": {"mode": "c", "kind": "x"}},
        {"ref": "mcp.notes", "args": {"mode": "a", "kind": "y"}},
        {"ref": "mcp.flaky.run", "args": {"n": "1"}},
    ]
    return {
        "traces": [{"operations": ops, "taskKey": "t"}],
        "surface": surface,
        "observations": observations,
        "audits": audits,
    }


def _steer(case: dict[str, Any], **steering: Any) -> Any:
    return steer_entropy_surface(
        case["traces"],
        case["surface"],
        None,
        case["observations"],
        case["audits"],
        steering=Steering(**steering),
    )


def test_partial_drops_exactly_the_vetoed_proposals() -> None:
    case = _case()
    reference = compile_entropy_surface(
        case["traces"], case["surface"], None, case["observations"], case["audits"]
    )
    assert reference.status == "rejected"
    steered = _steer(case, partial=True)
    assert steered.outcome.status == "compiled"
    assert steered.outcome.proposals == reference.proposals
    assert [(d["kind"], d["ref"], d.get("key")) for d in steered.dropped] == [
        ("enum-tighten", "mcp.notes", "mode"),
        ("noise-quarantine", "mcp.flaky.run", None),
    ]
    assert steered.dropped[1]["reason"] == "mcp.flaky.run: absent from the candidate surface"
    artifact = steered.outcome.artifact
    assert [(a["kind"], a["ref"], a["detail"]) for a in artifact["applied"]] == [
        ("enum-tighten", "mcp.notes", "kind: 2 observed values"),
        ("enum-tighten", "mcp.render", "format: 2 observed values"),
    ]
    assert artifact["quarantined"] == []
    # The reference's promises hold for what was applied.
    effective = apply_compiled_surface(case["surface"], artifact)
    touched = touched_refs(effective, case["surface"])
    assert touched == {"mcp.notes", "mcp.render"}
    assert (
        replay_successful_calls(effective, case["surface"], case["traces"], touched, case["audits"])
        == []
    )
    assert steered.outcome.after.score <= steered.outcome.report.score
    # The same compile without --partial is the reference's, to the byte.
    assert _steer(case).to_json() == reference.to_json()


def test_selection_skips_and_reports() -> None:
    case = _case()
    only = _steer(case, only=("mcp.render",))
    assert only.outcome.status == "compiled"
    assert [s["reason"] for s in only.skipped] == ["not named by --only"] * 3
    assert [a["ref"] for a in only.outcome.artifact["applied"]] == ["mcp.render"]
    excluded = _steer(case, exclude=("noise-quarantine", "mcp.notes.mode"), partial=True)
    assert [(s["ref"], s.get("key")) for s in excluded.skipped] == [
        ("mcp.notes", "mode"),
        ("mcp.flaky.run", None),
    ]
    assert excluded.skipped[0]["reason"] == "excluded by --exclude mcp.notes.mode"
    assert excluded.dropped == [] and excluded.outcome.status == "compiled"
    everything = _steer(case, min_gain=1.0)
    assert everything.outcome.status == "converged"
    assert everything.outcome.artifact is None
    assert all(s["gain"] < 1.0 and "below --min-gain 1" in s["reason"] for s in everything.skipped)
    assert {"skipped"} <= set(everything.to_json()) and "dropped" not in everything.to_json()


def test_min_gain_is_each_proposals_own_gain() -> None:
    case = _case()
    measured = _steer(case, min_gain=0.0).gains
    assert len(measured) == 4
    for index, gain in measured.items():
        proposal = _steer(case).outcome.proposals[index]
        alone = _steer(case, only=(f"{proposal['ref']}.{proposal['key']}",) if "key" in proposal
                       else (proposal["ref"],))  # fmt: skip
        if alone.outcome.after is not None:
            assert gain == pytest.approx(alone.outcome.report.score - alone.outcome.after.score)


def test_explain_adds_only_an_explanations_key() -> None:
    case = _case()
    plain = _steer(case, partial=True).to_json()
    explained = _steer(case, partial=True, explain=True).to_json()
    rows = explained.pop("explanations")
    assert explained == plain
    assert [row["kind"] for row in rows] == [p["kind"] for p in plain["proposals"]]
    mode = next(row for row in rows if row.get("key") == "mode")
    assert mode["removes"] == ["c"] and mode["keeps"] == ["a", "b"]
    assert mode["status"].startswith("dropped: mcp.notes: recorded arguments")
    assert {t["name"] for t in mode["thresholds"]} == {
        "observations",
        "distinct observed values",
        "top share",
    }
    assert next(row for row in rows if row.get("key") == "kind")["status"] == "applied"
    json.dumps(rows)  # plain JSON


def test_tokens_name_kinds_refs_and_parameters() -> None:
    proposal = {"kind": "enum-tighten", "ref": "a.b", "key": "c"}
    assert proposal_matches("enum-tighten", proposal)
    assert proposal_matches("a.b", proposal)
    assert proposal_matches("a.b.c", proposal)
    assert not proposal_matches("a", proposal)
    assert not proposal_matches("a.b.d", proposal)
