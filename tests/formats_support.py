"""Helpers for the foreign-format tests: read a file, measure directly, convert and re-measure."""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_entropy.cli.app import main
from pytest_entropy.core.meter import MeterState, report_hash
from pytest_entropy.ingest.base import NATIVE_FORMAT, ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.native import ScanRecords
from pytest_entropy.sources.locate import expand_session_paths
from pytest_entropy.sources.scan import meter_source, read_file_evidence


def read(
    path: Path,
    session_format: str = "auto",
    *,
    surface: dict[str, Any] | None = None,
    ref_prefix: str = "",
    redact: bool = False,
) -> tuple[ScanRecords, ScanDiagnostics]:
    """The evidence of one file, read as the meter reads it, and its diagnostics."""
    diagnostics = ScanDiagnostics()
    options = ReadOptions(session_format, surface, ref_prefix, redact)
    evidence = read_file_evidence(path, diagnostics=diagnostics, options=options)
    assert evidence is not None, diagnostics.samples
    return evidence, diagnostics


def operations(evidence: ScanRecords) -> list[Any]:
    return [op for trace in evidence.traces for op in trace.operations]


def outcomes(evidence: ScanRecords) -> Counter[tuple[str, str | None]]:
    return Counter((op.outcome, op.failure_stage) for op in operations(evidence))


def measured_hash(
    paths: Sequence[Path], options: ReadOptions, surface: dict[str, Any] | None
) -> tuple[str, dict[str, Any], ScanDiagnostics]:
    """``(report hash, report JSON, diagnostics)`` of files measured in order."""
    state = MeterState()
    diagnostics = ScanDiagnostics()
    for path in paths:
        meter_source(path, diagnostics=diagnostics, into=state, options=options)
    report = state.finalize(surface, None, "")
    return report_hash(report), report.to_json(), diagnostics


def convert(out: Path, *argv: str) -> dict[str, Any]:
    """Run ``pytest-entropy convert ... --out OUT --json`` in-process; its JSON output."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["convert", *argv, "--out", str(out), "--json"])
    assert code == 0
    result: dict[str, Any] = json.loads(buffer.getvalue())
    return result


def round_trip(
    sources: Sequence[Path],
    out: Path,
    session_format: str,
    *,
    surface_path: Path | None = None,
    surface: dict[str, Any] | None = None,
    extra: Sequence[str] = (),
) -> tuple[str, str]:
    """``(direct hash, hash of the converted files measured natively)``."""
    options = ReadOptions(session_format, surface)
    direct, _, _ = measured_hash(expand_session_paths(sources, options), options, surface)
    argv = ["--format", session_format, "--sessions", *map(str, sources), *extra]
    if surface_path is not None:
        argv += ["--surface", str(surface_path)]
    result = convert(out, *argv)
    converted = [Path(item["output"]) for item in result["files"]]
    assert converted == sorted(expand_session_paths([out], ReadOptions(NATIVE_FORMAT)))
    native, _, _ = measured_hash(converted, ReadOptions(NATIVE_FORMAT), surface)
    return direct, native


_CACHE: dict[tuple[Any, ...], tuple[list[tuple[Path, ScanRecords]], ScanDiagnostics]] = {}


def corpus(
    paths: Sequence[Path],
    session_format: str = "auto",
    *,
    surface: dict[str, Any] | None = None,
    key: str = "",
) -> tuple[list[tuple[Path, ScanRecords]], ScanDiagnostics]:
    """Every file's evidence (cached per test process under ``key``) and the diagnostics."""
    cache_key = (tuple(paths), session_format, key)
    if cache_key not in _CACHE:
        options = ReadOptions(session_format, surface)
        diagnostics = ScanDiagnostics()
        files = []
        for path in expand_session_paths(paths, options):
            evidence = read_file_evidence(path, diagnostics=diagnostics, options=options)
            assert evidence is not None, path
            files.append((path, evidence))
        _CACHE[cache_key] = (files, diagnostics)
    return _CACHE[cache_key]


def corpus_operations(files: list[tuple[Path, ScanRecords]]) -> list[Any]:
    return [op for _, evidence in files for op in operations(evidence)]


# Counters a clean real corpus leaves at zero: nothing dropped, nothing unrecognised.
DAMAGE = (
    "malformed_lines",
    "oversized_lines",
    "non_object_lines",
    "unknown_records",
    "rejected_traces",
    "unreadable_files",
    "unrecognized_files",
    "split_traces",
)


def damage(diagnostics: ScanDiagnostics) -> dict[str, int]:
    return {name: getattr(diagnostics, name) for name in DAMAGE if getattr(diagnostics, name)}
