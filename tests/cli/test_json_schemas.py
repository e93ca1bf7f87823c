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
from tests.cli.test_empty_corpus import walked_corpus
from tests.cli.test_steering_cli import vetoed_corpus
from tests.sessions_support import write_native_sessions as write_sessions

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SESSIONS = str(DEMO / "sessions")
SURFACE = str(DEMO / "surface.json")
REPAIRS = str(DEMO / "repairs.json")
CORPUS = ["--sessions", SESSIONS, "--surface", SURFACE]
HELD_OUT = [  # calls the V2-CV-10 partial artifact refuses, one of them a secret-shaped value
    {
        "taskKey": "held",
        "operations": [
            {"ref": "mcp.report.render", "args": {"format": "docx"}, "outcome": "succeeded"},
            {"ref": "mcp.flaky.run", "args": {"mode": "sk-" + "a1B2" * 8}, "outcome": "failed"},
        ],
    }
]


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


def _opt_in_cases(tmp: Path) -> list[tuple[str, list[str], tuple[int, ...], tuple[str, ...]]]:
    """The opt-in flag combinations, each with the added keys its output must carry."""
    vetoed_sessions, vetoed_surface = vetoed_corpus(tmp)
    vetoed = ["--sessions", vetoed_sessions, "--surface", vetoed_surface]
    held = write_sessions(tmp / "held.jsonl", HELD_OUT)
    artifact = str(tmp / "partial.json")
    return [
        ("propose", ["propose", *CORPUS, "--explain", "--json"], (0,), ("explanations",)),
        (
            "freedom",
            ["freedom", "--surface", SURFACE, "--explain", "--json"],
            (0,),
            ("explanations",),
        ),
        (
            "compile",
            [
                "compile",
                *CORPUS,
                "--only",
                "enum-tighten",
                "--min-gain",
                "0.0001",
                "--explain",
                "--json",
            ],
            (0,),
            ("skipped", "explanations"),
        ),
        (
            "compile",
            [
                "compile",
                *CORPUS,
                "--exclude",
                "noise-quarantine",
                "--exclude",
                "sequence-fuse",  # this corpus proposes none: a warning
                "--partial",
                "--json",
            ],
            (0,),
            ("dropped", "skipped", "warnings"),
        ),
        ("compile", ["compile", *vetoed, "--explain", "--json"], (1,), ("explanations",)),
        (
            "compile",
            ["compile", *vetoed, "--partial", "--explain", "--out", artifact, "--json"],
            (0,),
            ("dropped", "explanations"),
        ),
        ("trial", ["trial", *CORPUS, "--explain", "--json"], (0,), ("explanations",)),
        (
            "trial",
            [
                "trial",
                "--sessions",
                held,
                "--surface",
                vetoed_surface,
                "--artifact",
                artifact,
                "--explain",
                "--redact-values",
                "--json",
            ],
            (1,),
            ("explanations",),
        ),
        (
            "measure",
            ["measure", "--sessions", str(walked_corpus(tmp)), "--json"],
            (0,),
            ("diagnostics",),
        ),
    ]


def test_opt_in_keys_match_their_schemas(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``dropped``, ``skipped``, ``explanations`` and the directory diagnostics, from the
    flags that add them, validate against the shipped schemas."""
    shown: dict[str, list[Any]] = {}
    for name, argv, codes, keys in _opt_in_cases(workspace):
        document = json.loads(_run(capsys, argv, codes))
        _validate(name, document)
        for key in keys:
            assert key in document, (argv, sorted(document))
            shown.setdefault(key, []).extend(
                document[key] if isinstance(document[key], list) else [document[key]]
            )
    # Every added shape was seen with content, not only as an empty list.
    assert {"dropped", "skipped", "explanations", "warnings"} <= {
        k for k, rows in shown.items() if rows
    }
    trial_rows = [row for row in shown["explanations"] if "trialClass" in row]
    assert any(row["examples"] for row in trial_rows)
    walked = shown["diagnostics"][0]
    assert walked["unrecognizedNames"] and walked["surfaceFiles"] >= 1
    assert walked["unreadableNames"] == [] and walked["companionFiles"] == 0
    for name in ("compile", "propose", "freedom", "trial"):
        assert "explanations" in schema_for(name)["properties"]
    for name in ("measure", "convert", "status"):
        properties = schema_for(name)["$defs"]["diagnostics"]["properties"]
        assert {"unreadableNames", "unrecognizedNames", "surfaceFiles", "companionFiles"} <= set(
            properties
        )
