"""The audit kernel (``ingest/_audit_native.c``) computes what its Python twins compute.

Native, python (fast paths without kernels) and plain paths are compared on generated audits
lists (records that are not objects, missing or empty refs, arguments with integer-like keys,
booleans beside integers, integers past 2**53 and past 64 bits, floats and -0.0, non-ASCII
and astral text, nested values, tallies that overflow), on the JavaScript own-key order, the
kept and skipped counts, every callback in order, the evidence's tallies (dict order, totals,
counts, the values kept), the deferred evidence's interleaving with traces, and end to end on
the bytes ``propose`` prints.
"""

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
from pytest_entropy.core.jscompat import js_own_keys
from pytest_entropy.core.proposals import ENUM_MAX_DISTINCT, ProposalEvidence
from pytest_entropy.core.records import AuditCall, Operation, Trace, ValueObservation
from pytest_entropy.ingest.native import (
    audit_records,
    harvest_values,
    tally_values,
    value_tallier,
)
from pytest_entropy.run import deferred as deferred_module
from pytest_entropy.run.deferred import (
    DeferredEvidence,
    replay_evidence_into,
    values_listener,
)
from tests.native_support import native_kernel, paths

NAME = "ingest._audit_native"
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Integer-like keys on both sides of the array-index rule (canonical, leading zero, signed,
# past 2**32-2, non-ASCII digits), and plain text.
TRICKY_KEYS = [
    "0",
    "2",
    "10",
    "01",
    "00",
    "-1",
    "1.0",
    " 1",
    "1a",
    "4294967294",
    "4294967295",
    "9999999999",
    "12345678901",
    "",
    "a",
    "b",
    "é",
    "١",
    "²",
    "𝟘",
    "😀",
]
keys = st.one_of(
    st.sampled_from(TRICKY_KEYS),
    st.integers(0, 2**33).map(str),
    st.text(max_size=3),
)
BIG = [2**53, 2**53 + 1, -(2**53), -(2**53) - 1, 2**63, 2**64 + 3, -(2**70), 10**30]
primitives = st.one_of(
    st.sampled_from(["x", "y", "é", "😀", "", "true", "1"]),
    st.text(max_size=3),
    st.booleans(),
    st.integers(-3, 3),
    st.integers(-(2**80), 2**80),
    st.sampled_from(BIG),
    st.floats(),
    st.sampled_from([0.0, -0.0, 1.0, 0.5, 1e21, 1e-7, float("inf"), float("nan")]),
)
nested = st.recursive(
    st.one_of(st.none(), primitives),
    lambda inner: st.one_of(
        st.lists(inner, max_size=2), st.dictionaries(st.text(max_size=2), inner, max_size=2)
    ),
    max_leaves=4,
)
values = st.one_of(primitives, primitives, nested)
argument_objects = st.dictionaries(keys, values, max_size=6)
REFS = ["a", "b", "ref.é", "fabric.x", "😀"]
refs = st.one_of(st.sampled_from(REFS), st.sampled_from(["", None, 7, ["a"]]))


@st.composite
def records(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.one_of(st.none(), st.integers(), st.text(max_size=2), st.just([])))
    record: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        record["ref"] = draw(refs)
    if draw(st.integers(0, 9)):
        record["args"] = draw(
            st.one_of(argument_objects, argument_objects, st.sampled_from([None, [], "x"]))
        )
    if draw(st.booleans()):
        record["extra"] = draw(values)
    return record


@st.composite
def overflowing(draw: st.DrawFn) -> list[Any]:
    """One parameter heard with more distinct values than a tally keeps."""
    ref = draw(st.sampled_from(REFS))
    key = draw(st.sampled_from(["k", "10", "2"]))
    count = draw(st.integers(ENUM_MAX_DISTINCT - 1, ENUM_MAX_DISTINCT + 4))
    return [{"ref": ref, "args": {key: n, "s": str(n % 3)}} for n in range(count)]


audits_lists = st.one_of(
    st.lists(records(), max_size=6),
    overflowing(),
    st.sampled_from([None, {}, "audits", (), 3]),
)


def typed(value: Any) -> tuple[str, str]:
    """A value with its type, telling True from 1, -0.0 from 0.0 and nan from nan."""
    return type(value).__name__, repr(value)


def outcome(function: Any, *args: Any) -> Any:
    try:
        return ("ok", function(*args))
    except Exception as error:  # the same exception type on both paths
        return ("raised", type(error).__name__)


# ------------------------------------------------------------------------ own keys


@SETTINGS
@given(obj=argument_objects)
def test_own_keys_is_the_javascript_order(obj: dict[str, Any]) -> None:
    native = native_kernel(NAME)
    assert native.own_keys(obj, js_own_keys) == js_own_keys(obj)


def test_own_keys_hands_foreign_keys_to_the_python_order() -> None:
    native = native_kernel(NAME)
    for obj in ({1: "x"}, {"a": 1, 2: 3}, {"10": 1, (1,): 2}):
        assert outcome(native.own_keys, obj, js_own_keys) == outcome(js_own_keys, obj)
    assert outcome(native.own_keys, ["a"], js_own_keys) == outcome(js_own_keys, ["a"])


def test_own_keys_keeps_canonical_indexes_first_in_numeric_order() -> None:
    native = native_kernel(NAME)
    obj = {"b": 0, "10": 0, "01": 0, "2": 0, "-1": 0, "4294967295": 0, "4294967294": 0, "0": 0}
    assert native.own_keys(obj, js_own_keys) == js_own_keys(obj)
    assert native.own_keys(obj, js_own_keys)[:4] == ["0", "2", "10", "4294967294"]


# ------------------------------------------------------------------- audit_records


def harvest(kind: str, audits: Any, calls: bool, mode: str) -> Any:
    """Every callback audit_records makes, in order, with the counts it returns."""
    heard: list[Any] = []

    def on_call(call: AuditCall) -> None:
        heard.append(("call", type(call).__name__, call.ref, call.args))

    def on_value_fields(ref: str, key: str, value: Any) -> None:
        heard.append(("fields", ref, key, typed(value)))

    def on_value(observation: ValueObservation) -> None:
        value = observation.value
        heard.append(("observation", observation.ref, observation.key, typed(value)))

    listeners: tuple[Any, Any, Any] = (
        on_call if calls else None,
        on_value if mode == "observations" else None,
        on_value_fields if mode == "fields" else None,
    )
    if kind == "native":
        native = native_kernel(NAME)
        counts = native.audit_records(
            audits,
            listeners[0],
            AuditCall,
            listeners[1],
            ValueObservation,
            listeners[2],
            js_own_keys,
        )
    else:
        counts = audit_records(audits, *listeners)
    return counts, heard


@SETTINGS
@given(
    audits=audits_lists,
    calls=st.booleans(),
    mode=st.sampled_from(["fields", "observations", "none"]),
)
def test_audit_records_heard_the_same(audits: Any, calls: bool, mode: str) -> None:
    assert harvest("native", audits, calls, mode) == harvest("python", audits, calls, mode)


def gathered(kind: str, audits: Any, calls: bool) -> Any:
    heard: list[Any] = []

    def on_call(call: AuditCall) -> None:
        heard.append((type(call).__name__, call.ref, call.args))

    listener = on_call if calls else None
    if kind == "native":
        native = native_kernel(NAME)
        kept, skipped, values = native.harvest_values(audits, listener, AuditCall, js_own_keys)
    else:
        kept, skipped, values = harvest_values(audits, listener)
    assert values is None or (type(values) is tuple and values)
    typed_values = None if values is None else [typed(item) for item in values]
    return kept, skipped, typed_values, heard


@SETTINGS
@given(audits=audits_lists, calls=st.booleans())
def test_harvest_values_gathers_the_same(audits: Any, calls: bool) -> None:
    assert gathered("native", audits, calls) == gathered("python", audits, calls)


def test_audit_records_builds_real_audit_calls() -> None:
    native = native_kernel(NAME)
    args = {"q": 1}
    got: list[Any] = []
    kept = native.audit_records(
        [{"ref": "r", "args": args}, {"ref": "", "args": {}}],
        got.append,
        AuditCall,
        None,
        ValueObservation,
        None,
        js_own_keys,
    )
    assert kept == (1, 1)
    assert type(got[0]) is AuditCall and got[0] == ("r", args) and got[0].args is args


def test_a_failing_listener_propagates() -> None:
    native = native_kernel(NAME)

    def refuse(*_: Any) -> None:
        raise ZeroDivisionError

    audits = [{"ref": "r", "args": {"k": 1}}]
    for listeners in ((refuse, None, None), (None, refuse, None), (None, None, refuse)):
        python = outcome(audit_records, audits, *listeners)
        args = (audits, listeners[0], AuditCall, listeners[1], ValueObservation, listeners[2])
        assert outcome(native.audit_records, *args, js_own_keys) == python
        assert python == ("raised", "ZeroDivisionError")


# -------------------------------------------------------------------- tallies


def tallies_of(evidence: ProposalEvidence) -> list[Any]:
    return [
        (
            ref_key,
            type(tally).__name__,
            typed(tally.total),
            tally.overflowed,
            [(identity, typed(slot[0]), typed(slot[1])) for identity, slot in tally.counts.items()],
        )
        for ref_key, tally in evidence.tallies.items()
    ]


def tallied(kind: str, batches: list[Any], prior: list[ValueObservation]) -> list[Any]:
    evidence = ProposalEvidence()
    for observation in prior:
        evidence.add_observation(observation)
    with paths(kind):
        tally = value_tallier(evidence)
        if kind == "native":
            assert tally.func is native_kernel(NAME).tally_values  # type: ignore[attr-defined]
        for audits in batches:
            if kind == "plain":
                audit_records(audits, None, evidence.add_observation)
            elif kind == "python":
                audit_records(audits, None, None, evidence.add_value)
            else:
                values = native_kernel(NAME).harvest_values(audits, None, AuditCall, js_own_keys)[2]
                if values is not None:
                    tally(values)
    return tallies_of(evidence)


def twin_tallied(batches: list[Any], prior: list[ValueObservation]) -> list[Any]:
    """The Python twins: harvest_values, then tally_values."""
    evidence = ProposalEvidence()
    for observation in prior:
        evidence.add_observation(observation)
    for audits in batches:
        values = harvest_values(audits, None)[2]
        if values is not None:
            tally_values(evidence, values)
    return tallies_of(evidence)


prior_observations = st.lists(
    st.builds(
        ValueObservation,
        st.sampled_from(REFS),
        st.sampled_from(["k", "10", "2", "a"]),
        primitives,
        st.one_of(st.none(), st.integers(1, 3)),
    ),
    max_size=4,
)


@SETTINGS
@given(batches=st.lists(audits_lists, max_size=5), prior=prior_observations)
def test_the_tallies_are_the_same_on_every_path(
    batches: list[Any], prior: list[ValueObservation]
) -> None:
    native_kernel(NAME)
    found = [tallied(kind, batches, prior) for kind in ("native", "python", "plain")]
    assert found[0] == found[1] == found[2] == twin_tallied(batches, prior)


def test_a_tally_past_the_distinct_limit_overflows_and_keeps_counting() -> None:
    native_kernel(NAME)
    audits = [{"ref": "r", "args": {"k": n}} for n in range(ENUM_MAX_DISTINCT + 3)]
    found = tallied("native", [audits], [])
    assert found == tallied("python", [audits], []) == tallied("plain", [audits], [])
    assert found == twin_tallied([audits], [])
    assert found[0][2] == typed(ENUM_MAX_DISTINCT + 3) and found[0][3] is True


# ------------------------------------------------------------------- deferral


operations = st.builds(
    Operation,
    st.sampled_from(REFS),
    argument_objects,
    st.sampled_from(["succeeded", "failed"]),
)
traces = st.builds(Trace, st.lists(operations, max_size=4).map(tuple), st.just("task"))
events = st.lists(
    st.one_of(traces.map(lambda t: ("trace", t)), audits_lists.map(lambda a: ("audits", a))),
    max_size=8,
)


def evidence_state(evidence: ProposalEvidence) -> Any:
    return (
        tallies_of(evidence),
        {ref: list(clusters.items()) for ref, clusters in evidence.clusters.items()},
        [
            (identity, window, occurrences, sorted(executions))
            for identity, (window, occurrences, executions) in evidence.sequences.items()
        ],
        evidence._executions,
    )


def heard_deferred(kind: str, script: list[Any], trace_values: bool) -> Any:
    """What a corpus evidence holds after one file's deferred evidence was replayed."""
    evidence = ProposalEvidence(trace_values=trace_values, origin=1)
    with paths(kind):
        if kind == "plain":
            for what, item in script:
                if what == "trace":
                    evidence.add_trace(item)
                else:
                    audit_records(item, None, evidence.add_observation)
            return evidence_state(evidence)
        deferred = DeferredEvidence(ProposalEvidence(trace_values=trace_values, origin=1))
        listener = values_listener(deferred)
        assert (listener is None) == (kind == "python")
        for what, item in script:
            if what == "trace":
                deferred.add_trace(item)
            elif listener is None:
                audit_records(item, None, None, deferred.add_value)
            else:
                values = native_kernel(NAME).harvest_values(item, None, AuditCall, js_own_keys)[2]
                if values is not None:
                    listener(values)
        if deferred.pending is None:  # it settled into the file's own evidence
            return evidence_state(deferred.evidence)
        replay_evidence_into(evidence, 1, deferred.pending)
    return evidence_state(evidence)


@SETTINGS
@given(script=events, trace_values=st.booleans(), limit=st.sampled_from([0, 1, 4096]))
def test_deferred_values_keep_their_place_among_the_traces(
    script: list[Any], trace_values: bool, limit: int
) -> None:
    native_kernel(NAME)
    previous = deferred_module.DEFERRED_TRACES
    deferred_module.DEFERRED_TRACES = limit  # 0, 1: the deferral settles midway
    try:
        found = [heard_deferred(kind, script, trace_values) for kind in ("native", "python")]
    finally:
        deferred_module.DEFERRED_TRACES = previous
    assert found[0] == found[1] == heard_deferred("plain", script, trace_values)


# ---------------------------------------------------------------- end to end

SURFACE = {
    "version": 1,
    "actions": [
        {
            "ref": ref,
            "inputSchema": {
                "type": "object",
                "properties": {
                    # enum-tighten needs an enum wider than the values seen; declare-enum
                    # the candidate annotation.
                    "mode": {"type": "string", "enum": ["fast", "slow", "é", "😀", "other"]},
                    "10": {"type": "integer", "x-fabric-enum-candidate": True},
                    "2": {"type": "number", "enum": [1, 2, 0.5, 0, 2**53 + 1, 2**64, 7]},
                    "flag": {"type": "boolean"},
                },
            },
        }
        for ref in ("a", "b", "ref.é")
    ],
}
# Per key, a dominant value among a few others (so enums are proposed) and a stray one.
POOLS: dict[str, list[Any]] = {
    "mode": ["fast", "fast", "fast", "slow", "é", "😀"],
    "10": [1, 1, 1, 2, 2**53 + 1, True],
    "2": [0.5, 0.5, 0.5, 1, -0.0, 2**64],
    "flag": [True, True, False],
}


@st.composite
def session_files(draw: st.DrawFn) -> list[list[str]]:
    files = []
    for _ in range(draw(st.integers(1, 3))):
        lines = []
        for _ in range(draw(st.integers(1, 16))):
            ops, audits = [], []
            for sequence in range(draw(st.integers(0, 3))):
                ref = draw(st.sampled_from(["a", "b", "ref.é"]))
                args = {
                    key: draw(st.sampled_from(pool))
                    for key, pool in POOLS.items()
                    if draw(st.integers(0, 3))
                }
                if not draw(st.integers(0, 5)):
                    args[draw(st.sampled_from(list(POOLS)))] = draw(primitives)
                outcome_ = draw(st.sampled_from(["succeeded", "succeeded", "failed"]))
                ops.append(
                    {
                        "type": "call",
                        "sequence": sequence,
                        "ref": ref,
                        "args": args,
                        "outcome": outcome_,
                    }
                )
                audits.append({"ref": ref, "args": args})
            if draw(st.booleans()):
                audits.append(draw(records()))
            trace = {
                "kind": "pi-fabric.execution",
                "version": 1,
                "outcome": "succeeded",
                "phases": ["build"],
                "operations": ops,
                "counts": {
                    "droppedValues": 0,
                    "truncatedValues": 0,
                    "redactedValues": 0,
                    "droppedOperations": 0,
                },
            }
            record = {"type": "message", "message": {"details": {"trace": trace, "audits": audits}}}
            lines.append(json.dumps(record, ensure_ascii=draw(st.booleans())))
        files.append(lines)
    return files


def propose_bytes(kind: str, folder: Path, flags: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    argv = ["propose", "--sessions", str(folder / "sessions"), "--surface"]
    argv += [str(folder / "surface.json"), *flags]
    with paths(kind), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    files=session_files(), flags=st.sampled_from([["--json"], [], ["--no-audit-values", "--json"]])
)
def test_propose_prints_the_same_bytes_on_every_path(
    tmp_path_factory: pytest.TempPathFactory, files: list[list[str]], flags: list[str]
) -> None:
    native_kernel(NAME)
    folder = tmp_path_factory.mktemp("propose")
    (folder / "surface.json").write_text(json.dumps(SURFACE), encoding="utf-8")
    sessions = folder / "sessions"
    sessions.mkdir()
    for index, lines in enumerate(files):
        text = "".join(line + "\n" for line in lines)
        (sessions / f"{index:02d}.jsonl").write_text(text, encoding="utf-8")
    found = [propose_bytes(kind, folder, flags) for kind in ("native", "python", "plain")]
    assert found[0] == found[1] == found[2]
    assert found[0][0] in (0, 1)
