"""Subprocess smoke tests: the README's Quickstart command and the installed entry points."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def readme_command(marker: str) -> str:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index(f"<!-- {marker} -->")
    assert lines[start + 1] == "```sh"
    return lines[start + 2]


def test_quickstart_main_job_runs_as_written() -> None:
    # The README's first command installs, then runs the measurement: run that last step
    # with this environment's entry point and the README's exact arguments.
    command = readme_command("quickstart-run")
    step = command.split("&&")[-1].strip()
    program, *arguments = shlex.split(step)
    assert program.endswith("pytest-entropy")
    script = Path(sys.executable).with_name("pytest-entropy")
    result = subprocess.run(
        [str(script), *arguments], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("entropy score ")
    assert "report hash " in result.stdout


def test_readme_test_command_runs_the_suite_in_parallel() -> None:
    assert readme_command("quickstart-test").endswith("python -m pytest -n 2")


def test_module_entry_point_json() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_entropy",
            "measure",
            "--sessions",
            "corpora/demo/sessions",
            "--json",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["reportHash"]) == 64
