"""Every place a recorded call is judged decides as TypeBox 1.3.8 does (issue 27): the trial,
the compile gate's replay and ``validate_call``, on every implementation path; and repair rows
the reference counts are counted, with a note outside the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli import main
from pytest_entropy.core.enforce import validate_call
from tests.native_support import paths
from tests.sessions_support import write_native_sessions

BIG = 9007199254740992  # 2**53: 9007199254740993 is the same double


def _trace(value: int) -> dict[str, Any]:
    call = {"ref": "t.pick", "args": {"n": value}, "outcome": "succeeded"}
    return {"taskKey": "pick", "operations": [call]}


def _corpus(tmp_path: Path) -> dict[str, str]:
    # The declared enum holds 2**53 + 1 and 2**53 (one double, two JSON texts); the window
    # calls 2**53 and 1, so the compile tightens the enum to [1, 2**53]; the held-out calls
    # send 2**53 + 1, which TypeBox reads as 2**53: accepted by both schemas.
    schema = {"type": "object", "properties": {"n": {"enum": [BIG + 1, BIG, 1, 2]}}}
    surface = {"version": 1, "actions": [{"ref": "t.pick", "inputSchema": schema}]}
    (tmp_path / "surface.json").write_text(json.dumps(surface), encoding="utf-8")
    window = [_trace(BIG if i % 2 else 1) for i in range(12)]
    held = [_trace(BIG + 1) for _ in range(5)]
    for name, traces in (("window", window), ("held", held)):
        (tmp_path / name).mkdir()
        write_native_sessions(tmp_path / name / "s.jsonl", traces)
    return {
        "surface": str(tmp_path / "surface.json"),
        "window": str(tmp_path / "window"),
        "held": str(tmp_path / "held"),
        "state": str(tmp_path / "state"),
    }


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main([*argv, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


@pytest.mark.parametrize("kind", ["native", "plain"])
def test_the_trial_reads_numbers_as_doubles(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = _corpus(tmp_path)
    with paths(kind):
        code, compiled = _json(
            capsys, "compile", "--sessions", files["window"], "--surface", files["surface"],
            "--state-dir", files["state"], "--write",
        )  # fmt: skip
        assert code == 0
        assert compiled["status"] == "compiled"
        code, trial = _json(
            capsys, "trial", "--sessions", files["held"], "--surface", files["surface"],
            "--state-dir", files["state"],
        )  # fmt: skip
    artifact = json.loads((Path(files["state"]) / "compiled.json").read_text(encoding="utf-8"))
    assert artifact["actions"][0]["inputSchema"]["properties"]["n"] == {"enum": [1, BIG]}
    # python-jsonschema called these 5 calls tightening costs (verdict costly).
    assert trial["verdict"] == "clean", trial
    assert trial["totals"]["tighteningCost"] == 0
    assert trial["totals"]["bothAccept"] == 5
    assert code == 0


def test_the_compile_gate_replays_with_typebox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The window holds audited calls TypeBox accepts against the tightened enum and
    # python-jsonschema refused (2**53 + 1 beside 2**53): the gate still passes.
    files = _corpus(tmp_path)
    traces = [_trace(value) for value in [BIG, 1] * 6 + [BIG + 1]]
    write_native_sessions(Path(files["window"]) / "s.jsonl", traces)
    code, compiled = _json(
        capsys, "compile", "--sessions", files["window"], "--surface", files["surface"]
    )
    assert code == 0
    assert compiled["status"] == "compiled", compiled


def test_validate_call_decides_with_typebox() -> None:
    surface = {
        "version": 1,
        "actions": [
            {
                "ref": "t.send",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "to": {"type": "string", "format": "email"},
                        "tag": {"type": "string", "maxLength": 1},
                        "n": {"enum": [BIG, 1]},
                    },
                },
            }
        ],
    }
    assert validate_call("t.send", {"tag": "e\u0301", "n": BIG + 1}, surface, None).accepted
    refused = validate_call("t.send", {"to": "\u00e9@x.com"}, surface, None)
    assert not refused.accepted
    assert refused.stage == "validate"
    assert refused.message  # TypeBox refuses what python-jsonschema's registry let through


def test_repair_rows_the_reference_counts_are_lexicon_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = _corpus(tmp_path)
    repairs = tmp_path / "repairs.json"
    rows = [
        {"kind": "keyAlias", "ref": "t.pick"},
        {},
        {"kind": "keyAlias", "ref": "t.pick", "from": "", "to": "n"},
    ]
    repairs.write_text(json.dumps(rows), encoding="utf-8")
    code = main(
        ["measure", "--sessions", files["window"], "--surface", files["surface"],
         "--repairs", str(repairs), "--json"]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    report = json.loads(captured.out)["report"]
    assert report["lexiconRows"] == 3
    assert [ref["lexiconRows"] for ref in report["refs"] if ref["ref"] == "t.pick"] == [2]
    notes = [line for line in captured.err.splitlines() if "repair row" in line]
    assert [line.split("repair row ")[1].split(":")[0] for line in notes] == ["0", "1", "2"]


@pytest.mark.parametrize("text", ["{ nope", '["row"]', "[null]", '{"repairs": 5}'])
def test_a_repair_file_that_is_not_a_list_of_objects_still_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    files = _corpus(tmp_path)
    repairs = tmp_path / "repairs.json"
    repairs.write_text(text, encoding="utf-8")
    code = main(
        ["measure", "--sessions", files["window"], "--surface", files["surface"],
         "--repairs", str(repairs)]
    )  # fmt: skip
    assert code == 2
    assert str(repairs) in capsys.readouterr().err
