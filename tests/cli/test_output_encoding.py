"""Never crash on an encoding: every command with a standard stream that cannot encode our
symbols (``PYTHONIOENCODING=ascii`` or ``cp1252``, a redirected Windows console) writes ASCII
stand-ins instead of failing with ``UnicodeEncodeError`` (issue 14)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.cli.commands import COMMAND_MODULES
from pytest_entropy.report.encoding import ascii_fallback, degrade_stream
from tests.cli.test_convert import pi_log

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "corpora" / "demo"
SESSIONS = str(DEMO / "sessions")
SURFACE = str(DEMO / "surface.json")
ENCODINGS = ("ascii", "cp1252")
SILENT = ("export", "export_artifact", "report")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Files the commands need: a compiled artifact, a saved --json output, a Pi log, a
    second surface with a loosened schema and a non-ASCII description."""
    root = tmp_path_factory.mktemp("encoding")
    assert main(["compile", "--sessions", SESSIONS, "--surface", SURFACE,
                 "--out", str(root / "artifact.json")]) == 0  # fmt: skip
    pi_log(root / "pi" / "a.jsonl", {"command": "ls → ✓"})
    surface = json.loads(Path(SURFACE).read_text(encoding="utf-8"))
    surface["actions"][0]["inputSchema"] = {"type": "object", "description": "naïve — ✓ ×"}
    (root / "after.json").write_text(json.dumps(surface, ensure_ascii=False), encoding="utf-8")
    saved = io.StringIO()
    with contextlib.redirect_stdout(saved):
        assert main(["measure", "--sessions", SESSIONS, "--surface", SURFACE, "--json"]) == 0
    (root / "measure.json").write_text(saved.getvalue(), encoding="utf-8")
    return root


def command_lines(root: Path) -> dict[str, list[list[str]]]:
    """At least one invocation of every command, with the output it is known for."""
    state = str(root / "state")
    artifact = str(root / "artifact.json")
    saved = str(root / "measure.json")
    return {
        "measure": [["measure", "--sessions", SESSIONS, "--surface", SURFACE],
                    ["measure", "--sessions", str(root / "pi")]],
        "status": [["status", "--sessions", SESSIONS, "--surface", SURFACE, "--state-dir", state]],
        "freedom": [["freedom", "--surface", SURFACE],
                    ["freedom", "--surface", str(root / "after.json")]],
        "propose": [["propose", "--sessions", SESSIONS, "--surface", SURFACE]],
        "compile": [["compile", "--sessions", SESSIONS, "--surface", SURFACE, "--state-dir", state,
                     "--write"]],
        "trial": [["trial", "--sessions", SESSIONS, "--surface", SURFACE, "--artifact", artifact]],
        "certify": [["certify"], ["certify", "--sessions", SESSIONS, "--surface", SURFACE],
                    ["certify", "--output-format", "markdown"]],
        "export": [["export", "--surface", str(root / "after.json"),
                    "--out", str(root / "x.json")]],
        "export_artifact": [["export-artifact", "--artifact", artifact,
                             "--out", str(root / "exported.json")]],
        "import_artifact": [["import", "--surface", SURFACE, "--state-dir", str(root / "peer"),
                             artifact]],
        "pool": [["pool", "--sessions", SESSIONS, "--out", str(root / "pool.json")]],
        "watch": [["watch", "--sessions", SESSIONS, "--surface", SURFACE, "--state-dir", state,
                   "--once", "--json"]],
        "convert": [["convert", "--sessions", str(root / "pi"), "--out", str(root / "converted")]],
        "diff": [["diff", SURFACE, str(root / "after.json")]],
        "lint": [["lint", "--surface", str(root / "after.json"), "--profile", "openai-strict"]],
        "report": [["report", "--from", saved, "--markdown", str(root / "m.md")]],
        "apply": [["apply", "--surface", SURFACE, "--artifact", artifact],
                  ["apply", "--surface", str(root / "after.json"), "--artifact", artifact,
                   "--patch"]],
        "config": [["config"], ["config", "--json"]],
        "proxy": [["proxy", "--state-dir", state, "--", sys.executable, "-c", "pass"]],
    }  # fmt: skip


@pytest.fixture
def stream_encoding(monkeypatch: pytest.MonkeyPatch) -> object:
    """Swap the standard streams for byte buffers of an encoding (set by the test)."""
    streams: dict[str, io.TextIOWrapper] = {}

    def use(encoding: str) -> dict[str, io.TextIOWrapper]:
        for name in ("stdout", "stderr"):
            streams[name] = io.TextIOWrapper(io.BytesIO(), encoding=encoding, newline="\n")
            monkeypatch.setattr(sys, name, streams[name])
        return streams

    return use


def test_every_command_is_covered() -> None:
    assert set(command_lines(Path("."))) == set(COMMAND_MODULES)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("command", COMMAND_MODULES)
def test_no_command_crashes_on_the_stream_encoding(
    command: str, encoding: str, workspace: Path, stream_encoding: object
) -> None:
    for argv in command_lines(workspace)[command]:
        streams = stream_encoding(encoding)  # type: ignore[operator]
        code = main(argv)
        for stream in streams.values():
            stream.flush()
        raw = {name: stream.buffer.getvalue() for name, stream in streams.items()}  # type: ignore[attr-defined]
        text = {name: value.decode(encoding) for name, value in raw.items()}
        assert code in (0, 1), (argv, text["stderr"])
        assert "Traceback" not in text["stderr"] and "internal error" not in text["stderr"]
        # export, export-artifact and report write files and may print nothing.
        assert text["stdout"] or text["stderr"] or command in SILENT


def test_stand_ins_keep_the_meaning() -> None:
    assert ascii_fallback("a · b → c — ✓ ✗ ×") == "a - b -> c -- ok x x"
    assert ascii_fallback("naïve") == "na?ve"
    stream = io.TextIOWrapper(io.BytesIO(), encoding="cp1252")
    degrade_stream(stream)
    stream.write("score → 0.5 · ✓ café")
    stream.flush()
    assert stream.buffer.getvalue().decode("cp1252") == "score -> 0.5 · ok café"  # type: ignore[attr-defined]
    utf8 = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    degrade_stream(utf8)
    assert utf8.errors == "strict"  # a stream that encodes everything is left alone


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_certify_and_freedom_in_a_real_process(encoding: str) -> None:
    """The issue's reproduction: ``certify`` and ``freedom`` under PYTHONIOENCODING."""
    env = {**os.environ, "PYTHONIOENCODING": encoding, "PYTHONPATH": str(REPO)}
    for argv in (["certify"], ["freedom", "--surface", SURFACE]):
        done = subprocess.run(
            [sys.executable, "-m", "pytest_entropy", *argv],
            env=env,
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr.decode(encoding, "replace")
        assert b"Traceback" not in done.stderr
        text = done.stdout.decode(encoding)  # what was written is text of that encoding
        if argv[0] == "freedom":
            # cp1252 has the middle dot; ASCII gets its stand-in.
            assert (" - mean " if encoding == "ascii" else " \u00b7 mean ") in text
