"""Benchmark: a separate-process Dask cluster and an S3 API server, against the local run.

    python bench/bench_cluster_s3.py [--megabytes 128] [--files 128] [--repeat 1]

Needs the dask and test extras (``moto[server]``, ``s3fs``). Starts, on loopback, a moto S3
server and a ``dask scheduler`` with two single-threaded ``dask worker`` processes (the
services of the cluster tests, ``tests/cluster_support.py``), uploads the corpus that
``bench/bench_scale.py`` generates (cached under ``bench/out/``), then times ``measure`` and
``propose`` as CLI subprocesses from disk and from ``s3://``, on the local engine and on the
cluster. Every variant must print the same bytes, or the benchmark stops. Reports, as
Markdown for ``docs/performance.md``: wall time, MB/s, the client's peak RSS, and the peak
RSS of each worker and of the S3 server during the command (sampled every 50 ms).

Everything shares the machine's cores: the client, the scheduler, both workers and the S3
server. Timings are wall-clock on the machine that runs it; nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from bench_distributed import SURFACE  # noqa: E402
from bench_scale import ensure_corpus  # noqa: E402
from launcher import Launcher  # noqa: E402

from pytest_entropy.sources.locate import expand_session_paths  # noqa: E402
from tests.cluster_support import dask_cluster, moto_s3  # noqa: E402

BUCKET = "entropy-bench"


@contextmanager
def peak_rss(pids: dict[str, int]) -> Iterator[dict[str, int]]:
    """The peak RSS of each named process while the block runs (sampled every 50 ms)."""
    import psutil  # a dependency of distributed

    processes = {name: psutil.Process(pid) for name, pid in pids.items()}
    peaks = dict.fromkeys(pids, 0)
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            for name, process in processes.items():
                with suppress(psutil.Error):
                    peaks[name] = max(peaks[name], process.memory_info().rss)
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield peaks
    finally:
        done.set()
        sampler.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=128)
    parser.add_argument("--files", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    launch = Launcher()
    corpus = HERE / "out" / f"corpus-scale-{args.megabytes:g}"
    ensure_corpus(corpus, args.files, args.megabytes)
    paths = expand_session_paths([corpus])
    megabytes = sum(path.stat().st_size for path in paths) / 1e6
    cli = [sys.executable, "-m", "pytest_entropy"]

    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        surface = scratch / "surface.json"
        surface.write_text(json.dumps(SURFACE))
        with moto_s3(scratch / "moto.log") as s3, dask_cluster(scratch / "dask") as cluster:
            filesystem = s3.filesystem()
            filesystem.mkdir(BUCKET)
            started = time.perf_counter()
            filesystem.put([str(path) for path in paths], f"{BUCKET}/corpus/")
            upload = time.perf_counter() - started
            storage = ["--storage-options", json.dumps(s3.storage_options())]
            url = f"s3://{BUCKET}/corpus/"
            scheduler = ["--scheduler", cluster.address]
            variants = [
                ("disk", "local", [str(corpus)], []),
                ("S3", "local", [url], storage),
                ("S3, `--format fabric`", "local", [url], [*storage, "--format", "fabric"]),
                ("disk", "cluster (2 workers)", [str(corpus)], scheduler),
                ("S3", "cluster (2 workers)", [url], [*storage, *scheduler]),
                (
                    "S3, `--format fabric`",
                    "cluster (2 workers)",
                    [url],
                    [*storage, *scheduler, "--format", "fabric"],
                ),
            ]
            pids = {"worker 0": cluster.workers[0].pid, "worker 1": cluster.workers[1].pid}
            pids["S3 server"] = s3.process.pid
            rows: list[tuple[str, str, str, float, int, dict[str, int]]] = []
            for command in ("measure", "propose"):
                outputs: set[str] = set()
                for source, engine, sessions, extra in variants:
                    argv = [*cli, command, "--sessions", *sessions, "--surface", str(surface)]
                    argv += ["--json", *extra]
                    runs = []
                    for _ in range(args.repeat):
                        with peak_rss(pids) as peaks:
                            result = launch.run(argv)
                        runs.append((result, dict(peaks)))
                    # The pool names files by path or URL; measure and propose do not.
                    outputs.update(result["stdout"] for result, _ in runs)
                    fastest = min(runs, key=lambda run: run[0]["seconds"])
                    rows.append(
                        (
                            command,
                            source,
                            engine,
                            fastest[0]["seconds"],
                            max(result["maxrss"] for result, _ in runs),
                            {name: max(peaks[name] for _, peaks in runs) for name in pids},
                        )
                    )
                if len(outputs) != 1:
                    raise SystemExit(f"the variants disagree on {command}")
            logs = cluster.logs()
    launch.close()
    secret = s3.storage_options()["secret"]
    if secret in logs:
        raise SystemExit("a worker or scheduler log shows the secret key")

    print(
        f"corpus: {len(paths)} files, {megabytes:.0f} MB; upload to the S3 server "
        f"{upload:.1f} s ({megabytes / upload:.0f} MB/s)\n"
    )
    print(
        "| command | sessions | engine | seconds | MB/s | client peak RSS (MB) "
        "| worker peak RSS (MB) | S3 server peak RSS (MB) |"
    )
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for command, source, engine, seconds, client, peaks in rows:
        workers = f"{peaks['worker 0'] / 1e6:.0f} / {peaks['worker 1'] / 1e6:.0f}"
        if engine == "local":
            workers = "idle"
        print(
            f"| {command} | {source} | {engine} | {seconds:.2f} | {megabytes / seconds:.0f} "
            f"| {client / 1e6:.1f} | {workers} | {peaks['S3 server'] / 1e6:.0f} |"
        )
    print("\nEvery variant printed the same bytes for each command.")


if __name__ == "__main__":
    main()
