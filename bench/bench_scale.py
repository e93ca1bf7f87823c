"""Benchmark: every engine on a large corpus, memory of client and workers, and a projection.

    python bench/bench_scale.py [--megabytes 512] [--files 256] [--repeat 3]

Needs the dask extra (``pip install -e ".[dask]"``). It generates (once, cached under
``bench/out/``) a deterministic corpus with ``bench/corpus_gen.py`` and reports, as Markdown
for ``docs/performance.md``:

* the parse floor: ``orjson.loads`` over exactly the corpus's trace lines, one core;
* wall time, MB/s and operations/s of ``pytest-entropy measure`` on each engine (a CLI
  subprocess each, start-up and cluster start included): ``local``, ``processes --jobs 2``,
  ``dask --jobs 2`` (its own local cluster) and ``dask --scheduler`` against a standing
  cluster of 1 and of 2 worker processes (scaling);
* peak RSS of the client and of every worker at half and at all of the corpus;
* the per-file map cost, the client's per-file cost (unpickle + ordered merge) and the
  scheduler's per-task overhead, and from them a projection for 1 TB on 64 workers.

Timings are wall-clock on the machine that runs it; nothing here is a test.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus_gen import write_corpus  # noqa: E402
from launcher import Launcher  # noqa: E402

from pytest_entropy.core.meter import MeterState  # noqa: E402
from pytest_entropy.run import executor as engine  # noqa: E402
from pytest_entropy.run.executor import map_merge  # noqa: E402
from pytest_entropy.sources.locate import expand_session_paths  # noqa: E402
from pytest_entropy.sources.scan import meter_source  # noqa: E402

TRACE_MARK = b"pi-fabric.execution"
DASK = Path(sys.executable).with_name("dask")


def ensure_corpus(directory: Path, files: int, megabytes: float) -> float:
    """Write the corpus unless it is cached; scales down when the disk is short."""
    marker = directory / ".complete"
    if marker.exists():
        return float(marker.read_text(encoding="utf-8").split()[0])
    directory.parent.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(directory.parent).free
    # Keep three times the corpus free: the corpus itself plus room for everyone else.
    if free < megabytes * 3e6:
        scaled = free / 3e6
        print(f"note: {free / 1e6:.0f} MB free; corpus scaled down to {scaled:.0f} MB")
        megabytes = scaled
    if directory.exists():
        shutil.rmtree(directory)
    write_corpus(directory, files, megabytes, seed=20261201)
    marker.write_text(f"{megabytes}\n", encoding="utf-8")
    return megabytes


def best(repeat: int, action: Callable[[], object]) -> float:
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        timings.append(time.perf_counter() - start)
    return min(timings)


LAUNCH: Launcher | None = None


def run_cli(args: list[str]) -> tuple[float, int, str]:
    """Wall time, peak RSS (bytes) and report hash of one ``measure --json`` run."""
    if LAUNCH is None:
        raise SystemExit("the launcher is not running")
    result = LAUNCH.run([sys.executable, "-m", "pytest_entropy", "measure", "--json", *args])
    return result["seconds"], result["maxrss"], json.loads(result["stdout"])["reportHash"]


def peak_rss(pid: int) -> int:
    """A live process's peak resident set (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


@dataclass
class StandingCluster:
    address: str
    workers: list[subprocess.Popen[bytes]]

    def worker_peaks(self) -> list[int]:
        return [peak_rss(worker.pid) for worker in self.workers]


@contextlib.contextmanager
def standing_cluster(workers: int) -> Iterator[StandingCluster]:
    """A scheduler and ``workers`` single-threaded worker processes (no nanny, so each
    worker's pid is the process doing the work), all on loopback."""
    import distributed

    with tempfile.TemporaryDirectory() as scratch:
        scheduler_file = Path(scratch) / "scheduler.json"
        quiet: dict[str, int] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        loopback = ["--host", "127.0.0.1", "--no-dashboard"]
        worker_options = ["--scheduler-file", str(scheduler_file), "--nthreads", "1"]
        worker_options += ["--no-nanny", "--memory-limit", "0"]
        scheduler = subprocess.Popen(
            [
                str(DASK),
                "scheduler",
                *loopback,
                "--port",
                "0",
                "--scheduler-file",
                str(scheduler_file),
            ],
            **quiet,  # type: ignore[arg-type]
        )
        processes = [scheduler]
        try:
            deadline = time.monotonic() + 60
            while not scheduler_file.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            for _ in range(workers):
                processes.append(
                    subprocess.Popen(
                        [str(DASK), "worker", *loopback, *worker_options],
                        **quiet,  # type: ignore[arg-type]
                    )
                )
            with distributed.Client(scheduler_file=str(scheduler_file), timeout=60) as client:
                client.wait_for_workers(workers, timeout=60)
                yield StandingCluster(client.scheduler.address, processes[1:])
                # Closes the scheduler and its workers cleanly (a terminated worker can sit
                # waiting to reconnect to a scheduler that is gone).
                client.shutdown()
        finally:
            for process in processes:
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def parse_floor(paths: list[Path]) -> tuple[float, int, int]:
    """Seconds of ``orjson.loads`` over every trace line (reading excluded), lines, bytes."""
    seconds = 0.0
    count = size = 0
    loads = orjson.loads
    for path in paths:
        lines = [line for line in path.read_bytes().split(b"\n") if TRACE_MARK in line]
        start = time.perf_counter()
        for line in lines:
            loads(line)
        seconds += time.perf_counter() - start
        count += len(lines)
        size += sum(map(len, lines))
    return seconds, count, size


@dataclass
class Costs:
    map_seconds: float
    merge_seconds: float
    unpickle_seconds: float
    finalize_seconds: float
    pickled_bytes: int
    operations: int
    files: int
    batch_files: int = 0
    batch_seconds: float = 0.0  # unpickle + merge of one batch-combined state, mean
    batch_bytes: int = 0
    keys_half: int = 0  # distinct keys the client's root holds after half of the files
    keys_full: int = 0


def distinct_keys(state: MeterState) -> int:
    """Map entries a state holds (refs, signatures, stages, task sequences), models included:
    what its memory and every merge into it grow with."""
    count = sum(1 + len(ref.signatures) + len(ref.stages) for ref in state.refs.values())
    count += sum(len(sequences) for sequences in state.task_sequences.values())
    return count + sum(distinct_keys(scoped) for scoped in state.models.values())


def _client_merge(states: list[bytes]) -> tuple[float, float, MeterState]:
    """Unpickle and merge states in order into a churn-term-free root, as the client does."""
    root = MeterState(retain_terms=False)
    merge_seconds = unpickle_seconds = 0.0
    for data in states:
        start = time.perf_counter()
        state = pickle.loads(data)
        middle = time.perf_counter()
        root.merge(state)
        merge_seconds += time.perf_counter() - middle
        unpickle_seconds += middle - start
    return unpickle_seconds, merge_seconds, root


def client_costs(paths: list[Path], batch: int) -> Costs:
    """Map every file in process, then time what a client does per task: unpickle the
    worker's state and merge it in order into a root that drops churn terms; once with one
    file per task and once with ``batch`` files combined per task (as the engine batches)."""
    states: list[bytes] = []
    raw: list[MeterState] = []
    map_seconds = 0.0
    for path in paths:
        start = time.perf_counter()
        state, _ = meter_source(path, retain_terms=True)
        map_seconds += time.perf_counter() - start
        if state is None:
            raise SystemExit(f"{path} is unreadable")
        states.append(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))
        raw.append(state)
    unpickle_seconds, merge_seconds, root = _client_merge(states)
    _, _, half_root = _client_merge(states[: len(states) // 2])
    start = time.perf_counter()
    report = root.finalize()
    finalize_seconds = time.perf_counter() - start
    batch = min(batch, len(raw))
    batched: list[bytes] = []
    for first in range(0, len(raw) - batch + 1, batch):
        combined = MeterState(retain_terms=True)
        for state in raw[first : first + batch]:
            combined.merge(state)
        batched.append(pickle.dumps(combined, protocol=pickle.HIGHEST_PROTOCOL))
    batch_unpickle, batch_merge, _ = _client_merge(batched)
    return Costs(
        map_seconds,
        merge_seconds,
        unpickle_seconds,
        finalize_seconds,
        sum(map(len, states)),
        report.totals.operations,
        len(paths),
        batch,
        (batch_unpickle + batch_merge) / len(batched),
        sum(map(len, batched)) // len(batched),
        distinct_keys(half_root),
        distinct_keys(root),
    )


def task_overhead(address: str, tasks: int = 2000) -> float:
    """Seconds per trivial task through the ordered map-merge on a standing cluster."""
    start = time.perf_counter()
    total = map_merge(list(range(tasks)), abs, int.__add__, 0, engine="dask", scheduler=address)
    elapsed = time.perf_counter() - start
    if total != tasks * (tasks - 1) // 2:
        raise SystemExit("ordered map-merge returned a wrong sum")
    return elapsed / tasks


def mb(value: float) -> str:
    return f"{value / 1e6:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HERE / "out" / "corpus-scale")
    parser.add_argument("--megabytes", type=float, default=512)
    parser.add_argument("--files", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    global LAUNCH
    # Started first, while this process is still small.
    LAUNCH = Launcher()

    ensure_corpus(args.corpus, args.files, args.megabytes)
    paths = expand_session_paths([args.corpus])
    half = paths[: len(paths) // 2]
    size = sum(path.stat().st_size for path in paths)
    half_size = sum(path.stat().st_size for path in half)
    corpus = str(args.corpus)
    half_args = [str(path) for path in half]

    floor, trace_lines, trace_bytes = min(parse_floor(paths) for _ in range(args.repeat))
    # Best of the repeats for each cost: other jobs on the machine only ever add time.
    measured = [client_costs(paths, engine.MAX_BATCH) for _ in range(args.repeat)]
    costs = min(measured, key=lambda item: item.map_seconds)
    costs.merge_seconds = min(item.merge_seconds for item in measured)
    costs.unpickle_seconds = min(item.unpickle_seconds for item in measured)
    costs.finalize_seconds = min(item.finalize_seconds for item in measured)
    costs.batch_seconds = min(item.batch_seconds for item in measured)
    operations = costs.operations

    rows: list[tuple[str, float]] = []
    hashes: set[str] = set()

    def timed(label: str, cli_args: list[str]) -> tuple[float, int]:
        runs = [run_cli(cli_args) for _ in range(args.repeat)]
        hashes.update(run[2] for run in runs)
        seconds = min(run[0] for run in runs)
        rows.append((label, seconds))
        return seconds, max(run[1] for run in runs)

    _, local_rss = timed("`--engine local`", ["--sessions", corpus])
    timed("`--engine processes --jobs 2`", ["--sessions", corpus, "--jobs", "2"])
    timed(
        "`--engine dask --jobs 2` (starts its own local cluster)",
        ["--sessions", corpus, "--engine", "dask", "--jobs", "2"],
    )
    scaling: dict[int, float] = {}
    memory: list[tuple[str, int, int, list[int]]] = []
    overhead = 0.0
    for workers in (1, 2):
        with standing_cluster(workers) as cluster:
            seconds, client_rss = timed(
                f"`--engine dask --scheduler` ({workers} standing worker"
                f"{'s' if workers > 1 else ''})",
                ["--sessions", corpus, "--scheduler", cluster.address],
            )
            scaling[workers] = seconds
            if workers == 2:
                memory.append(("100 %", size, client_rss, cluster.worker_peaks()))
                overhead = min(task_overhead(cluster.address) for _ in range(args.repeat))
    with standing_cluster(2) as cluster:
        _, half_client = run_cli(["--sessions", *half_args, "--scheduler", cluster.address])[:2]
        memory.insert(0, ("50 %", half_size, half_client, cluster.worker_peaks()))
    # Every file twice: twice the bytes, no new distinct keys (refs, signatures, sequences).
    twice = [corpus, corpus]
    with standing_cluster(2) as cluster:
        _, twice_client = run_cli(["--sessions", *twice, "--scheduler", cluster.address])[:2]
        memory.append(("100 %, every file twice", 2 * size, twice_client, cluster.worker_peaks()))
    _, half_local, half_hash = run_cli(["--sessions", *half_args])
    _, twice_local, _ = run_cli(["--sessions", *twice])

    LAUNCH.close()
    if len(hashes) != 1:
        raise SystemExit(f"engines disagree: {sorted(hashes)}")

    megabytes = size / 1e6
    print(
        f"## Scale: engines on {megabytes:.0f} MB ({len(paths)} files, {operations:,} operations)\n"
    )
    print("| run | seconds | x parse floor | MB/s | operations/s |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(
        f"| parse floor: `orjson.loads` over the {trace_lines:,} trace lines "
        f"({mb(trace_bytes)} MB), one core | {floor:.2f} | 1.00 | {megabytes / floor:.0f} |"
        f" {operations / floor:,.0f} |"
    )
    print(
        f"| ingest + measure in process, one core (map only) | {costs.map_seconds:.2f} |"
        f" {costs.map_seconds / floor:.2f} | {megabytes / costs.map_seconds:.0f} |"
        f" {operations / costs.map_seconds:,.0f} |"
    )
    for label, seconds in rows:
        print(
            f"| {label} | {seconds:.2f} | {seconds / floor:.2f} | {megabytes / seconds:.0f} |"
            f" {operations / seconds:,.0f} |"
        )
    print(f"\nEvery run printed the same reportHash `{hashes.pop()}`.")
    print(f"Scaling, standing cluster: 1 -> 2 workers = {scaling[1] / scaling[2]:.2f}x.\n")

    print("| share of the corpus | MB | client peak RSS (MB) | worker peak RSS (MB) |")
    print("| ---: | ---: | ---: | --- |")
    for share, share_size, client_rss, workers_rss in memory:
        print(
            f"| {share} | {mb(share_size)} | {mb(client_rss)} |"
            f" {', '.join(mb(value) for value in workers_rss)} |"
        )
    print(
        f"\n`--engine local` peak RSS: {mb(half_local)} MB on 50 %, {mb(local_rss)} MB on 100 %,"
        f" {mb(twice_local)} MB on every file twice (hash at 50 %: `{half_hash[:12]}…`)."
    )

    per_file_map = costs.map_seconds / costs.files
    per_file_client = (costs.merge_seconds + costs.unpickle_seconds) / costs.files
    print("\nCosts behind the projection (in process, one core):\n")
    print("| quantity | value |")
    print("| --- | ---: |")
    print(f"| map: ingest + measure per MB | {costs.map_seconds / megabytes * 1e3:.2f} ms |")
    print(f"| map: per file ({megabytes / costs.files:.1f} MB) | {per_file_map * 1e3:.1f} ms |")
    print(f"| state sent back per file (pickled) | {costs.pickled_bytes / costs.files:,.0f} B |")
    print(f"| client: unpickle per file | {costs.unpickle_seconds / costs.files * 1e3:.3f} ms |")
    print(f"| client: ordered merge per file | {costs.merge_seconds / costs.files * 1e3:.3f} ms |")
    print(f"| client: finalize (once) | {costs.finalize_seconds * 1e3:.1f} ms |")
    print(
        f"| client: unpickle + merge of one state of {costs.batch_files} combined files"
        f" ({costs.batch_bytes:,} B) | {costs.batch_seconds * 1e3:.3f} ms |"
    )
    print(f"| scheduler + client: per trivial task | {overhead * 1e3:.3f} ms |")

    print(
        f"\nDistinct map entries in the client's root state: {costs.keys_half:,} after 50 %,"
        f" {costs.keys_full:,} after 100 % of the files."
    )

    worker_rate = megabytes / costs.map_seconds
    # Client cost of one task = fixed + per MB of sessions behind its state, fitted through
    # the two measured points (one file; one batch of combined files).
    file_mb_measured = megabytes / costs.files
    per_mb = (costs.batch_seconds - per_file_client) / ((costs.batch_files - 1) * file_mb_measured)
    fixed = max(0.0, per_file_client - per_mb * file_mb_measured)
    print(
        f"\nClient cost model: {fixed * 1e3:.2f} ms per task + {per_mb * 1e3:.3f} ms per MB"
        " of sessions behind the task's state."
    )
    terabyte = 1e6  # MB
    workers = 64
    print(f"\nProjection, 1 TB on {workers} single-core workers (automatic batching):\n")
    print(
        "| mean file size | files | files per task | tasks | map | client merges |"
        " scheduler | bound |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for file_mb in (0.1, 1, 10, 100):
        files = round(terabyte / file_mb)
        batch = engine._batch_size(None, files, workers)
        tasks = -(-files // batch)
        map_seconds = terabyte / (worker_rate * workers)
        client_seconds = tasks * fixed + terabyte * per_mb
        scheduler_seconds = tasks * overhead
        bound = max(
            ("map (CPU, or the storage's read bandwidth)", map_seconds),
            ("client merge", client_seconds),
            ("scheduler", scheduler_seconds),
            key=lambda item: item[1],
        )[0]
        print(
            f"| {file_mb:g} MB | {files:,} | {batch} | {tasks:,} | {map_seconds:,.0f} s |"
            f" {client_seconds:,.0f} s | {scheduler_seconds:,.0f} s | {bound} |"
        )
    balance = terabyte / (worker_rate * terabyte * per_mb)
    print(
        f"\nMap and client merge take equally long at {balance:.0f} workers; beyond that the"
        " client's ordered merge is the bound."
    )
    print(
        f"\nAggregate read rate needed at {workers} workers: "
        f"{worker_rate * workers / 1e3:.1f} GB/s."
    )


if __name__ == "__main__":
    main()
