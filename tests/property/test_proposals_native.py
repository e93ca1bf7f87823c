"""The proposals' evidence (``ProposalEvidence``) on generated traces: execution sets stop at
the fuse threshold in one pass and in merged halves, and end to end a corpus read gives the
same evidence and proposals, and ``propose`` the same bytes, on the Rust core and on the
plain path. (The C kernel these were first written for is gone, with the comparisons of its
hand-backs; the Rust core's evidence is compared piece by piece in
``test_native_tallies.py``.)"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_entropy.cli import main
from pytest_entropy.core import proposals as proposals_module
from pytest_entropy.core.proposals import ProposalEvidence
from pytest_entropy.core.records import Operation, Trace
from pytest_entropy.run.compile import propose_sources
from pytest_entropy.run.corpus import CorpusPlan, read_corpus, source_files
from pytest_entropy.testing import strategies as es

from ..native_support import paths

PATHS = ("native", "plain")
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEWER = settings(SETTINGS, max_examples=50)  # the examples with many long traces

# Few refs, so windows repeat, fuse and hold repeated refs; fabric./pi. refs break them;
# non-ASCII and astral refs and one that differs from another only past a shared prefix.
REFS = [
    "a.one",
    "a.two",
    "a.three",
    "b.x",
    "b.xy",
    "pi.read",
    "fabric.discovery.search",
    "fabricate.run",
    "pix.tool",
    "\U0001f600.tool",
    "é.tool",
    "",
]
OUTCOMES = ["succeeded", "succeeded", "succeeded", "failed", "succeeded ", "Succeeded"]
ARG_KEYS = st.sampled_from(["path", "limit", "q", "é", "\U0001f600", "", "10"])
ARG_VALUES = st.one_of(
    st.sampled_from(["html", "pdf", 1, 1.0, True, None, 2**70, -0.0]),
    st.text(max_size=3),
    st.lists(st.integers(0, 3), max_size=2),
)
OPERATION_ARGS = st.dictionaries(ARG_KEYS, ARG_VALUES, max_size=3)


@st.composite
def operations(draw: st.DrawFn) -> tuple[str, dict[str, Any], str]:
    return (draw(st.sampled_from(REFS)), draw(OPERATION_ARGS), draw(st.sampled_from(OUTCOMES)))


def _as(form: str, ops: list[tuple[str, dict[str, Any], str]]) -> Any:
    """One generated trace in one of the forms the evidence hears."""
    if form == "trace":
        return Trace(tuple(Operation(ref, args, outcome) for ref, args, outcome in ops))
    if form == "mapping":
        return {"operations": [{"ref": r, "args": a, "outcome": o} for r, a, o in ops]}
    if form == "signed":  # the scanner's (ref, args, outcome, stage, signature), in a list
        return [(r, a, o, None if o == "succeeded" else "invoke", "{}") for r, a, o in ops]
    return tuple(Operation(r, a, o, "guard") for r, a, o in ops)  # a tuple of records


def state(evidence: ProposalEvidence) -> Any:
    """Every slot of the evidence, orders included."""
    return (
        evidence.trace_values,
        evidence.origin,
        evidence._executions,
        [
            (pair, tally.ref, tally.key, list(tally.counts.items()), tally.total, tally.overflowed)
            for pair, tally in evidence.tallies.items()
        ],
        [(ref, list(per_ref.items())) for ref, per_ref in evidence.clusters.items()],
        [
            (identity, window, occurrences, sorted(executions, key=repr), type(window))
            for identity, (window, occurrences, executions) in evidence.sequences.items()
        ],
    )


@FEWER
@given(
    traces=st.lists(st.lists(operations(), min_size=3, max_size=8), min_size=3, max_size=12),
    split=st.integers(0, 12),
)
def test_execution_sets_stop_at_the_fuse_threshold(traces: list[Any], split: int) -> None:
    """Windows met in many executions, heard in one pass or as two merged halves: an
    execution set never holds more than FUSE_MIN_EXECUTIONS, and the proposals are made."""
    report = {"refs": [{"ref": ref, "shapeEntropyBits": 1} for ref in REFS]}
    whole = ProposalEvidence(origin="f")
    first, then = ProposalEvidence(origin=0), ProposalEvidence(origin=1)
    for index, ops in enumerate(traces):
        whole.add_operations(_as("signed", ops))
        (first if index < split else then).add_trace(_as("trace", ops))
    first.merge(then)
    for evidence in (whole, first):
        for entry in state(evidence)[5]:
            assert len(entry[3]) <= proposals_module.FUSE_MIN_EXECUTIONS
    proposals_module._fuse_proposals(whole)
    proposals_module._split_proposals(report["refs"], whole)


# ------------------------------------------------------------------ end to end

SURFACE = {
    "version": 1,
    "actions": [
        {
            "ref": ref,
            "inputSchema": {
                "type": "object",
                "properties": {
                    "q": {"type": "string", "enum": ["html", "pdf", "png"]},
                    "path": {"type": "string", "x-fabric-enum-candidate": True},
                },
            },
        }
        for ref in ("a.one", "a.two", "a.three", "b.x", "\U0001f600.tool")
    ],
}
FILE_OPS = st.tuples(
    st.sampled_from([*REFS[:6], "\U0001f600.tool", "fabric.workflow.phase"]),
    st.dictionaries(
        st.sampled_from(["q", "path", "limit"]),
        st.sampled_from(["html", "pdf", "a", 1]),
        max_size=3,
    ),
    st.sampled_from(["succeeded", "succeeded", "failed"]),
)


def _session_file(path: Path, traces: list[list[Any]], audits: bool) -> None:
    lines = []
    for ops in traces:
        operations = [
            {"type": "call", "sequence": n, "ref": ref, "args": args, "outcome": outcome}
            for n, (ref, args, outcome) in enumerate(ops)
        ]
        trace = {
            "kind": "pi-fabric.execution",
            "version": 1,
            "outcome": "succeeded",
            "phases": ["build"],
            "operations": operations,
            "counts": {
                "droppedValues": 0,
                "truncatedValues": 0,
                "redactedValues": 0,
                "droppedOperations": 0,
            },
        }
        details: dict[str, Any] = {"trace": trace}
        if audits:
            details["audits"] = [{"ref": r, "args": a} for r, a, _ in ops]
        record = {"type": "message", "message": {"role": "toolResult", "details": details}}
        lines.append(es.session_line(record))
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


session_corpora = st.lists(
    st.tuples(st.lists(st.lists(FILE_OPS, max_size=7), max_size=10), st.booleans()),
    min_size=1,
    max_size=4,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(files=session_corpora, audit_values=st.booleans())
def test_a_corpus_read_gives_the_same_evidence_and_proposals(
    tmp_path_factory: Any, files: list[Any], audit_values: bool
) -> None:
    directory = tmp_path_factory.mktemp("corpus")
    for index, (traces, audits) in enumerate(files):
        _session_file(directory / f"{index:02d}.jsonl", traces, audits)
    sources = source_files(sorted(directory.iterdir()))
    seen = []
    for kind in PATHS:
        with paths(kind):
            plan = CorpusPlan(trace_values=not audit_values, observation_values=audit_values)
            read = read_corpus(sources, plan)
            run = propose_sources(sources, SURFACE, audit_values=audit_values)
            # Not the execution counter: a corpus's evidence numbers only the files it replays
            # itself, so it differs between paths by design.
            seen.append((state(read.evidence)[3:], json.dumps(run.proposals)))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("flags", [[], ["--json"], ["--no-audit-values", "--json"], ["--explain"]])
def test_propose_prints_the_same_bytes_on_both_paths(tmp_path: Path, flags: list[str]) -> None:
    refs = ["a.one", "a.two", "a.three", "b.x", "pi.read", "\U0001f600.tool"]
    for index in range(4):
        traces = [
            [
                (refs[(n + k + index) % len(refs)], {"q": ["html", "pdf"][k % 2]}, "succeeded")
                for k in range(5 + n % 3)
            ]
            + [("a.one", {"path": "p"}, "failed" if n % 4 else "succeeded")]
            for n in range(12)
        ]
        _session_file(tmp_path / f"{index}.jsonl", traces, audits=index % 2 == 0)
    surface = tmp_path / "surface.json"
    surface.write_text(json.dumps(SURFACE), encoding="utf-8")
    argv = ["propose", "--sessions", str(tmp_path), "--surface", str(surface), *flags]
    outputs = []
    for kind in PATHS:
        with paths(kind):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = main(argv)
            outputs.append((code, out.getvalue()))
    assert outputs[0] == outputs[1]
    assert outputs[0][0] == 0 and "sequence-fuse" in outputs[0][1]
