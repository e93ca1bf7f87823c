"""The proposals' native kernel (``core._proposals_native``) fills the trace evidence exactly
as its Python twin and the plain path do: every slot of ``ProposalEvidence`` (the
argument-key clusters and their order, the key tuples as spelled, the sequence windows with
their identities, occurrences and execution sets, the tallies, the execution counter)
compared on generated traces, the hand-back of anything outside the kernel's exact domain,
and propose's output bytes end to end on generated session files."""

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

from ..native_support import native_kernel, paths

PATHS = ("native", "python", "plain")
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


# A trace: short ones mostly, some long (a long segment slides every window width), a few
# longer than the kernel's stack scratch (32 operations).
op_lists = st.one_of(
    st.lists(operations(), max_size=7),
    st.lists(operations(), min_size=10, max_size=20),
    st.lists(
        st.sampled_from([("a.one", {}, "succeeded"), ("a.two", {"q": 1}, "succeeded")])
    ).flatmap(lambda head: st.lists(operations(), min_size=33, max_size=45).map(head.__add__)),
)
ORIGINS = st.one_of(
    st.integers(0, 3), st.just(2**80), st.text(max_size=2), st.tuples(st.integers(0, 2))
)


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


def _feed(evidence: ProposalEvidence, batches: list[tuple[Any, list[tuple[str, Any]]]]) -> None:
    for origin, traces in batches:
        # As a corpus replays one file's deferred traces: its own origin, numbered from 0.
        evidence.origin = origin
        evidence._executions = 0
        for form, ops in traces:
            if form in ("signed", "records"):
                evidence.add_operations(_as(form, ops))
            else:
                evidence.add_trace(_as(form, ops))


def test_the_kernel_shares_the_python_constants() -> None:
    k = native_kernel("core._proposals_native")
    assert k.FUSE_MIN_SEQUENCE_LENGTH == proposals_module.FUSE_MIN_SEQUENCE_LENGTH
    assert k.FUSE_MAX_SEQUENCE_LENGTH == proposals_module.FUSE_MAX_SEQUENCE_LENGTH
    assert k.FUSE_MIN_EXECUTIONS == proposals_module.FUSE_MIN_EXECUTIONS
    assert k.SEQUENCE_JOIN == proposals_module._SEQUENCE_JOIN


@FEWER
@given(
    batches=st.lists(
        st.tuples(
            ORIGINS,
            st.lists(
                st.tuples(st.sampled_from(["trace", "mapping", "signed", "records"]), op_lists),
                max_size=6,
            ),
        ),
        min_size=1,
        max_size=3,
    ),
    trace_values=st.booleans(),
)
def test_the_evidence_is_the_same_on_every_path(
    batches: list[tuple[Any, list[tuple[str, Any]]]], trace_values: bool
) -> None:
    native_kernel("core._proposals_native")
    seen = []
    for kind in PATHS:
        with paths(kind):
            evidence = ProposalEvidence(trace_values=trace_values, origin=0)
            _feed(evidence, batches)
            # A merge reads what the kernel wrote (the lists and sets it made).
            merged = ProposalEvidence(trace_values=trace_values).merge(evidence)
            seen.append((state(evidence), state(merged)))
    assert seen[0] == seen[1] == seen[2]


@FEWER
@given(
    traces=st.lists(st.lists(operations(), min_size=3, max_size=8), min_size=3, max_size=12),
    split=st.integers(0, 12),
)
def test_many_executions_and_merges_agree(traces: list[Any], split: int) -> None:
    """Windows met in many executions: the execution sets stop at FUSE_MIN_EXECUTIONS,
    a merge of two halves equals one pass, and the proposals agree."""
    native_kernel("core._proposals_native")
    seen = []
    report = {"refs": [{"ref": ref, "shapeEntropyBits": 1} for ref in REFS]}
    for kind in PATHS:
        with paths(kind):
            whole = ProposalEvidence(origin="f")
            first, then = ProposalEvidence(origin=0), ProposalEvidence(origin=1)
            for index, ops in enumerate(traces):
                whole.add_operations(_as("signed", ops))
                (first if index < split else then).add_trace(_as("trace", ops))
            first.merge(then)
            seen.append(
                (
                    state(whole),
                    state(first),
                    proposals_module._fuse_proposals(whole),
                    proposals_module._split_proposals(report["refs"], whole),
                )
            )
    assert seen[0] == seen[1] == seen[2]
    for entry in seen[0][0][5]:
        assert len(entry[3]) <= proposals_module.FUSE_MIN_EXECUTIONS


class _Str(str):
    pass


class _Dict(dict):  # type: ignore[type-arg]
    pass


# Operations outside the kernel's exact domain: the kernel hands the trace back untouched
# and the Python loop does what it always did (including raising).
HOSTILE_OPS = st.one_of(
    st.tuples(st.just(_Str("a.one")), OPERATION_ARGS, st.just("succeeded")),
    st.tuples(st.sampled_from(REFS), OPERATION_ARGS.map(_Dict), st.just("succeeded")),
    st.tuples(st.sampled_from(REFS), st.just({1: "x", "q": 2}), st.just("succeeded")),
    st.tuples(st.sampled_from(REFS), OPERATION_ARGS, st.sampled_from([None, 1, b"succeeded"])),
    st.tuples(st.sampled_from(REFS), OPERATION_ARGS, st.just(_Str("succeeded"))),
    st.lists(st.sampled_from(["a.one", "succeeded"]), min_size=3, max_size=3).map(
        lambda items: [items[0], {}, items[1]]
    ),
    st.tuples(st.sampled_from([None, 7]), OPERATION_ARGS, st.just("succeeded")),
    st.tuples(st.sampled_from(REFS), st.just(["not", "a", "dict"]), st.just("failed")),
)


@SETTINGS
@given(
    before=st.lists(st.lists(operations(), max_size=8), max_size=4),
    hostile=st.lists(st.one_of(operations(), HOSTILE_OPS), min_size=1, max_size=8),
    origin=st.one_of(ORIGINS, st.just([1])),
    container=st.sampled_from([list, tuple, iter]),
)
def test_what_the_kernel_refuses_goes_the_python_way(
    before: list[Any], hostile: list[Any], origin: Any, container: Any
) -> None:
    native_kernel("core._proposals_native")
    seen = []
    for kind in PATHS:
        with paths(kind):
            evidence = ProposalEvidence(origin=origin)
            raised = []
            for ops in [*before, hostile]:
                try:
                    evidence.add_operations(container(ops))
                except Exception as error:  # the same error, at the same point, everywhere
                    raised.append(type(error).__name__)
            seen.append((raised, state(evidence)))
    assert seen[0] == seen[1] == seen[2]


def test_odd_evidence_contents_are_updated_as_python_does() -> None:
    """Entries read through the object protocol: a count that is a float, an execution
    set that is full, a per-ref dict made by a merge."""
    native_kernel("core._proposals_native")
    seen = []
    ops = [("a.one", {"q": 1}, "succeeded"), ("a.two", {}, "succeeded"), ("b.x", {}, "succeeded")]
    for kind in PATHS:
        with paths(kind):
            evidence = ProposalEvidence()
            evidence.clusters["a.one"] = {("q",): 2.5}
            evidence.sequences["a.one→a.two→b.x"] = [["a.one", "a.two", "b.x"], 1.5, {1, 2, 3}]
            evidence.sequences["x"] = [["x"], 2**64, set()]
            evidence.add_operations(ops)
            evidence.add_operations([*ops, ("x", {}, "failed")])
            seen.append(state(evidence))
    assert seen[0] == seen[1] == seen[2]


def _fresh(text: str) -> str:
    """An equal str, another object when it has two characters or more."""
    return "".join(list(text))


class _Key(tuple):  # type: ignore[type-arg]
    pass


# Clusters left by earlier input or by hand: key tuples spelled in another order, a tuple
# subclass, tuples holding other things than str, keys that are not tuples, more key sets
# than the kernel scans, counts that are floats or huge.
ODD_KEY_SETS = st.one_of(
    st.lists(ARG_KEYS, max_size=3).map(tuple),
    st.lists(ARG_KEYS, max_size=3).map(lambda keys: _Key(keys)),
    st.sampled_from([(1,), ("q", None), "q", 7, frozenset({"q"}), (_Str("q"),)]),
)
ODD_COUNTS = st.sampled_from([1, 2, 2.5, 2**70, -1, 0])
ODD_CLUSTERS = st.dictionaries(
    st.sampled_from(REFS[:5]),
    st.one_of(
        st.dictionaries(ODD_KEY_SETS, ODD_COUNTS, max_size=3),
        st.dictionaries(
            st.lists(ARG_KEYS, max_size=4, unique=True).map(tuple),
            ODD_COUNTS,
            min_size=8,
            max_size=12,
        ),
    ),
    max_size=4,
)


@st.composite
def spelled_operations(draw: st.DrawFn) -> tuple[str, dict[str, Any], str]:
    """An operation whose ref and argument keys are sometimes equal str of other objects."""
    ref, args, outcome = draw(operations())
    if draw(st.booleans()):
        ref = _fresh(ref)
    if draw(st.booleans()):
        args = {_fresh(key): value for key, value in args.items()}
    return ref, args, outcome


@SETTINGS
@given(
    prior=ODD_CLUSTERS,
    traces=st.lists(
        st.one_of(
            st.lists(spelled_operations(), max_size=8),
            st.lists(spelled_operations(), min_size=33, max_size=50),  # past the stack scratch
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_odd_clusters_are_counted_as_the_dict_counts_them(
    prior: dict[str, Any], traces: list[Any]
) -> None:
    """The kernel finds an operation's key set among a small per-ref dict's keys itself: on
    clusters of any contents, equal keys that are other objects, and traces whose argument
    keys outgrow its stack scratch, it counts what the Python loop counts."""
    native_kernel("core._proposals_native")
    seen = []
    for kind in PATHS:
        with paths(kind):
            evidence = ProposalEvidence()
            evidence.clusters = {ref: dict(per_ref) for ref, per_ref in prior.items()}
            raised = []
            for ops in traces:
                try:
                    evidence.add_operations(ops)
                except Exception as error:
                    raised.append(type(error).__name__)
            seen.append((raised, state(evidence)))
    assert seen[0] == seen[1] == seen[2]


class _Count(int):
    """A count whose ``+`` runs Python code: it acts on the evidence first."""

    action: Any

    def __add__(self, other: Any) -> _Count:
        self.action()
        bigger = _Count(int(self) + other)
        bigger.action = self.action
        return bigger


def _hook(evidence: ProposalEvidence, trace: list[Any], action: str) -> Any:
    """What a hooked count does to the evidence (or to the trace being read)."""

    def act() -> None:
        clusters = evidence.clusters
        if action == "drop":
            clusters.pop("a.one", None)
        elif action == "replace":
            clusters["a.two"] = {("q",): 5}
        elif action == "grow":
            clusters.setdefault("b.x", {})[("path", "q")] = 1
        elif action == "add key":
            trace[-1][1]["late"] = 1
        else:
            for per_ref in clusters.values():
                for keys in per_ref:
                    per_ref[keys] = 3

    return act


@SETTINGS
@given(
    ops=st.lists(spelled_operations(), min_size=1, max_size=12),
    hooked=st.sampled_from(REFS[:5]),
    action=st.sampled_from(["drop", "replace", "grow", "add key", "recount"]),
)
def test_a_count_that_runs_python_code_is_followed_as_python_follows_it(
    ops: list[Any], hooked: str, action: str
) -> None:
    """Until a count's ``+`` runs Python code the kernel trusts what it read of the clusters
    and the arguments before; after it, it reads them again as the Python loop does."""
    native_kernel("core._proposals_native")
    ops = [("a.one", {"q": 1}, "succeeded"), (hooked, {}, "succeeded"), *ops]
    seen = []
    for kind in PATHS:
        with paths(kind):
            evidence = ProposalEvidence()
            trace = [(ref, dict(args), outcome) for ref, args, outcome in ops]
            count = _Count(1)
            count.action = _hook(evidence, trace, action)
            evidence.clusters[hooked] = {(): count}
            raised = []
            try:
                evidence.add_operations(trace)
            except Exception as error:
                raised.append(type(error).__name__)
            seen.append((raised, state(evidence)))
    assert seen[0] == seen[1] == seen[2]


_CHANGED_EVIDENCE = """
from pytest_entropy.core.fastpath import kernel
from pytest_entropy.core.proposals import ProposalEvidence
from pytest_entropy.run.deferred import _OPERATIONS, _replay_evidence, _replay_python

own = ProposalEvidence._executions
side = {}
ProposalEvidence._executions = property(
    lambda self: side.get(id(self), 0), lambda self, v: side.__setitem__(id(self), v)
)
assert kernel("core._proposals_native") is not None
ops = [("a.one", {}, "succeeded"), ("a.two", {}, "succeeded"), ("b.x", {}, "succeeded")]
found = []
for replay in (_replay_evidence, _replay_python):
    evidence = ProposalEvidence(origin=9)
    own.__set__(evidence, 100)
    replay(evidence, [(_OPERATIONS, ops)] * 4)
    entry = evidence.sequences["a.one\u2192a.two\u2192b.x"]
    found.append((side[id(evidence)], own.__get__(evidence), entry[1], sorted(entry[2])))
print(found[0] == found[1], found[0])
"""


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
    native_kernel("core._proposals_native")
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
            # itself (the fast path's deferred ones), so it differs between paths by design.
            seen.append((state(read.evidence)[3:], json.dumps(run.proposals)))
    assert seen[0] == seen[1] == seen[2]


@pytest.mark.parametrize("flags", [[], ["--json"], ["--no-audit-values", "--json"], ["--explain"]])
def test_propose_prints_the_same_bytes_on_every_path(tmp_path: Path, flags: list[str]) -> None:
    native_kernel("core._proposals_native")
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
    assert outputs[0] == outputs[1] == outputs[2]
    assert outputs[0][0] == 0 and "sequence-fuse" in outputs[0][1]


def test_the_kernel_takes_records_and_signed_operations_and_refuses_the_rest() -> None:
    k = native_kernel("core._proposals_native")
    ops = [("a.one", {"q": 1}, "succeeded"), ("a.two", {}, "succeeded"), ("b.x", {}, "succeeded")]
    for form in ("trace", "signed", "records"):
        clusters: dict[str, Any] = {}
        sequences: dict[str, Any] = {}
        operations = _as(form, ops)
        operations = operations.operations if form == "trace" else operations
        assert k.add_operations(clusters, sequences, operations, "o", 7) is True
        assert list(sequences.values()) == [[["a.one", "a.two", "b.x"], 1, {("o", 7)}]]
    for hostile in (
        [*ops, (_Str("a.one"), {}, "succeeded")],
        [*ops, ("a.one", _Dict(), "succeeded")],
        [*ops, ("a.one", {}, None)],
        [*ops, ["a.one", {}, "succeeded"]],
        [*ops, ("a.one", {}), ("a.two",)],
        iter(ops),
    ):
        clusters, sequences = {}, {}
        assert k.add_operations(clusters, sequences, hostile, 0, 0) is NotImplemented
        assert clusters == {} and sequences == {}
    assert k.add_operations({"a.one": []}, {}, ops, 0, 0) is NotImplemented
    assert k.add_operations(_Dict(), {}, ops, 0, 0) is NotImplemented
    with pytest.raises(TypeError):
        k.add_operations({}, {}, ops)
