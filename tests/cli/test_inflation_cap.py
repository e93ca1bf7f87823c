"""A compressed session file inflates to at most ``--max-inflated-bytes`` (issue 26, item
18): one that inflates further contributes nothing and is counted as an oversized (so
unreadable) file, on every engine, for URLs, for incremental reads, from the flag or the
configuration. The bombs here are a few KiB that inflate to a few MiB, never GiBs."""

from __future__ import annotations

import gzip
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.inflation import (
    DEFAULT_MAX_INFLATED_BYTES,
    InflatedSizeError,
    bounded_inflation,
)
from pytest_entropy.sources.incremental import ScanRecordCache

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SURFACE = str(DEMO / "surface.json")
CAP = 1_000_000


def _bomb(path: Path, padding: int = 4 << 20) -> Path:
    """A session file whose first line is a real trace line, then ``padding`` blanks."""
    first = sorted((DEMO / "sessions").iterdir())[0].read_bytes()
    with gzip.open(path, "wb") as stream:
        stream.write(first)
        stream.write(b" " * padding + b"\n")
    return path


def _corpus(tmp_path: Path) -> Path:
    sessions = tmp_path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    _bomb(sessions / "zz-bomb.jsonl.gz")
    return sessions


def _measure(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["measure", "--json", "--surface", SURFACE, *argv])
    out = capsys.readouterr().out
    return code, (json.loads(out) if out else {})


def test_the_stream_stops_one_byte_past_the_cap() -> None:
    data = gzip.compress(b"x" * 5000)
    assert bounded_inflation(gzip.GzipFile(fileobj=io.BytesIO(data)), 5000).read() == b"x" * 5000
    stream = bounded_inflation(gzip.GzipFile(fileobj=io.BytesIO(data)), 4999)
    with pytest.raises(InflatedSizeError, match="inflates beyond 4,999 bytes"):
        stream.read()
    assert DEFAULT_MAX_INFLATED_BYTES == 1 << 30


@pytest.mark.parametrize(
    "engine", [["--engine", "local"], ["--engine", "processes", "--jobs", "2"]]
)
def test_a_bomb_is_counted_oversized_and_contributes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: list[str]
) -> None:
    sessions = _corpus(tmp_path)
    code, clean = _measure(capsys, "--sessions", str(DEMO / "sessions"))
    assert code == 0
    code, capped = _measure(
        capsys, "--sessions", str(sessions), "--max-inflated-bytes", str(CAP), *engine
    )
    assert code == 0
    diagnostics = capped["diagnostics"]
    assert (diagnostics["oversizedFiles"], diagnostics["unreadableFiles"]) == (1, 1)
    assert diagnostics["unreadableNames"] == [str(sessions / "zz-bomb.jsonl.gz")]
    assert "inflates beyond 1,000,000 bytes (--max-inflated-bytes)" in diagnostics["samples"][0]
    assert capped["reportHash"] == clean["reportHash"]  # its one trace line is not read
    # Under the default cap the same file is read whole: its trace counts.
    code, read = _measure(capsys, "--sessions", str(sessions), *engine)
    assert read["diagnostics"]["oversizedFiles"] == 0
    assert read["diagnostics"]["traces"] > clean["diagnostics"]["traces"]


def test_on_dask_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("distributed")
    sessions = _corpus(tmp_path)
    code, capped = _measure(
        capsys, "--sessions", str(sessions), "--max-inflated-bytes", str(CAP), "--engine", "dask"
    )
    assert code == 0
    assert capped["diagnostics"]["oversizedFiles"] == 1


def test_a_url_is_capped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("fsspec")
    bomb = _bomb(tmp_path / "bomb.jsonl.gz")
    code, capped = _measure(
        capsys,
        "--sessions",
        bomb.as_uri(),
        "--format",
        "fabric",
        "--max-inflated-bytes",
        str(CAP),
        "--allow-empty",
    )
    assert code == 0
    assert capped["diagnostics"]["oversizedFiles"] == 1


def test_the_configuration_sets_the_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = _corpus(tmp_path)
    (tmp_path / "entropy.yml").write_text(f"max-inflated-bytes: {CAP}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, capped = _measure(capsys, "--sessions", str(sessions))
    assert code == 0
    assert capped["diagnostics"]["oversizedFiles"] == 1
    monkeypatch.setenv("PYTEST_ENTROPY_MAX_INFLATED_BYTES", str(64 << 20))
    code, read = _measure(capsys, "--sessions", str(sessions))
    assert read["diagnostics"]["oversizedFiles"] == 0
    # the command line wins over both
    code, capped = _measure(capsys, "--sessions", str(sessions), "--max-inflated-bytes", "500")
    assert capped["diagnostics"]["oversizedFiles"] == 1


@pytest.mark.parametrize("value", ["0", "-5", "lots", "1.5"])
def test_a_bad_cap_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    code = main(
        [
            "measure",
            "--sessions",
            str(DEMO / "sessions"),
            "--surface",
            SURFACE,
            "--max-inflated-bytes",
            value,
        ]
    )
    assert code == 2
    assert "argument --max-inflated-bytes:" in capsys.readouterr().err


def test_an_incremental_read_is_capped(tmp_path: Path) -> None:
    bomb = _bomb(tmp_path / "bomb.jsonl.gz")
    cache = ScanRecordCache()
    capped = cache.read(bomb, ReadOptions(max_inflated_bytes=CAP))
    assert capped.evidence is None
    assert capped.diagnostics is not None and capped.diagnostics.oversized_files == 1
    read = cache.read(bomb, ReadOptions())
    assert read.evidence is not None and read.diagnostics.oversized_files == 0


def test_convert_counts_the_bomb(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bomb = _bomb(tmp_path / "bomb.jsonl.gz")
    code = main(
        [
            "convert",
            "--sessions",
            str(bomb),
            "--out",
            str(tmp_path / "out"),
            "--json",
            "--max-inflated-bytes",
            str(CAP),
            "--allow-empty",  # the bomb alone is an empty corpus (else exit 2)
        ]
    )
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    assert result["diagnostics"]["oversizedFiles"] == 1
    assert result["files"] == [{"source": str(bomb), "output": None, "format": "fabric"}]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
