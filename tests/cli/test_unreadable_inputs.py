"""Unreadable inputs fail closed: a named one is exit 2; one inside a directory is counted,
and with ``--strict`` (or ``strict = true`` in ``[tool.entropy]``) exit 2 (item 7)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_entropy.cli.app import main

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SURFACE = str(DEMO / "surface.json")
# Running as root, permissions cannot make a file unreadable; a gzip name over bytes that
# are not gzip fails the read the same way (OSError).
NOT_GZIP = b"this is not gzip data\n"


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    directory = tmp_path / "sessions"
    shutil.copytree(DEMO / "sessions", directory)
    (directory / "broken.jsonl.gz").write_bytes(NOT_GZIP)
    return directory


def test_a_named_unreadable_file_is_exit_2(
    capsys: pytest.CaptureFixture[str], sessions: Path
) -> None:
    named = str(sessions / "broken.jsonl.gz")
    for argv in (
        ["measure", "--sessions", named, "--surface", SURFACE],
        ["measure", "--sessions", named, "--surface", SURFACE, "--baseline", str(sessions / "b")],
        ["propose", "--sessions", named, "--surface", SURFACE],
        ["compile", "--sessions", named, "--surface", SURFACE],
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert named in err
        assert "cannot read the session file" in err


def test_a_directory_counts_it_and_strict_fails(
    capsys: pytest.CaptureFixture[str], sessions: Path, tmp_path: Path
) -> None:
    base = ["--sessions", str(sessions), "--surface", SURFACE]
    assert main(["measure", *base, "--json"]) == 0
    diagnostics = json.loads(capsys.readouterr().out)["diagnostics"]
    assert diagnostics["unreadableFiles"] == 1
    state = tmp_path / "state"
    commands = [
        ["measure", *base],
        ["propose", *base],
        ["compile", *base, "--write", "--state-dir", str(state)],
        ["pool", "--sessions", str(sessions), "--out", str(tmp_path / "pool.json")],
        ["status", *base, "--cwd", str(tmp_path)],
        ["watch", "--once", *base, "--state-dir", str(state), "--cwd", str(tmp_path)],
    ]
    for argv in commands:
        assert main([*argv, "--strict"]) == 2, argv
        captured = capsys.readouterr()
        assert "broken.jsonl.gz" in captured.err + captured.out, argv
    assert not state.exists()  # nothing was written
    assert not (tmp_path / "pool.json").exists()


def test_strict_from_the_project_configuration(
    capsys: pytest.CaptureFixture[str],
    sessions: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.entropy]\nstrict = true\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["measure", "--sessions", str(sessions), "--surface", SURFACE]) == 2
    assert "--strict: 1 unreadable" in capsys.readouterr().err
    shutil.copytree(DEMO / "sessions", tmp_path / "clean")
    assert main(["measure", "--sessions", str(tmp_path / "clean"), "--surface", SURFACE]) == 0
