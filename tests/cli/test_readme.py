"""The README is for users (issue 32, item 4): under 150 lines, install routes on the first
screen, a ``def test_...`` that runs verbatim and fails on a loosened schema, a CLI example
whose output is what the command prints, and links that lead somewhere."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")

pytest_plugins = ["pytester"]


def fenced_blocks(language: str) -> list[str]:
    """The bodies of the README's ```LANGUAGE fences, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```$", README, re.M | re.S)


def user_example() -> str:
    """What .ci/run runs from a fresh wheel: the first ```python block with a ``def test_``."""
    return next(block for block in fenced_blocks("python") if "def test_" in block)


def test_the_readme_is_short() -> None:
    assert len(README.splitlines()) < 150


def test_the_first_screen_says_what_and_how_to_install() -> None:
    first_screen = "\n".join(README.splitlines()[:30])
    assert "pip install pytest-entropy" in first_screen
    assert "once the package is published" in first_screen
    assert "pip wheel" in first_screen and "git+https://" in first_screen
    assert "(docs/install.md)" in first_screen


def test_the_user_example_passes_verbatim(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_readme_example=user_example())
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_the_user_example_fails_when_the_schema_is_loosened(pytester: pytest.Pytester) -> None:
    example = user_example()
    served = re.compile(r"^(\s+served = notes_tools\().*(\)\s*)$", re.M)
    assert served.search(example), "the example no longer builds a served surface"
    loosened = served.sub(r'\1{"type": "number"}\2', example)
    pytester.makepyfile(test_readme_example=loosened)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    # The README names what the failure says.
    for claimed in ("search_notes:limit: maximum (50 → null)", 'type ("integer" → "number")'):
        assert claimed in README
        result.stdout.fnmatch_lines([f"*{claimed}*"])


def test_the_cli_example_output_is_what_the_command_prints(tmp_path: Path) -> None:
    after = README.split("## On the command line", 1)[1]
    command = re.search(r"^```sh\n(pytest-entropy .*)\n```$", after, re.M)
    assert command is not None
    shown = after.split("<!-- cli-example-output -->\n```text\n", 1)[1].split("\n```", 1)[0]
    (tmp_path / "corpora").symlink_to(REPO / "corpora")
    words = command.group(1).split()
    assert words[0] == "pytest-entropy"
    result = subprocess.run(
        [sys.executable, "-m", "pytest_entropy", *words[1:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "NO_COLOR": "1"},
    )
    assert result.returncode == 0, result.stderr

    # The compile notice times itself: the milliseconds differ from run to run.
    def timeless(text: str) -> str:
        return re.sub(r"\(\d+ms\)", "(Nms)", text.strip())

    assert timeless(result.stdout) == timeless(shown)
    assert (tmp_path / "compiled.json").is_file()


def test_every_relative_link_leads_to_a_file() -> None:
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    relative = [target for target in targets if "://" not in target]
    assert relative
    for target in relative:
        assert (REPO / target).exists(), target


def test_the_quickstart_keeps_its_two_commands() -> None:
    quickstart = README.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    assert quickstart.count("```sh\n") == 2
    assert "<!-- quickstart-run -->\n```sh\n" in quickstart
    assert "<!-- quickstart-test -->\n```sh\n" in quickstart
