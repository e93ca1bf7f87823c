"""The outputs the user pages show are what the commands print: wherever a page of the
getting-started guide or the how-to guides runs ``pytest-entropy`` on the demo corpus in a
```sh block and shows a ```text block right after it, the command runs and prints every line
shown (``...`` stands for lines left out)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "docs" / "getting-started.md", *sorted((REPO / "docs" / "how-to").glob("*.md"))]
# A ```sh block, then (after one blank line) the ```text block that shows its output.
EXAMPLE = re.compile(
    r"^```sh\n(?P<command>.*?)\n```\n\n```text\n(?P<output>.*?)\n```$", re.M | re.S
)


def examples() -> list[tuple[str, str, str]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in EXAMPLE.finditer(text):
            command = match["command"].splitlines()[-1]  # the line before may install
            program, _, arguments = command.partition(" ")
            if program.endswith("pytest-entropy") and "corpora/demo" in arguments:
                found.append((page.relative_to(REPO).as_posix(), arguments, match["output"]))
    return found


def _timeless(line: str) -> str:
    return re.sub(r"\(\d+ms\)", "(Nms)", line)


def test_the_pages_show_outputs() -> None:
    pages = {page for page, _, _ in examples()}
    assert {"docs/getting-started.md", "docs/how-to/measure.md", "docs/how-to/status.md"} <= pages


@pytest.mark.parametrize(
    ("page", "arguments", "output"),
    examples(),
    ids=[f"{p}:{a.split()[0]}" for p, a, _ in examples()],
)
def test_the_shown_output_is_what_the_command_prints(
    page: str, arguments: str, output: str, tmp_path: Path
) -> None:
    (tmp_path / "corpora").symlink_to(REPO / "corpora")
    result = subprocess.run(
        [sys.executable, "-m", "pytest_entropy", *arguments.split()],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "NO_COLOR": "1"},
    )
    printed = [_timeless(line) for line in result.stdout.splitlines()]
    for line in output.splitlines():
        if line.strip() not in ("", "..."):
            assert _timeless(line) in printed, (page, line)
