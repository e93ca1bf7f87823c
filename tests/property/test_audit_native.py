"""``propose`` prints the same bytes on the Rust core and on the plain path, on generated
session files whose audits hold hostile arguments: integer-like keys on both sides of the
array-index rule, booleans beside integers, integers past 2**53 and 64 bits, floats and
-0.0, non-ASCII and astral text, nested values, records that are not objects, missing or
odd refs. (The C audit kernel these were first written for is gone, with the comparisons
of its pieces; the Rust core's audit harvest and value tallies are compared piece by piece
in ``test_native_tallies.py``.)
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_entropy.cli import main
from tests.native_support import paths

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


INFINITE_LINE = {
    "type": "message",
    "message": {
        "details": {
            "trace": {
                "kind": "pi-fabric.execution",
                "version": 1,
                "outcome": "succeeded",
                "phases": ["build"],
                "operations": [
                    {
                        "type": "call",
                        "sequence": 0,
                        "ref": "a",
                        "args": {"mode": float("inf")},
                        "outcome": "succeeded",
                    }
                ],
            },
            "audits": [{"ref": "a", "args": {"mode": float("inf")}}],
        }
    },
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
# Found with a random seed: the only line holds an Infinity literal (no readable trace).
@example(files=[[json.dumps(INFINITE_LINE)]], flags=["--json"])
def test_propose_prints_the_same_bytes_on_both_paths(
    tmp_path_factory: pytest.TempPathFactory, files: list[list[str]], flags: list[str]
) -> None:
    folder = tmp_path_factory.mktemp("propose")
    (folder / "surface.json").write_text(json.dumps(SURFACE), encoding="utf-8")
    sessions = folder / "sessions"
    sessions.mkdir()
    for index, lines in enumerate(files):
        text = "".join(line + "\n" for line in lines)
        (sessions / f"{index:02d}.jsonl").write_text(text, encoding="utf-8")
    found = [propose_bytes(kind, folder, flags) for kind in ("native", "plain")]
    assert found[0] == found[1]
    if any(_strict_json(line) for lines in files for line in lines):
        assert found[0][0] in (0, 1)
    else:
        # Every line holds a NaN or Infinity literal, which JSON.parse refuses: a corpus
        # without one readable trace is refused (exit 2), never measured as empty.
        assert found[0][0] == 2
        assert "0 traces" in found[0][2]


def _strict_json(line: str) -> bool:
    """Whether ``JSON.parse`` reads ``line`` (Python's decoder also takes NaN and Infinity)."""

    def refuse(constant: str) -> None:
        raise ValueError(constant)

    try:
        json.loads(line, parse_constant=refuse)
    except ValueError:
        return False
    return True
