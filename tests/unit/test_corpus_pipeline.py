"""The corpus pipeline's own options: one cursor across files, the incremental cache, each
file's own state, and the plans it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_entropy.core.meter import report_hash
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.writer import ForeignCall, ForeignTrace, NativeWriter
from pytest_entropy.run.corpus import (
    CorpusPlan,
    EngineOptions,
    read_corpus,
    records_plan,
    source_files,
)
from pytest_entropy.sources.incremental import EvidenceCache
from pytest_entropy.sources.locate import expand_session_paths
from tests.distributed_support import measured, one_pass

# Every test here runs on the Rust core and on the plain path (issue 28).
pytestmark = pytest.mark.usefixtures("scan_path")


def write(path: Path, model: str | None, ref: str) -> Path:
    """A native session file of one trace with one successful call of ``ref``; with a
    ``model``, a ``model_change`` line before it."""
    writer = NativeWriter(ReadOptions(), ScanDiagnostics())
    trace = ForeignTrace("work", model, [ForeignCall(ref, {"q": "x"}, "succeeded")])
    path.write_bytes(b"".join(line + b"\n" for line in writer.lines(trace)))
    return path


def test_the_cursor_crosses_files_only_when_asked(tmp_path: Path) -> None:
    files = [
        write(tmp_path / "a.jsonl", "acme/m1", "app.a"),
        write(tmp_path / "b.jsonl", None, "app.b"),
    ]
    alone = read_corpus(source_files(files), records_plan())
    continuous = read_corpus(source_files(files), records_plan(continuous=True))
    assert [trace.model for trace in alone.records.traces] == ["acme/m1", None]
    assert [trace.model for trace in continuous.records.traces] == ["acme/m1", "acme/m1"]


def test_the_cache_reads_what_a_scan_reads(demo_dir: Path, tmp_path: Path) -> None:
    paths = expand_session_paths([demo_dir / "sessions"])
    plan = records_plan(windows=True, file_states=True)
    cache = EvidenceCache()
    scanned = read_corpus(source_files(paths), plan)
    for _ in range(2):  # the second read reuses every cached file
        cached = read_corpus(source_files(paths), plan, cache=cache)
        assert cached.records == scanned.records
        assert cached.merged_pool().to_json() == scanned.merged_pool().to_json()
        assert [
            report_hash(state.finalize()) if state is not None else None
            for _, state in cached.files
        ] == [
            report_hash(state.finalize()) if state is not None else None
            for _, state in scanned.files
        ]
    reference = one_pass(paths)
    assert scanned.records.traces == reference.traces
    assert scanned.records.audit_calls == reference.audit_calls


def test_an_unreadable_file_is_listed(tmp_path: Path) -> None:
    good = write(tmp_path / "a.jsonl", None, "app.a")
    broken = tmp_path / "b.jsonl.gz"
    broken.write_bytes(b"not gzip")
    read = read_corpus(source_files([good, broken]), records_plan(file_states=True))
    assert [source.location for source in read.unreadable] == [str(broken)]
    assert [state is None for _, state in read.files] == [False, True]
    assert read.diagnostics.unreadable_files == 1
    assert measured([good, broken]).state.traces == 1


def test_plans_the_pipeline_refuses(tmp_path: Path) -> None:
    files = source_files([write(tmp_path / "a.jsonl", None, "app.a")])
    with pytest.raises(ValueError, match="not both"):
        CorpusPlan(file_states=True)
    with pytest.raises(ValueError, match="local engine"):
        read_corpus(files, records_plan(), EngineOptions("processes", 2), cache=EvidenceCache())
    with pytest.raises(ValueError, match="local engine"):
        read_corpus(files, records_plan(continuous=True), EngineOptions("processes", 2))
    with pytest.raises(ValueError, match="did not collect"):
        read_corpus(files, records_plan()).merged_pool()
