"""The status display's compiled and review lines (spec §4.5), read-only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.status import format_compiled_line, format_review_line

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SESSIONS = str(DEMO / "sessions")
SURFACE = str(DEMO / "surface.json")


def status(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code = main(["status", "--sessions", SESSIONS, *argv, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_no_artifact_and_no_review(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    result = status(capsys, "--surface", SURFACE, "--state-dir", str(tmp_path))
    assert result["lines"][1] == "compiled: none"
    assert result["lines"][2] == "review: none"


def test_after_a_compile_the_display_uses_the_effective_surface(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert (
        main(
            [
                "compile",
                "--sessions",
                SESSIONS,
                "--surface",
                SURFACE,
                "--state-dir",
                str(tmp_path),
                "--write",
            ]
        )
        == 0
    )
    capsys.readouterr()
    before_pool = (tmp_path / "observation-pool.json").read_bytes()
    result = status(capsys, "--surface", SURFACE, "--state-dir", str(tmp_path))
    assert result["lines"][0].endswith("· 6 actions")  # the quarantined tool is hidden
    assert result["lines"][1].startswith(
        "compiled: v2 · 1 tightened · 1 quarantined · 2 applied · gate pass ("
    )
    # Read-only: the pool is merged in memory for the review line, never saved.
    assert (tmp_path / "observation-pool.json").read_bytes() == before_pool


def test_damage_shows_on_the_display(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "compiled.json").write_text("{ nope", encoding="utf-8")
    (tmp_path / "observation-pool.json").write_text("{}", encoding="utf-8")
    result = status(capsys, "--surface", SURFACE, "--state-dir", str(tmp_path))
    assert result["lines"][1] == "compiled: unavailable — compiled surface is malformed JSON"
    assert result["lines"][2] == "review: unavailable — observation pool is invalid"


def test_review_suggestions_appear(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    surface = json.loads(Path(SURFACE).read_text(encoding="utf-8"))
    for action in surface["actions"]:
        if action["ref"] == "mcp.report.render":
            action["inputSchema"]["properties"]["format"] = {
                "type": "string",
                "x-fabric-enum-candidate": True,
            }
    annotated = tmp_path / "surface.json"
    annotated.write_text(json.dumps(surface), encoding="utf-8")
    result = status(capsys, "--surface", str(annotated), "--state-dir", str(tmp_path / "state"))
    assert result["lines"][2].startswith(
        "review: 1 suggestion · declare-enum mcp.report.render.format (pdf, html"
    )
    assert [r["kind"] for r in result["review"]] == ["declare-enum"]


def test_line_formatters() -> None:
    artifact = {
        "metricVersion": 2,
        "actions": [],
        "quarantined": [1],
        "applied": [],
        "gate": {"passed": False, "beforeScore": 0.5, "afterScore": 0.0078125},
    }
    assert format_compiled_line(artifact, None) == (
        "compiled: v2 · 0 tightened · 1 quarantined · 0 applied ·"
        " gate REJECTED (0.500000 → 0.007813)"
    )
    review = [{"kind": "sequence-fuse", "sequence": ["a", "b", "c"], "occurrences": 3}] * 6
    assert format_review_line(review).endswith(" · +2 more")
    assert format_review_line([], has_window_evidence=False) == "review: no window evidence"
    assert format_review_line(None) == "review: unavailable"


def test_a_session_file_is_a_window_of_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # `status --sessions FILE` said "sessions directory not found"; it reads the file as
    # `measure --sessions FILE` does, as a directory holding only that file would be read.
    session = DEMO / "sessions" / "2026-01-07-notes-cleanup.jsonl"
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / session.name).write_bytes(session.read_bytes())
    common = ["--surface", SURFACE, "--state-dir", str(tmp_path / "state")]
    code = main(["status", "--sessions", str(session), *common])
    from_file = capsys.readouterr()
    assert (code, from_file.err) == (0, "")
    assert main(["status", "--sessions", str(alone), *common]) == 0
    assert capsys.readouterr().out == from_file.out
    assert "session entropy (observed): 1 sessions · latest 7 ops" in from_file.out
    assert main(["status", "--sessions", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl: sessions directory not found" in capsys.readouterr().err
