"""The Dask engine on a real ``LocalCluster``: the same report hash and diagnostics as one
sequential pass, results merged strictly in file order within a bounded window."""

from __future__ import annotations

import json
import operator
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.meter import MeterState, report_hash
from pytest_entropy.run import executor as engine
from pytest_entropy.run.corpus import CorpusRead
from pytest_entropy.run.executor import map_merge
from pytest_entropy.sources.locate import expand_session_paths
from tests.dask_support import in_process_cluster, require_distributed, write_mixed_corpus
from tests.distributed_support import measured


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with in_process_cluster(workers=2) as address:
        yield address


@pytest.fixture(scope="module")
def mixed_corpus(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write_mixed_corpus(tmp_path_factory.mktemp("mixed"))


def state_order(state: MeterState) -> list[Any]:
    """Everything a merge must reproduce beyond the report: first-seen order of every map
    and the exact float values of the churn sums."""
    refs = [
        (ref, list(acc.signatures.items()), list(acc.stages.items()), acc.churn_sum.hex())
        for ref, acc in state.refs.items()
    ]
    tasks = [(task, list(sequences.items())) for task, sequences in state.task_sequences.items()]
    models = [(model, state_order(scoped)) for model, scoped in state.models.items()]
    return [refs, tasks, state.churn_sum.hex(), state.churn_pairs, models]


def fingerprint(result: CorpusRead) -> tuple[str, dict[str, Any], list[Any]]:
    return (
        report_hash(result.state.finalize()),
        result.diagnostics.to_json(),
        state_order(result.state),
    )


def test_demo_corpus_same_hash(scheduler: str, demo_dir: Path) -> None:
    paths = expand_session_paths([demo_dir / "sessions"])
    local = measured(paths)
    clustered = measured(paths, engine="dask", scheduler=scheduler)
    assert fingerprint(clustered) == fingerprint(local)
    assert local.state.finalize().totals.operations > 0


def test_mixed_corpus_same_hash_on_every_engine(scheduler: str, mixed_corpus: list[Path]) -> None:
    local = measured(mixed_corpus)
    expected = fingerprint(local)
    report = local.state.finalize()
    # The corpus really contains what it claims: traces, churn, a failed read, bad lines.
    assert report.totals.operations > 1000
    assert report.churn_rate > 0
    assert local.diagnostics.unreadable_files == 1
    assert local.diagnostics.malformed_lines >= 1
    assert local.diagnostics.files == len(mixed_corpus)
    assert fingerprint(measured(mixed_corpus, engine="processes", jobs=2)) == expected
    assert fingerprint(measured(mixed_corpus, engine="dask", scheduler=scheduler)) == expected
    for window, batch in [(1, 1), (2, 1), (3, 1), (1, 3), (2, 5), (None, 13)]:
        clustered = measured(
            mixed_corpus, engine="dask", scheduler=scheduler, window=window, batch=batch
        )
        assert fingerprint(clustered) == expected, (window, batch)
    pooled = measured(mixed_corpus, engine="processes", jobs=2, batch=4)
    assert fingerprint(pooled) == expected


def test_client_root_keeps_no_churn_terms(scheduler: str, mixed_corpus: list[Path]) -> None:
    result = measured(mixed_corpus, engine="dask", scheduler=scheduler)
    assert result.state.churn_pairs > 0
    assert not result.state.retain_terms
    assert result.state.churn_terms == []
    assert all(ref.churn_terms == [] for ref in result.state.refs.values())
    for model_state in result.state.models.values():
        assert model_state.churn_terms == []


def test_file_order_is_kept(scheduler: str, mixed_corpus: list[Path]) -> None:
    """Reversed input accumulates in a different first-seen order, and the cluster
    reproduces that one too: the merge follows the given order, not arrival order."""
    reversed_paths = list(reversed(mixed_corpus))
    forward = fingerprint(measured(mixed_corpus))
    backward = fingerprint(measured(reversed_paths))
    assert forward[2] != backward[2]
    clustered = measured(reversed_paths, engine="dask", scheduler=scheduler, window=4)
    assert fingerprint(clustered) == backward


def test_local_cluster_of_processes(mixed_corpus: list[Path]) -> None:
    """Without --scheduler the engine starts its own cluster of worker processes: states
    cross process boundaries pickled, and still merge to the same bytes."""
    require_distributed()
    expected = fingerprint(measured(mixed_corpus))
    assert fingerprint(measured(mixed_corpus, engine="dask", jobs=2)) == expected


class _Probe:
    """Shared by the test and the in-process cluster's worker threads (the map function is
    pickled by reference, so workers run this module's function on this module's state)."""

    lock = threading.Lock()
    count = 0
    merged: ClassVar[list[int]] = []
    worst = 0

    @classmethod
    def reset(cls, count: int) -> None:
        cls.count, cls.merged, cls.worst = count, [], 0


def _probe_work(index: int) -> int:
    with _Probe.lock:
        # Items started but not merged yet, this one included: what the client may hold.
        _Probe.worst = max(_Probe.worst, index - len(_Probe.merged) + 1)
    # Later items finish first, so results arrive in reverse order.
    time.sleep(0.002 * (_Probe.count - index))
    return index * 10


def _probe_merge(order: list[int], result: int) -> list[int]:
    with _Probe.lock:
        order.append(result // 10)
    return order


@pytest.mark.parametrize("window", [1, 3, 8])
def test_dask_merges_in_order_within_the_window(scheduler: str, window: int) -> None:
    _Probe.reset(24)
    order = map_merge(
        list(range(24)),
        _probe_work,
        _probe_merge,
        _Probe.merged,
        engine="dask",
        scheduler=scheduler,
        window=window,
    )
    assert order == list(range(24))
    assert 1 <= _Probe.worst <= window
    if window > 1:
        # Several items really ran side by side, so results did arrive out of order.
        assert _Probe.worst > 1


@pytest.mark.parametrize("window", [1, 2, 5])
def test_ordered_window_with_threads(window: int) -> None:
    """The process pool's ordering core, driven by threads so that it can be observed."""
    _Probe.reset(20)
    with ThreadPoolExecutor(max_workers=4) as pool:
        for result in engine._ordered(list(range(20)), pool.submit, _probe_work, window):
            _probe_merge(_Probe.merged, result)
    assert _Probe.merged == list(range(20))
    assert 1 <= _Probe.worst <= window


@pytest.mark.parametrize("batch", [1, 2, 3, 7, 100])
def test_batches_combine_in_order_on_workers(scheduler: str, batch: int) -> None:
    letters = [chr(ord("a") + index % 26) * (1 + index % 3) for index in range(40)]
    joined = map_merge(
        letters,
        str.upper,
        operator.add,
        "",
        combine=operator.add,
        engine="dask",
        scheduler=scheduler,
        batch=batch,
        window=2,
    )
    assert joined == "".join(letters).upper()


@pytest.mark.parametrize(
    ("items", "workers", "expected"),
    [(10, 2, 1), (31, 2, 1), (64, 2, 2), (1000, 2, 31), (1_000_000, 64, 64), (0, 2, 1)],
)
def test_automatic_batch_size(items: int, workers: int, expected: int) -> None:
    assert engine._batch_size(None, items, workers) == expected


def _explode(item: int) -> int:
    if item == 3:
        raise RuntimeError("boom at 3")
    return item


def test_errors_on_workers_reach_the_client(scheduler: str) -> None:
    with pytest.raises(RuntimeError, match="boom at 3"):
        map_merge(list(range(6)), _explode, operator.add, 0, engine="dask", scheduler=scheduler)


def test_errors_in_worker_processes_reach_the_client() -> None:
    with pytest.raises(RuntimeError, match="boom at 3"):
        map_merge(list(range(40)), _explode, operator.add, 0, engine="processes", jobs=2, window=4)


def test_cli_dask_scheduler(
    scheduler: str, demo_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = str(demo_dir / "sessions")
    assert main(["measure", "--sessions", sessions, "--json"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert main(["measure", "--sessions", sessions, "--scheduler", scheduler, "--json"]) == 0
    clustered = json.loads(capsys.readouterr().out)
    assert clustered == local


def test_cli_scheduler_needs_dask_engine(
    demo_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        [
            "measure",
            "--sessions",
            str(demo_dir / "sessions"),
            "--engine",
            "processes",
            "--scheduler",
            "tcp://127.0.0.1:1",
        ]
    )
    assert status == 2
    assert "--scheduler needs --engine dask" in capsys.readouterr().err


def test_cli_unreachable_scheduler(
    demo_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    require_distributed()
    monkeypatch.setattr(engine, "SCHEDULER_TIMEOUT", 0.5)
    with socket.socket() as probe:
        # A loopback port nobody listens on: bound, then released.
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    args = ["measure", "--sessions", str(demo_dir / "sessions"), "--engine", "dask"]
    assert main([*args, "--scheduler", address]) == 2
    assert f"cannot reach the Dask scheduler at {address}" in capsys.readouterr().err


def test_cli_dask_extra_missing(
    demo_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import now raises ImportError
    args = ["measure", "--sessions", str(demo_dir / "sessions"), "--engine", "dask"]
    assert main(args) == 2
    assert 'pip install "pytest-entropy[dask]"' in capsys.readouterr().err


def test_imports_stay_light() -> None:
    """The package and its CLI import neither Dask nor fsspec until they are used."""
    code = (
        "import sys, pytest_entropy, pytest_entropy.cli, pytest_entropy.run.executor;"
        "pytest_entropy.cli.build_parser();"
        "print([m for m in ('dask', 'distributed', 'fsspec') if m in sys.modules])"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    assert output.strip() == "[]"
