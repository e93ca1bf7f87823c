"""``--sessions DIR`` with a space: pytest chooses its rootdir before any plugin's options
exist, so DIR counts as a test path there and a corpus outside the project becomes the
rootdir (the project's configuration and ratchet baseline unread). The plugin says so."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"


def _run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(DEMO / "sessions", tmp_path / "corpus" / "sessions")
    mine = tmp_path / "myproj"
    (mine / "tests").mkdir(parents=True)
    (mine / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    (mine / "tests" / "test_one.py").write_text("def test_one():\n    pass\n", encoding="utf-8")
    return mine


def test_a_space_separated_corpus_outside_the_project_is_warned_about(project: Path) -> None:
    spaced = _run(project, "--sessions", "../corpus/sessions", "--entropy-max-score", "99")
    assert spaced.returncode == 0, spaced.stdout + spaced.stderr
    assert "PytestConfigWarning" in spaced.stdout
    assert "--sessions=../corpus/sessions" in spaced.stdout
    assert str(project / "pyproject.toml") in spaced.stdout


def test_the_equals_spelling_reads_the_project_and_warns_of_nothing(project: Path) -> None:
    joined = _run(project, "--sessions=../corpus/sessions", "--entropy-max-score", "99")
    assert joined.returncode == 0, joined.stdout + joined.stderr
    assert "configfile: pyproject.toml" in joined.stdout
    assert "PytestConfigWarning" not in joined.stdout
