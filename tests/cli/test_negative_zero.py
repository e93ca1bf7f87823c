"""A ``-0`` number literal in a session line is JavaScript's negative zero (issue 27).

``JSON.parse`` keeps the sign of ``-0``, and TypeBox's ``uniqueItems`` tells ``-0`` and ``0``
apart, so the reference accepts the recorded argument ``[-0, 0]`` against ``uniqueItems:
true``. Every other output the reference makes from a negative zero equals the one it makes
from ``0`` (``String(-0)`` and ``JSON.stringify(-0)`` are both ``"0"``,
``Number.isInteger(-0)`` is true): the report, its hash, the proposals, the pool, the
compiled artifact and the guard's decisions stay byte for byte those of the same lines with
``0``. Each test runs on every implementation path.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli import main
from pytest_entropy.core.records import AuditCall
from pytest_entropy.ingest.native import SessionScanner
from tests.native_support import paths

KINDS = ["native", "plain"]
# Every spelling of a negative zero; only the first was read as the integer 0 before.
NEGATIVE_ZEROS = ["-0", "-0.0", "-0e5", "-0E-3", "-0.000e+2"]
Z = "@Z@"  # where a template line takes the literal


def _line(
    args: str,
    *,
    sequence: str = "0",
    dropped: str = "0",
    result: str = "1",
    then: str | None = None,
) -> str:
    """A native session line of one call (a second one at sequence ``then``, if given)."""
    counts = (
        f'{{"droppedValues":{dropped},"truncatedValues":0,"redactedValues":0,'
        '"droppedOperations":0}'
    )
    operations = [
        f'{{"type":"call","sequence":{at},"ref":"t.put","args":{args},'
        f'"outcome":"succeeded","result":{result}}}'
        for at in ([sequence] if then is None else [sequence, then])
    ]
    trace = (
        '{"kind":"pi-fabric.execution","version":1,"outcome":"succeeded","phases":["put"],'
        f'"operations":[{",".join(operations)}],"counts":{counts}}}'
    )
    details = f'{{"trace":{trace},"audits":[{{"ref":"t.put","args":{args}}}]}}'
    return f'{{"type":"message","message":{{"role":"toolResult","details":{details}}}}}'


# Template lines with the literal in every place a number can stand: flat and nested
# arguments (before ",", "]", "}" and white space), the sequence, a count, a result, beside
# strings that hold "-0" themselves. The last but one is refused by the guard either way:
# a sequence 0 after -0 does not increase (0 <= -0 in JavaScript).
TEMPLATES = [
    _line(f'{{"n":{Z},"mode":"a"}}'),
    _line(f'{{"n":{Z},"mode":"b"}}'),
    _line(f'{{"n":1,"mode":"a","xs":[{Z}, 0 ,{Z} ],"o":{{"k":{Z}}}}}'),
    _line(f'{{"n":2,"mode":"b","s":"x-0","t":"2026-01-02","o":{{"k": {Z} }}}}'),
    _line(f'{{"n":{Z},"mode":"a"}}', sequence=Z, dropped=Z, result=f"[{Z}]"),
    _line(f'{{"n":{Z},"mode":"b"}}', sequence=Z, then="0"),
    _line('{"n":1,"mode":"a","neg":-0.5,"exp":-0e0}'),
]


def _write_corpus(root: Path, literal: str, copies: int = 4) -> dict[str, str]:
    schema = {
        "type": "object",
        "properties": {
            "n": {"enum": [0, 1, 2, 3]},
            "mode": {"type": "string", "x-fabric-enum-candidate": True},
            "xs": {"type": "array", "uniqueItems": True},
        },
    }
    surface = {"version": 1, "actions": [{"ref": "t.put", "inputSchema": schema}]}
    root.mkdir()
    (root / "surface.json").write_text(json.dumps(surface), encoding="utf-8")
    (root / "sessions").mkdir()
    text = "\n".join(TEMPLATES * copies).replace(Z, literal) + "\n"
    (root / "sessions" / "s.jsonl").write_text(text, encoding="utf-8")
    return {
        "root": str(root),
        "surface": str(root / "surface.json"),
        "sessions": str(root / "sessions"),
        "state": str(root / "state"),
        "pool": str(root / "pool.json"),
    }


def _outputs(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """What each command prints and writes, with the corpus's own path and file digest
    (the one thing that differs between the two spellings) written as placeholders."""
    common = ["--sessions", files["sessions"], "--surface", files["surface"]]
    runs = {
        "measure": ["measure", *common, "--json"],
        "propose": ["propose", *common, "--json"],
        "pool": ["pool", *common, "--out", files["pool"]],
        "compile": ["compile", *common, "--state-dir", files["state"], "--write", "--json"],
    }
    found: dict[str, Any] = {}
    for name, argv in runs.items():
        code = main(argv)
        found[name] = (code, capsys.readouterr().out)
    pool = json.loads(Path(files["pool"]).read_bytes())
    digests = {entry["digest"] for entry in pool["tracked"]}
    found["pool bytes"] = Path(files["pool"]).read_text(encoding="utf-8")
    found["artifact"] = (Path(files["state"]) / "compiled.json").read_text(encoding="utf-8")
    normal = json.dumps(found)
    for digest in digests:
        normal = normal.replace(digest, "<digest>")
    return json.loads(normal.replace(json.dumps(files["root"])[1:-1], "<root>"))


@pytest.mark.parametrize("kind", KINDS)
def test_negative_zero_lines_give_the_bytes_of_zero_lines(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with paths(kind):
        expected = _outputs(_write_corpus(tmp_path / "zero", "0"), capsys)
        for at, literal in enumerate(NEGATIVE_ZEROS):
            found = _outputs(_write_corpus(tmp_path / f"negative{at}", literal), capsys)
            assert found == expected, literal
    measured = json.loads(expected["measure"][1])
    # The guard kept every other trace (a -0 sequence or count is a safe integer), and the corpus
    # holds proposals and value evidence, so the comparison compares something.
    assert measured["report"]["totals"]["traces"] == (len(TEMPLATES) - 1) * 4
    assert measured["diagnostics"]["rejectedTraces"] == 4
    assert json.loads(expected["propose"][1])["proposals"]
    assert "\\u0000n\\u0000number:0" in expected["pool bytes"]  # the value key of -0 and 0
    assert expected["compile"][0] == 0


SURFACE_TEMPLATE = (
    '{"version":1,"actions":[{"ref":"t.put","inputSchema":{"type":"object","properties":{'
    f'"n":{{"enum":[{Z},1,2,3]}},"c":{{"const":{Z}}},'
    f'"m":{{"type":"number","minimum":{Z},"maximum":5}},'
    f'"s":{{"type":"string","maxLength":{Z},"minLength":{Z}}},"xs":{{"type":"array","maxItems":{Z}}}'
    "}}}]}"
)
SURFACE_CALLS = [_line('{"n":0,"c":0,"m":0,"s":"","xs":[]}')] * 6 + [
    _line('{"n":1,"c":-0,"m":-0,"s":"a","xs":[1]}')
] * 4


@pytest.mark.parametrize("kind", KINDS)
def test_a_negative_zero_in_a_surface_changes_no_byte(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = []
    for literal in ["0", "-0"]:
        root = tmp_path / literal
        (root / "sessions").mkdir(parents=True)
        (root / "surface.json").write_text(SURFACE_TEMPLATE.replace(Z, literal), encoding="utf-8")
        text = "\n".join(SURFACE_CALLS) + "\n"
        (root / "sessions" / "s.jsonl").write_text(text, encoding="utf-8")
        files = {
            "root": str(root),
            "surface": str(root / "surface.json"),
            "sessions": str(root / "sessions"),
            "state": str(root / "state"),
            "pool": str(root / "pool.json"),
        }
        with paths(kind):
            found.append(_outputs(files, capsys))
    assert found[0] == found[1]
    assert json.loads(found[0]["propose"][1])["proposals"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("literal", NEGATIVE_ZEROS)
def test_the_scanner_reads_negative_zero(kind: str, literal: str) -> None:
    line = _line(f'{{"n":{Z},"xs":[{Z},0],"o":{{"k":{Z}}}}}').replace(Z, literal)
    calls: list[AuditCall] = []
    with paths(kind):
        scanner = SessionScanner(on_audit=calls.append)
        scanner.feed_lines([line.encode(), line])
        SessionScanner(on_audit=calls.append).scan_stream(io.BytesIO(line.encode() + b"\n"))
    assert len(calls) == 3
    for call in calls:
        args = call.args
        for value in (args["n"], args["xs"][0], args["o"]["k"]):
            assert type(value) is float
            assert value == 0
            assert math.copysign(1.0, value) == -1.0
        assert args["xs"][1] == 0
        assert math.copysign(1.0, args["xs"][1]) == 1.0


def _trial_corpus(tmp_path: Path) -> dict[str, str]:
    # The window calls mode "a" and "b", so the compile tightens mode's enum to those; the
    # held-out calls send xs = [-0, 0], which TypeBox's uniqueItems accepts (-0 and 0 hash
    # apart) under the declared and the compiled schema alike.
    schema = {
        "type": "object",
        "properties": {
            "mode": {"enum": ["a", "b", "c", "d"]},
            "xs": {"type": "array", "uniqueItems": True},
        },
    }
    surface = {"version": 1, "actions": [{"ref": "t.put", "inputSchema": schema}]}
    (tmp_path / "surface.json").write_text(json.dumps(surface), encoding="utf-8")
    window = [_line(f'{{"mode":"{"ab"[i % 2]}","xs":[1,2]}}') for i in range(12)]
    held = [_line('{"mode":"a","xs":[-0,0]}') for _ in range(5)]
    for name, lines in (("window", window), ("held", held)):
        (tmp_path / name).mkdir()
        for at, part in enumerate((lines[:3], lines[3:])):  # two files: two engine tasks
            text = "\n".join(part) + "\n"
            (tmp_path / name / f"s{at}.jsonl").write_text(text, encoding="utf-8")
    return {
        "surface": str(tmp_path / "surface.json"),
        "window": str(tmp_path / "window"),
        "held": str(tmp_path / "held"),
        "state": str(tmp_path / "state"),
    }


@pytest.mark.parametrize(
    ("kind", "engine"),
    [("native", "local"), ("plain", "local"), ("native", "processes")],
)
def test_the_trial_accepts_negative_zero_beside_zero_as_unique(
    kind: str, engine: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = _trial_corpus(tmp_path)
    with paths(kind):
        code = main(
            ["compile", "--sessions", files["window"], "--surface", files["surface"],
             "--state-dir", files["state"], "--write", "--json"]
        )  # fmt: skip
        compiled = json.loads(capsys.readouterr().out)
        assert code == 0
        assert compiled["status"] == "compiled", compiled
        code = main(
            ["trial", "--sessions", files["held"], "--surface", files["surface"],
             "--state-dir", files["state"], "--json", "--engine", engine, "--jobs", "2"]
        )  # fmt: skip
        trial = json.loads(capsys.readouterr().out)
    artifact = json.loads((Path(files["state"]) / "compiled.json").read_text(encoding="utf-8"))
    assert artifact["actions"][0]["inputSchema"]["properties"]["mode"] == {"enum": ["a", "b"]}
    # Read as [0, 0] (before), both schemas refused the five calls (bothReject 5).
    assert trial["totals"]["bothAccept"] == 5, trial
    assert trial["totals"]["bothReject"] == 0
    assert trial["verdict"] == "clean"
    assert code == 0


FOREIGN_LINES = {
    # OpenAI chat: the arguments are a JSON string, decoded by the reader.
    "openai": [
        '{"role":"assistant","model":"gpt-4o","tool_calls":[{"id":"k1","type":"function",'
        '"function":{"name":"put","arguments":"{\\"xs\\":[-0,0],\\"n\\":-0}"}}]}',
        '{"role":"tool","tool_call_id":"k1","content":"ok"}',
    ],
    # Anthropic messages: the input is an object of the line itself.
    "anthropic": [
        '{"type":"message","role":"assistant","model":"claude-3-5-sonnet","content":'
        '[{"type":"tool_use","id":"u1","name":"put","input":{"xs":[-0,0],"n":-0}}]}',
        '{"role":"user","content":[{"type":"tool_result","tool_use_id":"u1","content":"ok"}]}',
    ],
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("session_format", sorted(FOREIGN_LINES))
def test_a_foreign_format_reads_as_its_converted_file(
    kind: str, session_format: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A foreign reader writes native lines as a JavaScript writer would (JSON.stringify
    # prints -0 as 0), so its calls are those of the file `convert` writes: the audit holds
    # 0 there, on every path (docs/decisions.md).
    from tests.formats_support import read

    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(FOREIGN_LINES[session_format]) + "\n", encoding="utf-8")
    out = tmp_path / "converted"
    with paths(kind):
        evidence, _ = read(path, session_format)
        argv = ["convert", "--sessions", str(path), "--format", session_format, "--out", str(out)]
        code = main(argv)
        capsys.readouterr()
        assert code == 0
        (converted,) = out.rglob("*.jsonl")
        again, _ = read(converted)
    assert b"-0" not in converted.read_bytes()
    found = [(call.ref, call.args) for call in evidence.audit_calls]
    assert found == [(call.ref, call.args) for call in again.audit_calls]
    assert [json.dumps(args) for _, args in found] == ['{"xs": [0, 0], "n": 0}']
