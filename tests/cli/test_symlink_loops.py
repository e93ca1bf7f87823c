"""A symlink loop in a session directory is skipped and counted; the rest is read (item 8)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_entropy.cli.app import main

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SURFACE = str(DEMO / "surface.json")


def looped_copy(tmp_path: Path) -> Path:
    sessions = tmp_path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    (sessions / "a.jsonl").symlink_to("b.jsonl")
    (sessions / "b.jsonl").symlink_to("a.jsonl")
    return sessions


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main([*argv, "--json"]) == 0
    result: dict[str, object] = json.loads(capsys.readouterr().out)
    return result


@pytest.mark.parametrize("session_format", ["auto", "fabric"])
def test_measure_reads_the_rest_and_counts_the_loop(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, session_format: str
) -> None:
    sessions = looped_copy(tmp_path)
    clean = run_json(capsys, "measure", "--sessions", str(DEMO / "sessions"), "--surface", SURFACE)
    looped = run_json(
        capsys, "measure", "--sessions", str(sessions), "--surface", SURFACE,
        "--format", session_format,
    )  # fmt: skip
    assert looped["report"] == clean["report"]
    diagnostics = looped["diagnostics"]
    assert isinstance(diagnostics, dict)
    assert diagnostics["unreadableFiles"] == 2
    assert any(
        "a.jsonl" in sample and "symbolic links" in sample for sample in diagnostics["samples"]
    )


@pytest.mark.parametrize("session_format", ["auto", "fabric"])
def test_status_reads_the_rest_and_shows_the_loop(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, session_format: str
) -> None:
    sessions = looped_copy(tmp_path)
    argv = ["status", "--sessions", str(sessions), "--surface", SURFACE, "--cwd", str(tmp_path)]
    result = run_json(capsys, *argv, "--format", session_format)
    corpus = result["corpus"]
    assert isinstance(corpus, dict)
    assert len(corpus["sessions"]) == 3  # the two that loop are counted below, not sessions
    assert len(corpus["files"]) == 5  # the window lists them, so a reader sees them
    assert result["diagnostics"]["unreadableFiles"] == 2  # type: ignore[index]
    assert main([*argv, "--format", session_format]) == 0
    text = capsys.readouterr().out
    assert "3 sessions" in text
    assert "2 unreadable files" in text
