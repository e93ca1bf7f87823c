"""The console script's entry point (issue 32): ``main``'s run, then the survivors frozen."""

from __future__ import annotations

import gc
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from pytest_entropy import cli

REPO = Path(__file__).resolve().parents[2]


def test_the_console_script_is_console_main() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["scripts"] == {"pytest-entropy": "pytest_entropy.cli:console_main"}
    assert "console_main" in cli.__all__


@pytest.mark.parametrize(("argv", "status"), [(["--version"], 0), (["no-such-command"], 2)])
def test_console_main_returns_main_s_status_and_freezes(
    argv: list[str],
    status: int,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(sys, "argv", ["pytest-entropy", *argv])
    assert cli.main() == status
    capsys.readouterr()
    assert gc.get_freeze_count() == 0
    try:
        assert cli.console_main() == status
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    out, err = capsys.readouterr()
    assert (out if status == 0 else err).startswith("pytest-entropy")


def test_python_m_runs_the_console_entry(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest_entropy", "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("pytest-entropy ")
