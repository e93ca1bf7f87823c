"""Where the map-merge-finalize runs: in this process, or in a pool of worker processes.

Each file maps to a :class:`~pytest_entropy.core.meter.MeterState`; states merge strictly in
file order, so every engine yields the same report bytes as one sequential pass.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .core.meter import MeterState
from .ingest.fabric import ScanDiagnostics
from .sessions import ReadOptions, meter_file

__all__ = ["ENGINES", "MeterResult", "meter_paths"]

ENGINES = ("local", "processes")


@dataclass(slots=True)
class MeterResult:
    state: MeterState
    diagnostics: ScanDiagnostics


def _meter_one(path: str, options: ReadOptions) -> tuple[MeterState | None, ScanDiagnostics]:
    return meter_file(Path(path), retain_terms=True, options=options)


def _start_method() -> str:
    """``fork`` when it is safe (POSIX, no other threads): workers start instantly with the
    parent's imports. Otherwise ``spawn``, which never inherits a lock held by a thread."""
    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return "fork"
    return "spawn"


def _mapped_states(
    paths: Sequence[Path], jobs: int, options: ReadOptions
) -> Iterator[tuple[MeterState | None, ScanDiagnostics]]:
    context = multiprocessing.get_context(_start_method())
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        yield from pool.map(
            _meter_one, [str(path) for path in paths], [options] * len(paths), chunksize=1
        )


def meter_paths(
    paths: Sequence[Path],
    *,
    jobs: int = 1,
    engine: str = "local",
    options: ReadOptions | None = None,
) -> MeterResult:
    """Measure session files in order; ``engine`` is ``local`` or ``processes``."""
    options = options or ReadOptions()
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}")
    root = MeterState(retain_terms=False)
    diagnostics = ScanDiagnostics()
    mapped: Iterator[tuple[MeterState | None, ScanDiagnostics]]
    if engine == "local" or jobs <= 1 or len(paths) <= 1:
        # A file that fails mid-read contributes nothing, exactly as in a worker process.
        mapped = (_meter_one(str(path), options) for path in paths)
    else:
        mapped = _mapped_states(paths, jobs, options)
    for state, file_diagnostics in mapped:
        if state is not None:
            root.merge(state)
        diagnostics.merge(file_diagnostics)
    return MeterResult(root, diagnostics)
