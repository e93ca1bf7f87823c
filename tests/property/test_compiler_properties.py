"""Compiler promises on generated corpora: monotone, preserving, convergent, pure."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_entropy.core.artifact import apply_compiled_surface, parse_compiled_surface_artifact
from pytest_entropy.core.canonical import file_text
from pytest_entropy.core.compiler import compile_entropy_surface
from pytest_entropy.core.gate import apply_proposals_to_surface
from pytest_entropy.core.pool import (
    merge_observation_window,
    parse_observation_pool,
    pool_to_value_observations,
)
from pytest_entropy.core.proposals import AUTO_APPLY_PROPOSAL_KINDS
from pytest_entropy.core.validation import accepts

VALUES = ["pdf", "html", "docx", "md", "web"]
REFS = ["mcp.report.render", "mcp.flaky.run", "mcp.notes.search"]


@st.composite
def compile_inputs(draw: st.DrawFn) -> dict[str, Any]:
    actions = []
    for ref in REFS:
        enum = draw(st.lists(st.sampled_from(VALUES), min_size=2, max_size=5, unique=True))
        actions.append(
            {
                "ref": ref,
                "inputSchema": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["format"],
                    "properties": {"format": {"type": "string", "enum": enum}},
                },
            }
        )
    traces = []
    audits = []
    for _ in range(draw(st.integers(1, 6))):
        ops = []
        for _ in range(draw(st.integers(1, 8))):
            ref = draw(st.sampled_from(REFS))
            value = draw(st.sampled_from(VALUES[:3]))
            outcome = draw(st.sampled_from(["succeeded", "succeeded", "succeeded", "failed"]))
            op: dict[str, Any] = {"ref": ref, "args": {"format": value}, "outcome": outcome}
            if outcome == "failed":
                op["failureStage"] = draw(st.sampled_from(["validate", "invoke", "prepare"]))
            ops.append(op)
            if draw(st.booleans()):
                audits.append({"ref": ref, "args": {"format": value}})
        traces.append({"operations": ops, "taskKey": "t"})
    use_audits = draw(st.booleans())
    observations = (
        [{"ref": a["ref"], "key": "format", "value": a["args"]["format"]} for a in audits]
        if use_audits
        else None
    )
    return {
        "surface": {"version": 1, "actions": actions},
        "traces": traces,
        "audits": audits if use_audits else None,
        "observations": observations,
    }


@given(compile_inputs())
def test_compile_never_raises_the_score_or_breaks_a_recorded_success(case: dict[str, Any]) -> None:
    snapshot = json.dumps(case)
    outcome = compile_entropy_surface(
        case["traces"], case["surface"], None, case["observations"], case["audits"]
    )
    assert json.dumps(case) == snapshot
    if outcome.status != "compiled":
        return
    assert outcome.after is not None
    assert outcome.artifact is not None
    assert outcome.after.score <= outcome.report.score
    assert outcome.after.totals.succeeded >= outcome.report.totals.succeeded
    effective = apply_compiled_surface(case["surface"], outcome.artifact)
    schemas = {a["ref"]: a["inputSchema"] for a in effective["actions"]}
    declared = {a["ref"]: a["inputSchema"] for a in case["surface"]["actions"]}
    audited = {a["ref"] for a in case["audits"] or ()}
    for trace in case["traces"]:
        for op in trace["operations"]:
            ref = op["ref"]
            if op["outcome"] != "succeeded" or ref in audited:
                continue
            if accepts(declared[ref], op["args"]):
                # A success the declared schema accepted is never lost (absent or rejected).
                assert ref in schemas
                assert accepts(schemas[ref], op["args"])
    for audit in case["audits"] or ():
        if accepts(declared[audit["ref"]], audit["args"]):
            assert accepts(schemas[audit["ref"]], audit["args"])
    # The artifact survives its own file format unchanged.
    assert (
        parse_compiled_surface_artifact(json.loads(file_text(outcome.artifact))) == outcome.artifact
    )


@given(compile_inputs())
def test_a_second_compile_with_the_artifact_converges(case: dict[str, Any]) -> None:
    first = compile_entropy_surface(
        case["traces"], case["surface"], None, case["observations"], case["audits"]
    )
    if first.status != "compiled":
        return
    second = compile_entropy_surface(
        case["traces"], case["surface"], None, case["observations"], case["audits"], first.artifact
    )
    assert second.status == "converged"
    assert second.artifact is first.artifact
    assert not [p for p in second.proposals if p["kind"] in AUTO_APPLY_PROPOSAL_KINDS]


@given(compile_inputs(), st.data())
def test_surface_rewrite_is_pure(case: dict[str, Any], data: st.DataObject) -> None:
    surface = case["surface"]
    before = json.dumps(surface)
    ref = data.draw(st.sampled_from(REFS))
    values = data.draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=3))
    proposals = [
        {"kind": "enum-tighten", "ref": ref, "key": "format", "values": values},
        {"kind": "noise-quarantine", "ref": data.draw(st.sampled_from(REFS))},
    ]
    result = apply_proposals_to_surface(surface, proposals)
    assert json.dumps(surface) == before
    assert [a["ref"] for a in result["actions"]] == sorted(a["ref"] for a in result["actions"])


observation = st.builds(
    lambda ref, value, count: {
        "ref": ref,
        "key": "level",
        "value": value,
        **({"count": count} if count else {}),
    },
    st.sampled_from(["mcp.flags.set", "mcp.other"]),
    st.one_of(st.sampled_from(["info", "warn", "error"]), st.integers(0, 3), st.booleans()),
    st.one_of(st.none(), st.integers(1, 5)),
)
windows = st.lists(
    st.builds(
        lambda name, obs: {"file": name, "observations": obs},
        st.sampled_from(["a.jsonl", "b.jsonl", "c.jsonl"]),
        st.lists(observation, max_size=6),
    ),
    max_size=5,
    unique_by=lambda window: window["file"],  # a window holds each session file once
)


@given(windows)
def test_pool_merge_is_idempotent_deterministic_and_reloadable(batch: list[dict[str, Any]]) -> None:
    once = merge_observation_window(None, batch)
    again = merge_observation_window(once.file, batch)
    assert again.merged_sessions == 0
    assert file_text(again.file) == file_text(once.file)
    assert file_text(merge_observation_window(None, batch).file) == file_text(once.file)
    assert parse_observation_pool(json.loads(file_text(once.file))) == once.file


@given(st.lists(observation, max_size=8), st.lists(observation, max_size=8))
def test_a_growing_file_contributes_only_its_delta(first: list[Any], extra: list[Any]) -> None:
    grown = merge_observation_window(
        merge_observation_window(None, [{"file": "a", "observations": first}]).file,
        [{"file": "a", "observations": first + extra}],
    )
    direct = merge_observation_window(None, [{"file": "a", "observations": first + extra}])
    totals = lambda pool: sorted(  # noqa: E731
        (o.ref, o.key, repr(o.value), o.count) for o in pool_to_value_observations(pool)
    )
    assert totals(grown.file) == totals(direct.file)
