"""Subprocess smoke tests: the installed entry points, as the README's Quickstart runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_quickstart_main_job() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_entropy",
            "measure",
            "--sessions",
            "corpora/demo/sessions",
            "--surface",
            "corpora/demo/surface.json",
            "--repairs",
            "corpora/demo/repairs.json",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("entropy score ")


def test_console_script_json() -> None:
    script = Path(sys.executable).with_name("pytest-entropy")
    result = subprocess.run(
        [str(script), "measure", "--sessions", "corpora/demo/sessions", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["reportHash"]) == 64
