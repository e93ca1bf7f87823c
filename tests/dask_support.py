"""Helpers for the engine tests: a real in-process Dask cluster and awkward generated corpora."""

from __future__ import annotations

import gzip
import importlib.util
import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]


def require_distributed() -> ModuleType:
    """``distributed``, or a skip when the dask extra is absent.

    CI installs the extra (``.ci/run``), so there a missing extra is a failure, not a skip:
    the cluster tests must never pass by not running.
    """
    if os.environ.get("CI"):
        import distributed

        return distributed
    return pytest.importorskip("distributed", reason='needs pip install -e ".[dask]"')


@contextmanager
def in_process_cluster(workers: int = 2) -> Iterator[str]:
    """A real ``LocalCluster`` of single-threaded workers inside this process; yields the
    scheduler address.

    ``processes=False`` keeps the scheduler and workers on in-process transports (no
    sockets, starts in well under a second, safe beside pytest-xdist) and lets workers see
    this process's ``memory://`` filesystem. Tasks still go through the scheduler and the
    workers' executors exactly as on a remote cluster.
    """
    distributed = require_distributed()
    # The scheduler's HTTP endpoint always starts: a free loopback port keeps it private.
    with distributed.LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=False,
        dashboard_address="127.0.0.1:0",
        scheduler_kwargs={"dashboard": False},
    ) as cluster:
        yield str(cluster.scheduler_address)


def _corpus_gen() -> Any:
    spec = importlib.util.spec_from_file_location("corpus_gen", REPO / "bench" / "corpus_gen.py")
    if spec is None or spec.loader is None:
        raise RuntimeError("bench/corpus_gen.py is missing")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def session_text(seed: int, target_bytes: int, index: int) -> str:
    """One generated native session file (the benchmark generator's lines)."""
    lines = _corpus_gen().session_lines(random.Random(seed), target_bytes, index)
    return "".join(line + "\n" for line in lines)


def write_mixed_corpus(directory: Path) -> list[Path]:
    """Files in measurement order: one file ~40x larger than the rest first (so every other
    result arrives before it), ordinary files, an empty file, a file without traces,
    malformed lines, a gzipped file, a truncated ``.gz`` that fails mid-read, and a
    duplicate. Returns the paths in the order they are to be measured."""
    directory.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []

    def add(name: str, data: bytes) -> None:
        path = directory / name
        path.write_bytes(data)
        paths.append(path)

    add("00-large.jsonl", session_text(1, 1_600_000, 0).encode())
    for index in range(1, 7):
        add(f"{index:02d}-small.jsonl", session_text(100 + index, 40_000, index).encode())
    add("07-empty.jsonl", b"")
    no_traces = "".join(
        line + "\n"
        for line in session_text(7, 40_000, 7).splitlines()
        if "pi-fabric.execution" not in line
    )
    add("08-no-traces.jsonl", no_traces.encode())
    add(
        "09-malformed.jsonl",
        b'{"details":{"trace":{"kind":"pi-fabric.execution",\n'
        b'"pi-fabric.execution" [1,2]\n' + session_text(9, 20_000, 9).encode(),
    )
    add("10-zipped.jsonl.gz", gzip.compress(session_text(10, 40_000, 10).encode()))
    whole = gzip.compress(session_text(11, 200_000, 11).encode())
    add("11-truncated.jsonl.gz", whole[: len(whole) // 2])
    paths.append(paths[1])
    return paths
