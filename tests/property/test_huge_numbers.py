"""Integers beyond the double range (``1`` and 400 zeros) behave as JavaScript reads them:
as ±Infinity (issue 26, item 2). The guard counts and skips a trace holding one in its
arguments or result, exactly as it does the same trace with the number written ``1e400``
(the generic parser's reading); an audit keeps it as Infinity (the pool drops it, as it
drops every number JSON cannot write); text, canonical JSON and hashes write it as
JavaScript does; nothing crashes - on both paths (the Rust core and the plain Python).

The comparisons below are between two spellings of the same line: the huge integer and
``1e400``.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_entropy.cli.app import main
from pytest_entropy.core.canonical import canonical_json, js_stringify, stable_json_hash
from pytest_entropy.core.jscompat import (
    is_finite_number,
    js_number,
    js_string,
    json_number_text,
    value_key,
)
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.native import ScanRecords, SessionScanner
from pytest_entropy.testing import strategies as es
from tests.native_support import paths

PATHS = ("native", "plain")
DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
OVERFLOW = 2**1024 - 2**970  # the smallest integer a double cannot hold
LARGEST = 2**1024 - 2**970 - 1  # rounds down to the largest double
BIG = 10**400
MARK = "\u0000huge\u0000"


@pytest.mark.parametrize(
    ("value", "text", "json_text"),
    [
        (BIG, "Infinity", "null"),
        (-BIG, "-Infinity", "null"),
        (OVERFLOW, "Infinity", "null"),
        (-OVERFLOW, "-Infinity", "null"),
        (LARGEST, "1.7976931348623157e+308", "1.7976931348623157e+308"),
        (2**53 + 1, "9007199254740992", "9007199254740992"),
        (10**5000, "Infinity", "null"),  # beyond the 4,300 digits str() converts
    ],
    ids=["1e400", "-1e400", "overflow", "-overflow", "largest", "2**53+1", "1e5000"],
)
def test_an_integer_is_the_double_javascript_reads(value: int, text: str, json_text: str) -> None:
    assert js_string(value) == text
    assert json_number_text(value) == json_text
    assert is_finite_number(value) is (json_text != "null")
    assert math.isinf(js_number(value)) is (json_text == "null")
    assert value_key(value) == "number:" + text
    for kind in PATHS:
        with paths(kind):
            tree = {"a": value, "b": [value, {"c": value}]}
            expected = '{"a":%s,"b":[%s,{"c":%s}]}' % ((json_text,) * 3)
            assert canonical_json(tree) == expected, kind
            assert js_stringify(tree) == expected, kind
            assert stable_json_hash(tree) == stable_json_hash(json.loads(expected)), kind


def _scan(data: bytes) -> tuple[list[Any], list[Any], list[Any], dict[str, Any]]:
    evidence = ScanRecords()
    diagnostics = ScanDiagnostics()
    scanner = SessionScanner(
        evidence.traces.append,
        on_audit=evidence.audit_calls.append,
        on_value=evidence.value_observations.append,
        diagnostics=diagnostics,
    )
    scanner.scan_stream(io.BytesIO(data))
    counts = diagnostics.to_json()
    counts.pop("fallbackParsedLines", None)  # which parser read the line, not what it read
    return (
        [canonical_json(t.to_json()) for t in evidence.traces],
        [canonical_json({"ref": c.ref, "args": c.args}) for c in evidence.audit_calls],
        [(o.ref, o.key, value_key(o.value)) for o in evidence.value_observations],
        counts,
    )


@st.composite
def lines_with_a_huge_number(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """A trace line holding one huge integer somewhere, and the same line with ``1e400``."""
    trace = draw(es.trace_envelopes())
    audits: list[Any] = [{"ref": "mcp.a.b", "args": {"k": "v"}}]
    where = draw(st.sampled_from(["args", "nested", "list", "result", "audit", "audit-nested"]))
    operations = trace["operations"] or [
        {"type": "call", "sequence": 0, "ref": "mcp.x.y", "args": {}, "outcome": "succeeded"}
    ]
    trace["operations"] = operations
    operation = operations[draw(st.integers(0, len(operations) - 1))]
    if where == "args":
        operation["args"]["n"] = MARK
    elif where == "nested":
        operation["args"]["deep"] = {"x": {"y": MARK}}
    elif where == "list":
        operation["args"]["items"] = [1, MARK, "z"]
    elif where == "result":
        operation["result"] = {"v": [MARK]}
    elif where == "audit":
        audits[0]["args"]["n"] = MARK
    else:
        audits[0]["args"]["deep"] = [MARK]
    record = {"type": "message", "message": {"role": "toolResult", "details": {}}}
    record["message"]["details"] = {"trace": trace, "audits": audits}
    text = es.session_line(record)
    digits = draw(st.integers(309, 5000))
    sign = draw(st.sampled_from(["", "-"]))
    marked = json.dumps(MARK)
    huge = text.replace(marked, sign + "1" + "0" * digits)
    floated = text.replace(marked, sign + "1e400")
    return huge.encode("utf-8", "surrogatepass"), floated.encode("utf-8", "surrogatepass")


@settings(max_examples=60, deadline=None)
@given(lines_with_a_huge_number())
def test_a_huge_integer_reads_as_the_same_line_with_1e400(lines: tuple[bytes, bytes]) -> None:
    huge, floated = lines
    for kind in PATHS:
        with paths(kind):
            assert _scan(huge) == _scan(floated), kind


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return code, captured.out


def _corpus(directory: Path, number: str) -> Path:
    """The demo sessions with ``number`` in an action's args, an audit and a result."""
    sessions = directory / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    for source in sorted((DEMO / "sessions").iterdir()):
        (sessions / source.name).write_bytes(source.read_bytes())
    path = sessions / "2026-01-05-notes-release.jsonl"
    text = path.read_text(encoding="utf-8")
    for old, new in (
        ('"action":"notes.search","args":{}', '"action":"notes.search","args":{"limit":%s}'),
        ('"args":{"format":"pdf","title":"Weekly"}', '"args":{"format":"pdf","n":%s}'),
        ('"outcome":"succeeded"}', '"outcome":"succeeded","result":[%s]}'),
    ):
        assert old in text
        text = text.replace(old, new % number, 1)
    path.write_text(text, encoding="utf-8")
    return sessions


COMMANDS = [
    ["measure", "--json"],
    ["propose", "--no-audit-values", "--json"],
    ["propose", "--json"],
    ["trial", "--json"],
    ["pool", "--json", "--out", "{dir}/pool.json"],
    ["compile", "--json", "--state-dir", "{dir}/state", "--write"],
]


def _outputs(directory: Path, capsys: pytest.CaptureFixture[str]) -> list[Any]:
    results = []
    for command in COMMANDS:
        argv = [word.replace("{dir}", str(directory)) for word in command]
        argv += ["--sessions", str(directory / "sessions"), "--surface", str(DEMO / "surface.json")]
        _, out = _run(argv, capsys)
        document = json.loads(out)
        document.get("diagnostics", {}).pop("fallbackParsedLines", None)
        document.pop("written", None)
        results.append(document)
    written = [directory / "pool.json", directory / "state" / "compiled.json"]
    written.append(directory / "state" / "observation-pool.json")
    return [results, [path.read_bytes() for path in written]]


@pytest.mark.parametrize("kind", PATHS)
@pytest.mark.parametrize("sign", ["", "-"])
def test_every_command_reads_a_huge_integer_as_javascript_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, sign: str
) -> None:
    """propose --no-audit-values exited 3 (OverflowError in js_string) on every path; pool
    and compile --write refused to write the pool (exit 2)."""
    huge, floated = tmp_path / "huge", tmp_path / "floated"
    _corpus(huge, sign + "1" + "0" * 400)
    _corpus(floated, sign + "1e400")
    with paths(kind):
        seen = _outputs(huge, capsys)
        expected = _outputs(floated, capsys)
    text = json.dumps(seen[0]).replace(str(huge), str(floated))
    assert json.loads(text) == expected[0]
    # the pool and the artifact, byte for byte (the session paths aside)
    assert [raw.replace(bytes(huge), bytes(floated)) for raw in seen[1]] == expected[1]
    measured = seen[0][0]["diagnostics"]  # counted and skipped, as the guard does 1e400
    assert measured["rejectionReasons"] == {"result is not a bounded JSON value": 1}
