"""A FIFO given as an input never hangs a command: with no writer it reads as empty (and an
empty corpus fails), with a writer (``<(...)``, a pipe) it reads as any file."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "corpora" / "demo"

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_entropy", *args],
        capture_output=True,
        text=True,
        timeout=120,  # a hang fails the test instead of the suite
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "stray.jsonl"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["measure", "--sessions", "{fifo}"],
        ["measure", "--format", "claude-code", "--sessions", "{fifo}"],
        ["freedom", "--surface", "{fifo}"],
        ["measure", "--sessions", str(DEMO / "sessions"), "--repairs", "{fifo}"],
        ["certify", "--sessions", "{fifo}"],
    ],
)
def test_a_fifo_without_a_writer_is_an_error_not_a_hang(fifo: Path, argv: list[str]) -> None:
    result = _run(*(word.format(fifo=fifo) for word in argv))
    assert result.returncode in (1, 2), result.stderr  # certify: its corpus-mode check fails
    if argv[0] != "certify":
        assert result.returncode == 2
        assert "stray.jsonl" in result.stderr or "read 1 file" in result.stderr


def test_a_pipe_with_a_writer_reads_like_a_file(tmp_path: Path) -> None:
    # What `measure --sessions <(cat *.jsonl)` hands us: /dev/fd/N, a pipe with a writer.
    lines = b"".join(path.read_bytes() for path in sorted((DEMO / "sessions").glob("*.jsonl")))
    read_end, write_end = os.pipe()

    def write() -> None:
        with os.fdopen(write_end, "wb") as stream:
            stream.write(lines)

    process = subprocess.Popen(
        [sys.executable, "-m", "pytest_entropy", "measure", "--sessions", f"/dev/fd/{read_end}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        pass_fds=(read_end,),
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    os.close(read_end)
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    out, err = process.communicate(timeout=120)
    writer.join(timeout=60)
    assert process.returncode == 0, err
    concatenated = tmp_path / "all.jsonl"
    concatenated.write_bytes(lines)
    plain = _run("measure", "--sessions", str(concatenated))
    assert out.splitlines()[:-1] == plain.stdout.splitlines()[:-1]  # all but "read ..."
    assert "20 lines" in out.splitlines()[-1]


def _serve(fifo: Path, lines: bytes, failures: list[BaseException]) -> threading.Thread:
    """A writer that waits in its open of ``fifo`` until a reader comes, then writes."""

    def write() -> None:
        try:
            with open(fifo, "wb") as stream:  # blocks until a reader opens the FIFO
                stream.write(lines)
        except OSError as error:  # BrokenPipeError: the reader went away
            failures.append(error)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


def _release(fifo: Path, writer: threading.Thread) -> None:
    if writer.is_alive():  # never opened: release the writer
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    writer.join(timeout=60)


def test_compile_names_a_fifo_it_cannot_read_twice(tmp_path: Path) -> None:
    """The compile reads its sessions twice (to measure, then to replay): a FIFO read once
    is named as such, not as a file that changed ("run it again" would not help)."""
    lines = b"".join(path.read_bytes() for path in sorted((DEMO / "sessions").glob("*.jsonl")))
    fifo = tmp_path / "producer.jsonl"
    os.mkfifo(fifo)
    failures: list[BaseException] = []
    writer = _serve(fifo, lines, failures)
    out = tmp_path / "compiled.json"
    surface = DEMO / "surface.json"
    result = _run("compile", "--sessions", str(fifo), "--surface", str(surface), "--out", str(out))
    _release(fifo, writer)
    assert result.returncode == 2, result.stderr
    assert "can be read only once (a FIFO or a pipe)" in result.stderr
    assert "producer.jsonl" in result.stderr and not out.exists()
    assert not failures


def test_a_named_fifo_whose_writer_waits_reads_like_a_file(tmp_path: Path) -> None:
    """``mkfifo p; producer > p & pytest-entropy measure --sessions p``: the writer waits in
    its open until the command opens the FIFO. Opening it only to check that it is readable
    would connect the writer and, closed again, leave it writing into a pipe no one reads
    (it dies of SIGPIPE) and the command's own read finding it empty."""
    lines = b"".join(path.read_bytes() for path in sorted((DEMO / "sessions").glob("*.jsonl")))
    fifo = tmp_path / "producer.jsonl"
    os.mkfifo(fifo)
    failures: list[BaseException] = []
    writer = _serve(fifo, lines, failures)
    result = _run("measure", "--sessions", str(fifo))
    _release(fifo, writer)
    assert result.returncode == 0, result.stderr
    assert not failures
    concatenated = tmp_path / "all.jsonl"
    concatenated.write_bytes(lines)
    plain = _run("measure", "--sessions", str(concatenated))
    assert result.stdout.splitlines()[:-1] == plain.stdout.splitlines()[:-1]
    assert "20 lines" in result.stdout.splitlines()[-1]


def test_a_pipe_of_another_format_under_auto_says_to_name_the_format(tmp_path: Path) -> None:
    # Under --format auto a pipe cannot be sniffed (its head would be eaten), so a Pi log
    # piped in is read as trace lines and yields nothing: the error says why, not only
    # "no file matched a session format".
    from tests.cli.test_convert import pi_log

    lines = pi_log(tmp_path / "pi.jsonl", {"command": "ls"}).read_bytes()
    for extra in ([], ["--format", "pi"]):
        process = subprocess.run(
            [sys.executable, "-m", "pytest_entropy", "measure", "--sessions", "/dev/stdin",
             *extra],
            input=lines,
            capture_output=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=False,
        )  # fmt: skip
        err = process.stderr.decode()
        if extra:
            assert process.returncode == 0, err
        else:
            assert process.returncode == 2
            assert "/dev/stdin: a pipe is read as trace lines under --format auto" in err
            assert "name its format with --format FORMAT" in err


@pytest.mark.parametrize("walked", [False, True], ids=["jsonl-directory", "walked-directory"])
def test_a_fifo_or_dangling_link_inside_a_directory_is_counted_and_named(
    tmp_path: Path, walked: bool
) -> None:
    # They were dropped from the listing without a word: a corpus could lose a file (a
    # link whose target moved) and pass as if it never held one.
    sessions = tmp_path / "sessions"
    inner = sessions / "deep" if walked else sessions
    inner.mkdir(parents=True)
    source = DEMO / "sessions" / "2026-01-05-notes-release.jsonl"
    (inner / ("a.json" if walked else "a.jsonl")).write_bytes(source.read_bytes())
    suffix = ".json" if walked else ".jsonl"
    os.mkfifo(inner / f"pipe{suffix}")
    (inner / f"moved{suffix}").symlink_to(tmp_path / "nowhere")
    assert _run("measure", "--sessions", str(sessions), "--json").returncode == 0
    result = _run("measure", "--sessions", str(sessions))
    assert result.returncode == 0, result.stderr
    assert "skipped: 2 unreadable files" in result.stdout
    assert f"moved{suffix}: unreadable: a symbolic link to nothing" in result.stdout
    assert f"pipe{suffix}: unreadable: a FIFO inside a directory is not read" in result.stdout
    assert "warning: session files passed over: 2 unreadable" in result.stderr
    strict = _run("measure", "--sessions", str(sessions), "--strict")
    assert strict.returncode == 2
    assert "--strict: 2 unreadable and 0 unrecognised session file(s)" in strict.stderr


def test_a_dash_names_standard_input() -> None:
    source = DEMO / "sessions" / "2026-01-05-notes-release.jsonl"
    piped = subprocess.run(
        [sys.executable, "-m", "pytest_entropy", "measure", "--sessions", "-", "--json"],
        input=source.read_text(encoding="utf-8"),
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert piped.returncode == 0, piped.stderr
    named = _run("measure", "--sessions", str(source), "--json")
    assert piped.stdout.split('"diagnostics"')[0] == named.stdout.split('"diagnostics"')[0]
