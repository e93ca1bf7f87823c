"""Every corpus command says what it skipped inside the session files: ``measure`` and
``status`` in their own output, the others in one warning line on stderr."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_entropy.cli.app import main

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
TRUNCATED = b'{"details":{"trace":{"kind":"pi-fabric.execution","version":1,"oper\n'


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def damaged(tmp_path: Path) -> Path:
    """The demo sessions with one truncated trace line appended to the first file."""
    sessions = tmp_path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    first = sorted(sessions.iterdir())[0]
    lines = len(first.read_bytes().splitlines())
    with first.open("ab") as handle:
        handle.write(TRUNCATED)
    return first.with_name(f"{first.name}:{lines + 1}")


def _commands(tmp_path: Path, artifact: Path) -> dict[str, list[str]]:
    return {
        "propose": [],
        "compile": ["--out", str(tmp_path / "compiled.json")],
        "trial": ["--artifact", str(artifact)],
        "pool": ["--out", str(tmp_path / "pool.json")],
    }


@pytest.mark.parametrize("json_output", [False, True], ids=["text", "json"])
def test_commands_without_diagnostics_warn_of_skipped_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, damaged: Path, json_output: bool
) -> None:
    surface = str(DEMO / "surface.json")
    artifact = tmp_path / "artifact.json"
    clean = ["--sessions", str(DEMO / "sessions"), "--surface", surface]
    assert run(capsys, "compile", *clean, "--out", str(artifact))[0] == 0
    where = f"{damaged.parent.name}/{damaged.name}"
    inputs = ["--sessions", str(damaged.parent), "--surface", surface]
    for command, extra in _commands(tmp_path, artifact).items():
        code, _, err = run(capsys, command, *inputs, *extra, *(["--json"] * json_output))
        assert code == 0, command
        (warning,) = [line for line in err.splitlines() if line.startswith("warning:")]
        assert "skipped inside the session files: 1 unusable lines" in warning, command
        assert f"{where}: malformed JSON" in warning, command
        code, _, err = run(capsys, command, *clean, *extra, *(["--json"] * json_output))
        assert (code, err) == (0, ""), command  # nothing skipped, nothing said


def test_measure_says_it_once_in_its_own_output(
    capsys: pytest.CaptureFixture[str], damaged: Path
) -> None:
    code, out, err = run(
        capsys,
        "measure",
        "--sessions",
        str(damaged.parent),
        "--surface",
        str(DEMO / "surface.json"),
    )
    assert (code, err) == (0, "")
    assert "skipped: 1 unusable lines" in out
    assert f"{damaged.name}: malformed JSON" in out
