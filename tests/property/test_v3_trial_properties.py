"""Metric v3 trial and merge properties: pieces merge like one pass, merging is a fixed point."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_entropy.core.v3.artifact import empty_compiled_surface, merge_compiled_surfaces
from pytest_entropy.core.v3.compiler import compile_entropy_surface_v3
from pytest_entropy.core.v3.normal_form import derive_normal_form_plan
from pytest_entropy.core.v3.trial import (
    V3TrialCounts,
    V3TrialTally,
    proven_plans,
    trial_from_counts,
)
from tests.v3_artifact_support import CANONICAL, LIVE, REF, SCHEMA, SPILLED

ARGS = [
    CANONICAL,
    SPILLED,
    {},
    {**CANONICAL, "limit": "02"},
    {"outputFormat": "PDF", "limit": 1},
    {**SPILLED, "unknown": True},
]
REFS = [REF, "other.tool", "fabric.discovery.search"]
CALLS = st.tuples(st.booleans(), st.sampled_from(REFS), st.sampled_from(range(len(ARGS))))
PLANS = proven_plans(LIVE, compile_entropy_surface_v3([], LIVE).artifact)


def _tally(calls: list[tuple[bool, str, int]]) -> V3TrialTally:
    tally = V3TrialTally(LIVE, PLANS)
    for audit, ref, index in calls:
        args = dict(ARGS[index])
        if audit:
            tally.add_audit({"ref": ref, "args": args})
        else:
            tally.add_trace({"operations": [{"ref": ref, "args": args, "outcome": "failed"}]})
    return tally


@given(st.lists(CALLS, max_size=24), st.lists(st.integers(0, 24), max_size=4))
def test_trial_counts_of_pieces_merge_to_the_one_pass_counts(
    calls: list[tuple[bool, str, int]], cuts: list[int]
) -> None:
    bounds = sorted({0, len(calls), *(min(cut, len(calls)) for cut in cuts)})
    merged = V3TrialCounts()
    for start, end in pairwise(bounds):
        merged.merge(_tally(calls[start:end]).counts)
    whole = _tally(calls).counts
    assert merged.per_ref() == whole.per_ref()
    assert trial_from_counts(0, merged).to_json() == trial_from_counts(0, whole).to_json()


SCHEMAS = [SCHEMA, {**SCHEMA, "required": ["limit"]}]


@given(
    st.lists(st.tuples(st.sampled_from(["a.x", "b.x", "c.x"]), st.sampled_from([0, 1])), max_size=6)
)
def test_merging_a_merge_again_is_a_fixed_point(picks: list[tuple[str, int]]) -> None:
    live = {"version": 1, "actions": [{"ref": r, "inputSchema": SCHEMA} for r in ("a.x", "b.x")]}
    plans = [derive_normal_form_plan(ref, SCHEMAS[which]) for ref, which in picks]
    incoming = {**empty_compiled_surface(), "normalizations": [p for p in plans if p is not None]}
    first = merge_compiled_surfaces(None, incoming, live)
    again = merge_compiled_surfaces(first["file"], incoming, live)
    assert again["file"] == first["file"]
    assert first["droppedNormalizations"] == sum(
        1 for ref, which in picks if ref == "c.x" or which == 1
    )
    refs: Any = [plan["ref"] for plan in first["file"]["normalizations"]]
    assert refs == sorted(set(refs))
