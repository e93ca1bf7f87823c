"""propose, compile, pool and trial give the same bytes with the Rust core and without it
(``use_native_core``): stdout and every file written, on the demo corpus, on a corpus of
hostile names and on the V2-CV-10 ratchet corpus (audits, quarantines, enum tightenings).
The read really takes the native path when the core is built (the tallies are asked)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core import native_core
from pytest_entropy.ingest import native_tallies
from tests.cli.test_compiler_cli import REPAIRS, SESSIONS, SURFACE, ratchet_files
from tests.hostile_support import SAMPLES, hostile_corpus
from tests.native_core_support import native_core_module


def _run(
    capsys: pytest.CaptureFixture[str], out: Path, argv: list[str], native: bool
) -> tuple[int, str, dict[str, bytes]]:
    previous = native_core.use_native_core(native)
    try:
        code = main(argv)
    finally:
        native_core.use_native_core(previous)
    printed = capsys.readouterr().out.replace(str(out), "<out>")
    files = {path.name: path.read_bytes() for path in sorted(out.iterdir())}
    return code, printed, files


def _artifact(
    capsys: pytest.CaptureFixture[str], path: Path, sessions: str, more: list[str]
) -> Path:
    """The artifact the plain compile writes (once), for the trial to replay."""
    if not path.exists():
        previous = native_core.use_native_core(False)
        try:
            code = main(["compile", "--sessions", sessions, *more, "--out", str(path)])
        finally:
            native_core.use_native_core(previous)
        capsys.readouterr()
        assert code == 0 and path.exists()
    return path


def _corpora(tmp_path: Path) -> list[tuple[str, str, list[str]]]:
    hostile = hostile_corpus(tmp_path / "hostile", SAMPLES[0] + SAMPLES[4])
    sessions, surface, repairs = ratchet_files(tmp_path)
    return [
        ("demo", SESSIONS, ["--surface", SURFACE, "--repairs", REPAIRS]),
        ("hostile", str(hostile.sessions), ["--surface", str(hostile.surface)]),
        ("ratchet", sessions, ["--surface", surface, "--repairs", repairs]),
    ]


@pytest.mark.parametrize("command", ["propose", "compile", "pool", "trial"])
def test_the_same_bytes_with_and_without_the_core(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    native_core_module()
    if not native_core.native_core_enabled():
        pytest.skip("PYTEST_ENTROPY_PURE=1: this run is the plain path's")
    asked: list[Any] = []
    original = native_tallies.NativeTallies.ask

    def ask(self: native_tallies.NativeTallies, scanner: Any, native: Any) -> None:
        asked.append(self)
        original(self, scanner, native)

    monkeypatch.setattr(native_tallies.NativeTallies, "ask", ask)
    for name, sessions, more in _corpora(tmp_path):
        results = []
        for native in (True, False):
            out = tmp_path / f"{name}-{command}-{native}"
            out.mkdir()
            argv = [command, "--sessions", sessions, *more, "--json"]
            if command == "compile":
                argv += ["--out", str(out / "compiled.json")]
            elif command == "pool":
                argv = [command, "--sessions", sessions, "--surface", more[1], "--json"]
                argv += ["--out", str(out / "pool.json")]
            elif command == "trial":
                artifact = _artifact(capsys, tmp_path / f"{name}-artifact.json", sessions, more)
                argv = [command, "--sessions", sessions, "--surface", more[1], "--json"]
                argv += ["--artifact", str(artifact)]
            results.append(_run(capsys, out, argv, native))
        assert results[0] == results[1], name
        assert results[0][0] in (0, 1), name
        json.loads(results[0][1])  # the output is the command's JSON
    assert asked, "the Rust core was never asked to gather anything"
