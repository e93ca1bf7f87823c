"""The corpus's core accumulators carried through each file's scan (``CoreCarry``).

A read in this process hands the corpus's ``NativeMeter`` and ``NativeEvidence`` to each
file's scanner instead of building a state per file and merging it: the result must be the
plain path's, and the per-file merge's (a pool of processes), bit for bit. A file that fails
midway has then spoiled them: the corpus is read again file by file, and the result is
still the plain path's, with the failed file counted once.
"""

from __future__ import annotations

import gzip
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.ingest import native_tallies
from pytest_entropy.run import corpus
from pytest_entropy.run.corpus import (
    CorpusPlan,
    CorpusRead,
    EngineOptions,
    read_corpus,
    source_files,
)
from tests.dask_support import session_text
from tests.native_core_support import native_core_module, on_path
from tests.unit.test_native_meter import _fingerprint

PLANS = {
    "measure": CorpusPlan(),
    "propose": CorpusPlan(trace_values=True),
    "observations": CorpusPlan(observation_values=True),
}


def _write(directory: Path, names: list[str]) -> list[Path]:
    directory.mkdir()
    paths = []
    for index, name in enumerate(names):
        text = session_text(200 + index, 60_000, index).encode()
        path = directory / name
        if name == "corrupt.jsonl.gz":
            # Valid header and first blocks, then damaged deflate data: the read fails
            # after the scan has begun.
            packed = bytearray(gzip.compress(text * 4, compresslevel=1))
            middle = len(packed) // 2
            packed[middle : middle + 64] = bytes(64)
            path.write_bytes(bytes(packed))
        else:
            path.write_bytes(gzip.compress(text) if name.endswith(".gz") else text)
        paths.append(path)
    return paths


def _read(paths: list[Path], plan: str, **engine: Any) -> CorpusRead:
    return read_corpus(source_files(paths), PLANS[plan], EngineOptions(**engine))


class _Watch:
    """Which reads ran (carried or not) and how many scans adopted the accumulators."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reads: list[bool] = []
        self.adopted = 0
        read_all = corpus._read_all
        adopt = native_tallies.CoreCarry.adopt

        def reading(*args: Any, carried: bool, **kwargs: Any) -> CorpusRead:
            self.reads.append(carried)
            return read_all(*args, carried=carried, **kwargs)

        def adopting(carry: native_tallies.CoreCarry, *args: Any) -> None:
            adopt(carry, *args)
            self.adopted += carry.adopted

        monkeypatch.setattr(corpus, "_read_all", reading)
        monkeypatch.setattr(native_tallies.CoreCarry, "adopt", adopting)


@pytest.mark.parametrize("plan", list(PLANS))
def test_a_local_read_carries_the_accumulators_and_gives_the_plain_result(
    tmp_path: Path, plan: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    native_core_module()
    paths = _write(tmp_path / "c", [f"{i:02d}.jsonl" for i in range(5)] + ["05.jsonl.gz"])
    with on_path("plain"):
        expected = _fingerprint(_read(paths, plan))
    with on_path("native"):
        merged_per_file = _fingerprint(_read(paths, plan, engine="processes", jobs=2))
        watch = _Watch(monkeypatch)
        carried = _fingerprint(_read(paths, plan))
    assert watch.reads == [True]
    # The first file starts the corpus's accumulators; every later one is carried.
    assert watch.adopted == len(paths) - 1
    assert carried == expected
    assert merged_per_file == expected


@pytest.mark.parametrize("plan", list(PLANS))
def test_a_file_failing_midway_reads_the_corpus_again_file_by_file(
    tmp_path: Path, plan: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    native_core_module()
    names = ["00.jsonl", "01.jsonl", "corrupt.jsonl.gz", "03.jsonl", "04.jsonl"]
    paths = _write(tmp_path / "c", names)
    with on_path("plain"):
        plain = _read(paths, plan)
    with on_path("native"):
        watch = _Watch(monkeypatch)
        read = _read(paths, plan)
    assert watch.reads == [True, False]  # spoiled at the third file, then per file
    assert _fingerprint(read) == _fingerprint(plain)
    assert read.diagnostics.unreadable_files == plain.diagnostics.unreadable_files == 1
    assert [source.location for source in read.unreadable] == [str(paths[2])]
    assert [source.location for source, _ in read.readable] == [
        str(path) for path in paths if path != paths[2]
    ]


def test_a_file_that_cannot_be_opened_does_not_spoil_the_carry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    native_core_module()
    paths = _write(tmp_path / "c", ["00.jsonl", "01.jsonl", "02.jsonl"])
    missing = tmp_path / "c" / "gone.jsonl"
    with on_path("plain"):
        expected = _fingerprint(_read([*paths[:2], missing, paths[2]], "propose"))
    with on_path("native"):
        watch = _Watch(monkeypatch)
        read = _read([*paths[:2], missing, paths[2]], "propose")
    assert watch.reads == [True]  # nothing was adopted for it: no second read
    assert _fingerprint(read) == expected


def test_a_pipe_among_the_sources_is_never_read_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second read would find the pipe drained: with one among the sources nothing is
    carried, so a file failing midway costs no second read and loses nothing."""
    native_core_module()
    paths = _write(tmp_path / "c", ["00.jsonl", "corrupt.jsonl.gz", "02.jsonl"])
    piped = session_text(300, 60_000, 9).encode()
    on_disk = tmp_path / "piped.jsonl"
    on_disk.write_bytes(piped)
    with on_path("plain"):
        expected = _fingerprint(_read([on_disk, *paths], "propose"))
    read_end, write_end = os.pipe()

    def write() -> None:
        with os.fdopen(write_end, "wb") as stream:
            stream.write(piped)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        with on_path("native"):
            watch = _Watch(monkeypatch)
            read = _read([Path(f"/dev/fd/{read_end}"), *paths], "propose")
    finally:
        writer.join(timeout=60)
        os.close(read_end)
    assert watch.reads == [False]
    assert read.diagnostics.traces > 0
    assert _fingerprint(read) == expected
