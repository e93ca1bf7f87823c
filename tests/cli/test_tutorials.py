"""The two tutorials of the docs site do what they say: the MCP server author's three tests
pass on the demo data, then fail on the loosening the page describes with the message it
shows; the CI tutorial's commands print the lines it shows."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "corpora" / "demo"
TUTORIALS = REPO / "docs" / "tutorials"

pytest_plugins = ["pytester"]


def _blocks(page: str, language: str) -> list[str]:
    text = (TUTORIALS / page).read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.M | re.S)


def _shown_lines(block: str) -> list[str]:
    """The lines of an output block the page shows (its ``...`` elisions left out)."""
    return [line for line in block.splitlines() if line.strip() not in ("", "...")]


def test_the_three_tests_pass_then_catch_the_loosening(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)  # the first run writes the baseline, as locally
    (code,) = _blocks("mcp-server-authors.md", "python")
    assert code.startswith("# tests/test_entropy.py\n")
    (pytester.path / "tools").mkdir()
    shutil.copy(DEMO / "surface.json", pytester.path / "tools" / "surface.json")
    shutil.copytree(DEMO / "sessions", pytester.path / "tests" / "sessions")
    (pytester.path / "tests" / "test_entropy.py").write_text(code, encoding="utf-8")

    first = pytester.runpytest_subprocess("tests/test_entropy.py", "-p", "no:cacheprovider")
    first.assert_outcomes(passed=3)
    outputs = _blocks("mcp-server-authors.md", "text")
    created = [line for line in _shown_lines(outputs[0]) if "baseline created" in line]
    assert len(created) == 2
    for line in created:
        first.stdout.fnmatch_lines([f"*{line.split(' in ')[0]}*"])
    assert (pytester.path / "entropy-baseline.json").is_file()

    # Step 4 of the page: mcp.notes.search's limit from integer to number.
    surface_path = pytester.path / "tools" / "surface.json"
    surface = json.loads(surface_path.read_text(encoding="utf-8"))
    (search,) = [action for action in surface["actions"] if action["ref"] == "mcp.notes.search"]
    assert search["inputSchema"]["properties"]["limit"] == {"type": "integer"}
    search["inputSchema"]["properties"]["limit"] = {"type": "number"}
    surface_path.write_text(json.dumps(surface), encoding="utf-8")
    second = pytester.runpytest_subprocess("tests/test_entropy.py", "-p", "no:cacheprovider")
    second.assert_outcomes(passed=2, failed=1)
    shown = _shown_lines(outputs[1])
    loosened = next(line for line in shown if "loosened:" in line)
    second.stdout.fnmatch_lines([f"*{loosened.split('E ', 1)[1].strip()}*"])
    second.stdout.fnmatch_lines(["FAILED tests/test_entropy.py::test_no_schema_is_loosened*"])


def _command(block: str) -> list[str]:
    words = block.replace("\\\n", " ").split()
    assert words[0] == "pytest-entropy"
    return words[1:]


def test_the_ci_tutorial_prints_what_it_shows(tmp_path: Path) -> None:
    commands = _blocks("ci-certify.md", "sh")
    outputs = _blocks("ci-certify.md", "text")
    (tmp_path / "corpora").symlink_to(REPO / "corpora")
    environment = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    for command, output in zip(commands[:2], outputs[:2], strict=True):
        result = subprocess.run(
            [sys.executable, "-m", "pytest_entropy", *_command(command)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
            env=environment,
        )
        assert result.returncode == 0, result.stderr
        printed = re.sub(r"\(\d+ms\)", "(Nms)", result.stdout).splitlines()
        for line in _shown_lines(output):
            assert re.sub(r"\(\d+ms\)", "(Nms)", line) in printed, line
