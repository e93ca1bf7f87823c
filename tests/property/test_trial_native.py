"""The trial on hostile records and end to end: records outside the JSON domain fail as
Python fails on them (the same errors, the same counts), and the trial command prints the
same bytes on the Rust core, on the plain path and with two processes. (The C trial kernel
these were first written for is gone, with the comparisons of its hand-backs; a trial with
checks is compared with the plain ``accepts`` in ``test_schema_check_properties.py``, and
the Rust core's trial counts in ``test_native_tallies.py``.)"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from pytest_entropy.cli.app import main
from pytest_entropy.core.records import AuditCall, Operation, Trace
from pytest_entropy.core.trial import TrialCounts, TrialTally
from pytest_entropy.core.validation import CallChecks
from pytest_entropy.testing import strategies as entropy_st

from ..distributed_support import SURFACE, write_corpus
from ..native_support import paths
from .test_schema_check_properties import SCHEMAS, VALUES

PATHS = ("native", "plain")
REFS = ["a", "b", "c", "é", "\U0001f600x", "fabric.a", "fabric.", "undeclared"]
KEYS = st.sampled_from(["a", "b", "id", "", "é", "\U0001f600"])
HOSTILE_VALUES = st.one_of(
    VALUES,
    st.sampled_from([2**70, -(2**64), math.inf, math.nan, -0.0, 1e308, "null", "a\u0000b"]),
    st.recursive(st.integers(0, 2), lambda inner: st.lists(inner, max_size=1), max_leaves=30),
)
ARGS = st.one_of(
    st.dictionaries(KEYS, VALUES, max_size=4).map(lambda value: json.loads(json.dumps(value))),
    st.dictionaries(KEYS, HOSTILE_VALUES, max_size=3),
    st.just({}),
)
OUTCOMES = st.sampled_from(["succeeded", "failed", "denied", "succeeded "])
CALLS = st.lists(st.tuples(st.sampled_from(REFS), ARGS, OUTCOMES), max_size=12)


@st.composite
def trial_surfaces(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(live, effective)``: per declared ref, the compiled schema is the same object, an
    equal copy, another schema, or missing (quarantined); schemas come from the compiled
    subset's generator (with patterns RE2 cannot run) and the meter's."""
    schema = st.one_of(SCHEMAS, entropy_st.schemas(), st.sampled_from([None, "x", {"$ref": "#"}]))
    live_actions, effective_actions = [], []
    for ref in draw(st.lists(st.sampled_from(REFS[:6]), unique=True, max_size=6)):
        declared = draw(schema)
        live_actions.append({"ref": ref, "inputSchema": declared})
        choice = draw(st.sampled_from(["same", "copy", "other", "quarantined"]))
        if choice == "quarantined":
            continue
        compiled = {
            "same": declared,
            "copy": json.loads(json.dumps(declared)),
            "other": draw(schema),
        }[choice]
        effective_actions.append({"ref": ref, "inputSchema": compiled})
    return {"version": 1, "actions": live_actions}, {"version": 1, "actions": effective_actions}


def _ordered(counts: TrialCounts) -> tuple[list[Any], list[Any]]:
    return (
        [(ref, list(classes.items())) for ref, classes in counts.trace_classes.items()],
        [(ref, list(classes.items())) for ref, classes in counts.audit_classes.items()],
    )


def _hostile_run(records: list[Any]) -> tuple[Any, ...]:
    live = {"actions": [{"ref": "a", "inputSchema": {"type": "object"}}]}
    tally = TrialTally(live, live, CallChecks(decoded=True))
    on_trace, on_audit, on_signed = tally.hooks()
    outcomes = []
    for record in records:
        try:
            if isinstance(record, list) and on_signed is not None:
                on_signed(record, "t", None)
            elif isinstance(record, list):
                on_trace(Trace(tuple(record)))
            elif isinstance(record, tuple):
                on_audit(record[0])
            else:
                on_trace(record)
        except Exception as error:  # the error Python raises
            outcomes.append(type(error).__name__)
        else:
            outcomes.append("ok")
    return outcomes, _ordered(tally.counts)


class Ref(str):
    """A str subclass: startswith and dict lookups as for its text."""


HOSTILE_RECORDS = [
    [("a", {}, "succeeded", None, "()"), ("a",)],  # too short: IndexError after one count
    [(1, {}, "succeeded")],  # not a str: no startswith
    [(Ref("a"), {}, "failed"), (Ref("fabric.x"), {}, "failed")],
    [("a", {"n": 2**80}, "succeeded"), ("a", {"x": math.nan}, 1)],
    [["a", {}, "succeeded"]],  # a list operation, indexed as Python indexes it
    {"operations": [{"ref": "a", "args": {}, "outcome": "failed"}]},
    {"operations": [{"ref": "a"}]},  # KeyError
    {"no operations": []},
    Trace((Operation("a", {}, "succeeded"),) * 3),
    ({"ref": "a", "args": {"k": [[[]]]}},),
    ({"ref": "a"},),  # KeyError
    (AuditCall(Ref("a"), {}),),
    ({"ref": ["unhashable"], "args": {}},),  # TypeError from the membership test
]


def test_records_outside_the_domain_fail_as_python_does() -> None:
    outcomes, _ = _hostile_run(HOSTILE_RECORDS)
    assert "IndexError" in outcomes and "KeyError" in outcomes


# ------------------------------------------------------------------ end to end


def _trial_bytes(kind: str, capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    with paths(kind):
        status = main(argv)
    return status, capsys.readouterr().out


def test_the_trial_command_prints_the_same_bytes_on_every_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_corpus(tmp_path / "train", 0)
    write_corpus(tmp_path / "held-out", 1)
    surface = tmp_path / "surface.json"
    surface.write_text(json.dumps(SURFACE))
    artifact = tmp_path / "artifact.json"
    compiled = main(
        [
            "compile",
            *("--sessions", str(tmp_path / "train"), "--surface", str(surface)),
            *("--out", str(artifact)),
        ]
    )
    capsys.readouterr()
    assert compiled == 0 and artifact.is_file()
    argv = [
        "trial",
        *("--sessions", str(tmp_path / "held-out"), "--surface", str(surface)),
        *("--artifact", str(artifact), "--json"),
    ]
    results = {kind: _trial_bytes(kind, capsys, argv) for kind in PATHS}
    results["native --jobs 2"] = _trial_bytes("native", capsys, [*argv, "--jobs", "2"])
    assert len(set(results.values())) == 1, results
    report = json.loads(results["native"][1])
    assert report["totals"]["operations"] > 0


def test_a_real_corpus_trial_is_the_same_on_every_path(
    shared_corpora: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The artifact the compile would write if its replay found nothing (the corpus's
    # auto-applied proposals), as the benchmark builds it: the trial has divergences.
    from pytest_entropy.core.artifact import serialize_artifact
    from pytest_entropy.core.compiler import DigestCounts, _new_artifact
    from pytest_entropy.core.gate import apply_proposals_to_surface
    from pytest_entropy.core.proposals import AUTO_APPLY_PROPOSAL_KINDS
    from pytest_entropy.core.status import surface_hash
    from pytest_entropy.ingest.surfaces import load_surface
    from pytest_entropy.run.corpus import CorpusPlan, read_corpus, source_files

    tools = shared_corpora / "tau-bench-historical/tools_at_7362a17.json"
    sessions = shared_corpora / "tau-bench-historical/gpt-4o-airline.json"
    surface = load_surface(tools)
    read = read_corpus(source_files([str(sessions)]), CorpusPlan(observation_values=True))
    report = read.state.finalize(surface, None, surface_hash(surface))
    proposals = read.evidence.proposals(report, surface)
    auto = [p for p in proposals if p["kind"] in AUTO_APPLY_PROPOSAL_KINDS]
    candidate = apply_proposals_to_surface(surface, auto)
    after = read.state.finalize(candidate, None, surface_hash(candidate))
    counts = DigestCounts(read.state.traces, 0, "test", "test")
    artifact = _new_artifact(surface, surface, candidate, auto, None, report, after, counts)
    surface_path = tmp_path / "surface.json"
    surface_path.write_text(json.dumps(surface))
    artifact_path = tmp_path / "artifact.json"
    artifact_path.write_text(serialize_artifact(artifact))
    argv = [
        "trial",
        *("--sessions", str(sessions), "--surface", str(surface_path)),
        *("--artifact", str(artifact_path), "--json"),
    ]
    results = {kind: _trial_bytes(kind, capsys, argv) for kind in PATHS}
    assert len(set(results.values())) == 1, results
    assert json.loads(results["native"][1])["totals"]["operations"] > 1000
