"""The terminal: colour and readable numbers on a TTY only, a progress bar on standard error
only, and output that is not a terminal unchanged."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli import main
from pytest_entropy.cli.terminal import (
    TerminalProgress,
    colour_wanted,
    human_number,
    humanize,
    style_line,
)
from pytest_entropy.run.corpus import CorpusPlan, EngineOptions, read_corpus, source_files
from pytest_entropy.sources.locate import expand_session_sources

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "corpora" / "demo"
DEMO_ARGS = ["--sessions", str(DEMO / "sessions"), "--surface", str(DEMO / "surface.json")]
ESC = "\x1b["


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (-0.012712000000000001, "-0.012712"),
        (-0.00002199999999999945, "-0.000022"),
        (0.1 + 0.2, "0.3"),
        (123456.78901234, "123457"),
        (2.5, "2.5"),
        (0.0, "0"),
        (-1e-20, "0"),
    ],
)
def test_numbers_read_the_way_a_person_reads_them(value: float, text: str) -> None:
    assert human_number(value) == text


def test_only_long_decimals_are_rounded() -> None:
    line = "trial: clean · score 0.406227 → 0.393515 (delta -0.012712000000000001) · v1.2.3"
    assert humanize(line) == "trial: clean · score 0.406227 → 0.393515 (delta -0.012712) · v1.2.3"
    digest = "report hash 6f87af12910ca6712fa220a513dfd4a455a816c7298fde3f41e67e790217b0c1"
    assert humanize(digest) == digest


def test_lines_are_coloured_by_what_they_say() -> None:
    assert style_line("FAIL: 3 held-out calls rejected").startswith("\x1b[1;31m")
    assert style_line("warning tool-undescribed  x").startswith("\x1b[33m")
    assert style_line("models:").startswith("\x1b[1m")
    assert style_line("  pi.read  score 3.225000") == "  pi.read  score 3.225000"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_follows_no_color_term_and_the_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    assert colour_wanted(_Tty())
    assert not colour_wanted(io.StringIO())  # not a terminal
    assert not colour_wanted(_Tty(), no_color=True)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_wanted(_Tty())
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert not colour_wanted(_Tty())
    monkeypatch.delenv("TERM")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert colour_wanted(io.StringIO())


def _run(args: list[str], env: dict[str, str]) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "pytest_entropy", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        check=False,
    )
    assert result.returncode in (0, 1), result.stderr
    return result.stdout


def _clean_env() -> dict[str, str]:
    return {"NO_COLOR": "", "FORCE_COLOR": "", "TERM": "xterm"}


@pytest.mark.parametrize("command", ["measure", "propose"])
def test_output_that_is_not_a_terminal_is_unchanged_and_colour_is_only_added(
    command: str,
) -> None:
    plain = _run([command, *DEMO_ARGS], _clean_env())
    assert ESC not in plain
    assert _run([command, *DEMO_ARGS, "--no-color"], {**_clean_env(), "FORCE_COLOR": "1"}) == plain
    coloured = _run([command, *DEMO_ARGS], {**_clean_env(), "FORCE_COLOR": "1"})
    assert ESC in coloured
    # Strip the colour: what is left is the plain text (rounding aside, none on these lines).
    import re

    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain


def test_the_spec_displays_keep_their_exact_text_on_a_terminal(tmp_path: Path) -> None:
    forced = {**_clean_env(), "FORCE_COLOR": "1"}
    status = ["status", *DEMO_ARGS]
    assert _run(status, forced) == _run(status, _clean_env())
    certify = ["certify"]
    assert _run(certify, forced) == _run(certify, _clean_env())
    compile_ = ["compile", *DEMO_ARGS, "--out", str(tmp_path / "c.json")]
    assert _run(compile_, forced).split("(")[0] == _run(compile_, _clean_env()).split("(")[0]


def test_a_pseudo_terminal_gets_colour_and_no_color_turns_it_off() -> None:
    def on_a_tty(env: dict[str, str]) -> str:
        leader, follower = pty.openpty()
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "pytest_entropy", "measure", *DEMO_ARGS],
                stdout=follower,
                stderr=subprocess.DEVNULL,
                env={**os.environ, "PYTHONPATH": str(ROOT), **env},
            )
            os.close(follower)
            chunks = []
            while True:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the follower side closed
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            assert process.wait(timeout=60) == 0
        finally:
            os.close(leader)
        return b"".join(chunks).decode("utf-8")

    assert ESC in on_a_tty(_clean_env())
    assert ESC not in on_a_tty({**_clean_env(), "NO_COLOR": "1"})


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def begin(self, files: int, total_bytes: int | None) -> None:
        self.calls.append(("begin", (files, total_bytes)))

    def advance(self, files: int, done_bytes: int) -> None:
        self.calls.append(("advance", (files, done_bytes)))

    def cluster(self, workers: int, dashboard: str | None) -> None:
        self.calls.append(("cluster", workers))

    def end(self) -> None:
        self.calls.append(("end", None))


@pytest.mark.parametrize("engine", [EngineOptions(), EngineOptions("processes", 2, batch=1)])
def test_the_pipeline_reports_every_file_and_byte_once(engine: EngineOptions) -> None:
    paths = expand_session_sources([str(DEMO / "sessions"), str(DEMO / "sessions")])
    sources = source_files(paths)
    recorder = _Recorder()
    watched = EngineOptions(engine.engine, engine.jobs, batch=engine.batch, progress=recorder)
    plain = read_corpus(sources, CorpusPlan(), engine)
    read = read_corpus(sources, CorpusPlan(), watched)
    assert read.state.finalize(None).score == plain.state.finalize(None).score
    total = sum(os.stat(path).st_size for path in paths)
    assert recorder.calls[0] == ("begin", (len(paths), total))
    assert recorder.calls[-1] == ("end", None)
    advanced = [value for kind, value in recorder.calls if kind == "advance"]
    assert sum(files for files, _ in advanced) == len(paths)
    assert sum(size for _, size in advanced) == total


def test_the_bar_is_drawn_on_a_terminal_and_erased_at_the_end() -> None:
    stream = _Tty()
    bar = TerminalProgress(stream, delay=0)  # type: ignore[arg-type]
    bar.begin(4, 4000)
    bar.cluster(2, "http://127.0.0.1:8787/status")
    bar.advance(1, 1000)
    bar.advance(1, 1000)
    bar.end()
    text = stream.getvalue()
    assert "dask dashboard: http://127.0.0.1:8787/status" in text
    assert "files" in text


def test_no_progress_and_no_bar_without_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["measure", *DEMO_ARGS, "--no-progress"]) == 0
    assert main(["--no-progress", "--no-color", "measure", *DEMO_ARGS]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert ESC not in captured.out


def test_the_dask_engine_reports_its_workers() -> None:
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    recorder = _Recorder()
    sources = source_files(expand_session_sources([str(DEMO / "sessions")]))
    read_corpus(sources, CorpusPlan(), EngineOptions("dask", 2, progress=recorder))
    assert ("cluster", 2) in recorder.calls
    assert recorder.calls[-1] == ("end", None)
