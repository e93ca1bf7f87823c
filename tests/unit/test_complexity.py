"""The pipeline's one branch point and the trace guard stay readable (issue 28, item 2):
every function of ``run/corpus.py`` (``_read_one`` among them, once a switchboard of
complexity 65) and of ``ingest/guard.py`` (``_guard``, once 36) stays below cyclomatic
complexity 15, as ruff's mccabe rule (C901) measures it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FILES = ("pytest_entropy/run/corpus.py", "pytest_entropy/ingest/guard.py")


def test_the_branch_point_and_the_guard_stay_below_complexity_15() -> None:
    pytest.importorskip("ruff", reason="ruff (the test extra) measures the complexity")
    for name, function in zip(FILES, ("def _read_one(", "def _guard("), strict=True):
        assert function in (REPO / name).read_text(encoding="utf-8"), f"{function} in {name}"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--isolated",
            "--select",
            "C901",
            "--config",
            "lint.mccabe.max-complexity = 14",
            *FILES,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
