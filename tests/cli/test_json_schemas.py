"""Every ``--json`` shape has a JSON Schema shipped in the package, and every command's
actual output on the demo corpus validates against it."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from pytest_entropy.cli.app import build_parser, main
from pytest_entropy.report.json_schemas import SCHEMA_NAMES, schema_for

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SESSIONS = str(DEMO / "sessions")
SURFACE = str(DEMO / "surface.json")
REPAIRS = str(DEMO / "repairs.json")
CORPUS = ["--sessions", SESSIONS, "--surface", SURFACE]


def _json_commands() -> set[str]:
    """The commands that print machine output (``--json`` or ``--output-format json``)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = set()
    for name, command in sub.choices.items():
        for action in command._actions:
            if "--json" in action.option_strings or (
                "--output-format" in action.option_strings and "json" in (action.choices or ())
            ):
                out.add(name)
    return out


def test_every_json_command_has_a_schema() -> None:
    assert _json_commands() == set(SCHEMA_NAMES)
    for name in SCHEMA_NAMES:
        schema = schema_for(name)
        Draft202012Validator.check_schema(schema)
        assert schema["$id"].endswith(f"/{name}.json")


def _validate(name: str, document: Any) -> None:
    errors = sorted(
        Draft202012Validator(schema_for(name)).iter_errors(document), key=lambda e: e.path
    )
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "no-agent"))
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], argv: list[str], codes: tuple[int, ...]) -> str:
    code = main(argv)
    captured = capsys.readouterr()
    assert code in codes, captured.err
    return captured.out


def _cases(tmp: Path) -> list[tuple[str, list[str], tuple[int, ...]]]:
    changed = json.loads(Path(SURFACE).read_text(encoding="utf-8"))
    changed["actions"][0]["inputSchema"].pop("additionalProperties", None)
    changed["actions"].pop()
    (tmp / "after.json").write_text(json.dumps(changed), encoding="utf-8")
    shutil.copytree(DEMO / "sessions", tmp / "live")
    return [
        ("measure", ["measure", *CORPUS, "--repairs", REPAIRS, "--json"], (0,)),
        ("status", ["status", *CORPUS, "--json"], (0,)),
        ("freedom", ["freedom", "--surface", SURFACE, "--json"], (0,)),
        ("propose", ["propose", *CORPUS, "--json"], (0,)),
        ("compile", ["compile", *CORPUS, "--repairs", REPAIRS, "--write", "--json"], (0,)),
        ("compile", ["compile", *CORPUS, "--repairs", REPAIRS, "--write", "--json"], (0,)),
        ("status", ["status", *CORPUS, "--json"], (0,)),  # now with a compiled artifact
        ("trial", ["trial", *CORPUS, "--json"], (0,)),
        ("certify", ["certify", *CORPUS, "--trial", "--output-format", "json"], (0,)),
        ("certify", ["certify", "--output-format", "json"], (0,)),
        ("export", ["export", "--surface", SURFACE, "--json"], (0,)),
        ("export-artifact", ["export-artifact", "--json"], (0,)),
        (
            "import",
            ["import", str(tmp / ".entropy" / "artifact.json"), "--surface", SURFACE, "--json"],
            (0,),
        ),
        (
            "pool",
            ["pool", "--sessions", SESSIONS, "--out", str(tmp / "pool.json"), "--json"],
            (0,),
        ),
        (
            "watch",
            [
                "watch",
                "--sessions",
                str(tmp / "live"),
                "--surface",
                SURFACE,
                "--once",
                "--json",
                "--state-dir",
                str(tmp / "watch-state"),
            ],
            (0,),
        ),
        (
            "convert",
            ["convert", "--sessions", SESSIONS, "--out", str(tmp / "out"), "--json"],
            (0,),
        ),
        ("diff", ["diff", SURFACE, str(tmp / "after.json"), "--json"], (1,)),
        ("lint", ["lint", "--surface", SURFACE, "--output-format", "json"], (0, 1)),
        ("config", ["config", "--json"], (0,)),
    ]


def test_every_commands_output_matches_its_schema(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = set()
    for name, argv, codes in _cases(workspace):
        out = _run(capsys, argv, codes)
        if name == "watch":
            lines = [json.loads(line) for line in out.splitlines()]
            assert lines[-1]["event"] == "tick"
            for line in lines:
                _validate(name, line)
        else:
            _validate(name, json.loads(out))
        seen.add(name)
    assert seen == set(SCHEMA_NAMES)


def test_a_schema_rejects_a_renamed_key(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = json.loads(_run(capsys, ["measure", *CORPUS, "--json"], (0,)))
    _validate("measure", document)
    document["report"]["entropyScore"] = document["report"].pop("score")
    errors = list(Draft202012Validator(schema_for("measure")).iter_errors(document))
    assert any("'score' is a required property" in error.message for error in errors)
