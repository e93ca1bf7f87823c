"""The compiler commands read foreign formats directly, as convert + native reads them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from tests.unit.test_readers import jsonl, pi_assistant, pi_result, pi_user

READ = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "mode": {"type": "string", "enum": ["text", "hex", "raw", "lines"]},
    },
    "required": ["path"],
    "additionalProperties": False,
}


def pi_corpus(tmp_path: Path) -> tuple[Path, Path]:
    records: list[Any] = [{"type": "session", "id": "s", "cwd": "/w"}, pi_user()]
    for index in range(10):
        call = f"c{index}"
        mode = "text" if index < 8 else "hex"
        records += [
            pi_assistant((call, "read", {"path": f"f{index}", "mode": mode})),
            pi_result(call),
        ]
    sessions = jsonl(tmp_path / "sessions" / "pi.jsonl", *records)
    tools = tmp_path / "tools.json"
    tools.write_text(
        json.dumps([{"name": "read", "description": "read a file", "parameters": READ}]),
        encoding="utf-8",
    )
    return sessions, tools


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_propose_and_compile_on_pi_sessions_equal_the_converted_corpus(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sessions, tools = pi_corpus(tmp_path)
    foreign = [
        "--sessions",
        str(sessions),
        "--format",
        "pi",
        "--surface",
        str(tools),
        "--surface-format",
        "pi",
    ]
    proposed = run_json(capsys, "propose", *foreign)
    assert [(p["kind"], p["ref"], p["values"]) for p in proposed["proposals"]] == [
        ("enum-tighten", "pi.read", ["text", "hex"])
    ]
    compiled = run_json(capsys, "compile", *foreign)
    assert compiled["status"] == "compiled"
    # The same evidence through convert: identical report and artifact.
    assert (
        main(
            [
                "convert",
                "--format",
                "pi",
                "--sessions",
                str(sessions),
                "--out",
                str(tmp_path / "native"),
                "--surface",
                str(tools),
                "--surface-format",
                "pi",
            ]
        )
        == 0
    )
    capsys.readouterr()
    snapshot = tmp_path / "snapshot.json"
    assert (
        main(["export", "--surface", str(tools), "--surface-format", "pi", "--out", str(snapshot)])
        == 0
    )
    capsys.readouterr()
    native = run_json(
        capsys, "compile", "--sessions", str(tmp_path / "native"), "--surface", str(snapshot)
    )
    assert native["artifact"]["actions"] == compiled["artifact"]["actions"]
    assert native["report"]["totals"] == compiled["report"]["totals"]
    pooled = run_json(
        capsys,
        "pool",
        "--sessions",
        str(sessions),
        "--format",
        "pi",
        "--out",
        str(tmp_path / "pool.json"),
    )
    assert pooled["mergedSessions"] == 1
