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
from pytest_entropy.core.proposals import ENUM_MAX_DISTINCT, ProposalEvidence, _Tally
from pytest_entropy.core.records import Operation, Trace, ValueObservation
from pytest_entropy.ingest.native import (
    harvest_values,
    tally_values,
)
from tests.native_support import paths

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


# ------------------------------------------------------------------- audit_records


class _Key(str):
    pass


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


# ------------------------------------------------------------ tally_values triples
#
# The kernel's tally_values reads an exact _Tally's slots in place, remembers within a call
# the tally of each (ref, key) pair it met, and compares a simple value's identity with a
# small counts dict's keys without building it: fed here directly with triples whose refs
# and keys are equal str that are other objects (and other storage kinds), values of every
# simple type beside their subclasses, nested and unhashable values (value_key raises),
# parameters past the distinct limit, and tallies left in odd states by earlier input.


class Text(str):
    pass


class Number(int):
    pass


class Real(float):
    pass


def fresh(text: str) -> str:
    """An equal str, another object when it has two characters or more."""
    return "".join(list(text))


TEXTS = ["r", "ref.é", "😀x", "k", "10", "mode", "a" * 40, "string:k", ""]
spelled = st.tuples(st.sampled_from(TEXTS), st.booleans()).map(
    lambda pair: fresh(pair[0]) if pair[1] else pair[0]
)
triple_values = st.one_of(
    primitives,
    st.sampled_from([1, 1.0, True, 0, 0.0, -0.0, False, "1", "", "number:1", 2**53, 2**53 + 1]),
    st.text(max_size=3).map(Text),
    st.integers(-3, 3).map(Number),
    st.floats(allow_nan=False).map(Real),
    nested,
)


@st.composite
def triples(draw: st.DrawFn) -> tuple[Any, ...]:
    """A flat (ref, key, value, ...) tuple; sometimes one parameter past the distinct limit
    with its values repeated in between."""
    found: list[Any] = []
    for ref, key, value in draw(st.lists(st.tuples(spelled, spelled, triple_values), max_size=20)):
        found.extend((ref, key, value))
    if draw(st.booleans()):
        ref, key = draw(spelled), draw(spelled)
        width = draw(st.integers(ENUM_MAX_DISTINCT - 1, ENUM_MAX_DISTINCT + 3))
        for n in range(width):
            found.extend((fresh(ref), fresh(key), draw(st.sampled_from([n, str(n), n + 0.5]))))
            found.extend((ref, key, draw(st.sampled_from([0, "0", True]))))
    return tuple(found)


triple_priors = st.lists(
    st.builds(
        ValueObservation,
        st.sampled_from(TEXTS),
        st.sampled_from(TEXTS),
        primitives,
        st.one_of(st.none(), st.integers(1, 3), st.floats(0.5, 2.0)),
    ),
    max_size=6,
)


def reference_tally(
    tallies: dict[Any, Any], tally_type: Any, key_of: Any, limit: int, values: tuple[Any, ...]
) -> None:
    """ProposalEvidence.add_value with its tally class, value_key and limit as arguments."""
    for at in range(0, len(values), 3):
        ref, key, value = values[at : at + 3]
        tally = tallies.get((ref, key))
        if tally is None:
            tally = tallies[(ref, key)] = tally_type(ref, key)
        tally.total += 1
        if tally.overflowed:
            continue
        t = type(value)
        if t is str:
            identity = "string:" + value
        elif t is int and -(2**53) <= value <= 2**53:
            identity = "number:" + str(value)
        else:
            identity = key_of(value)
        counts = tally.counts
        slot = counts.get(identity)
        if slot is None:
            counts[identity] = [value, 1]
            if len(counts) > limit:
                tally.overflow()
        else:
            slot[0] = value
            slot[1] += 1


class SubTally(_Tally):
    __slots__ = ()


class LooseTally:
    """A tally of another class: attributes in a __dict__."""

    def __init__(self, ref: str, key: str) -> None:
        self.ref, self.key = ref, key
        self.counts: dict[Any, Any] = {}
        self.total: Any = 0
        self.overflowed: Any = False

    def overflow(self) -> None:
        self.overflowed = True
        self.counts.clear()


class Marker:
    """A value whose value_key acts on the tallies first (the hostile hook below)."""

    def __init__(self, action: str) -> None:
        self.action = action


ODD_STATES = [
    "float total",
    "bool total",
    "float count",
    "none slot",
    "foreign key",
    "flag 1",
    "overflowed",
    "many counts",
    "subclass",
]


def odd_tallies(tally_type: Any, states: list[str]) -> dict[Any, Any]:
    """Tallies for ("r", "k") and ("ref.é", "10") left in odd states by earlier input."""
    tallies: dict[Any, Any] = {}
    for ref, key in (("r", "k"), ("ref.é", "10")):
        tally = tallies[(ref, key)] = tally_type(ref, key)
        tally.counts["string:0"] = [Text("0"), 2]
        tally.counts["number:0"] = [0, 1]
        tally.total = 3
    first, second = tallies[("r", "k")], tallies[("ref.é", "10")]
    for state in states:
        if state == "float total":
            first.total = 2.5
        elif state == "bool total":
            second.total = True
        elif state == "float count" and "number:0" in first.counts:
            first.counts["number:0"][1] = 1.5
        elif state == "none slot":
            second.counts["string:0"] = None
        elif state == "foreign key" and not first.overflowed:
            first.counts[(1, 2)] = ["x", 1]
        elif state == "flag 1":
            second.overflowed = 1
        elif state == "overflowed":
            first.overflow()
        elif state == "many counts":
            for n in range(20):
                second.counts[f"number:{n + 100}"] = [n + 100, 1]
        elif state == "subclass" and tally_type is _Tally:
            tallies[("r", "k")] = replacement = SubTally("r", "k")
            replacement.counts.update(first.counts)
    return tallies


def state_of(tallies: dict[Any, Any]) -> list[Any]:
    return [
        (
            pair,
            type(tally).__name__,
            typed(tally.total),
            typed(tally.overflowed),
            [
                (identity, None if slot is None else [typed(item) for item in slot])
                for identity, slot in tally.counts.items()
            ],
        )
        for pair, tally in tallies.items()
    ]


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
