"""``--entropy-strict``: an unreadable session file fails the gate; ``certify --strict``
refuses files corpus mode would pass over (item 7)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_entropy.cli.app import main

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"

pytest_plugins = ["pytester"]


def test_the_gate_fails_on_an_unreadable_file_only_when_strict(pytester: pytest.Pytester) -> None:
    sessions = pytester.path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    (sessions / "broken.jsonl.gz").write_bytes(b"not gzip\n")
    pytester.makepyfile("def test_ok():\n    pass\n")
    argv = ["-p", "no:cacheprovider", "--entropy-sessions", str(sessions)]
    argv += ["--entropy-max-score", "10"]
    counted = pytester.runpytest(*argv)
    assert counted.ret == 0
    strict = pytester.runpytest(*argv, "--entropy-strict")
    assert strict.ret != 0
    strict.stdout.fnmatch_lines(
        ["*--entropy-strict: 1 unreadable or unrecognised*broken.jsonl.gz*"]
    )


def test_certify_strict_refuses_unrecognised_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sessions = tmp_path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    (sessions / "notes.txt").write_text("not a session\n", encoding="utf-8")
    argv = ["certify", "--sessions", str(sessions), "--format", "json"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main([*argv, "--strict"]) == 1  # corpus mode failed: a failed check
    assert "strict: 1 unrecognised file(s)" in capsys.readouterr().out
