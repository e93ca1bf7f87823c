"""Benchmark: ingest + measure against the parse floor, process scaling, and peak memory.

    python bench/bench_measure.py [--corpus DIR] [--megabytes 64] [--files 100] [--repeat 3]

It generates (once) a deterministic corpus with ``bench/corpus_gen.py``, then reports:

* the parse floor: ``orjson.loads`` over exactly the corpus's trace lines, one core;
* ``pytest-entropy measure`` wall time (CLI subprocess, best of N) and the in-process
  ingest+measure time, each as a multiple of the floor;
* ``--jobs 1`` versus ``--jobs 2``;
* peak RSS of the CLI on 25 %, 50 % and 100 % of the files (it must stay flat);
* a profile of the in-process run (top functions by own time).

Figures are printed as Markdown for ``docs/performance.md``. Timings are wall-clock on the
machine that runs it; nothing here is a test.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import shutil
import sys
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus_gen import write_corpus  # noqa: E402
from launcher import Launcher  # noqa: E402

from pytest_entropy.run.corpus import measure_plan, read_corpus, source_files  # noqa: E402
from pytest_entropy.sources.locate import expand_session_paths  # noqa: E402

TRACE_MARK = b"pi-fabric.execution"


def ensure_corpus(directory: Path, files: int, megabytes: float) -> None:
    marker = directory / ".complete"
    if marker.exists():
        return
    free = shutil.disk_usage(directory.parent if directory.parent.exists() else Path.cwd()).free
    if free < megabytes * 3e6:
        raise SystemExit(f"not enough free disk for a {megabytes} MB corpus ({free / 1e6:.0f} MB)")
    if directory.exists():
        shutil.rmtree(directory)
    write_corpus(directory, files, megabytes, seed=20261130)
    marker.write_text("ok\n", encoding="utf-8")


def trace_lines(paths: list[Path]) -> list[bytes]:
    lines = []
    for path in paths:
        lines.extend(line for line in path.read_bytes().split(b"\n") if TRACE_MARK in line)
    return lines


def best(repeat: int, action: object) -> float:
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()  # type: ignore[operator]
        timings.append(time.perf_counter() - start)
    return min(timings)


LAUNCH: Launcher | None = None


def run_cli(args: list[str]) -> tuple[float, int]:
    """Wall time and peak RSS (KiB) of one CLI run, forked from the small launcher."""
    if LAUNCH is None:
        raise SystemExit("the launcher is not running")
    result = LAUNCH.run([sys.executable, "-m", "pytest_entropy", *args])
    return result["seconds"], result["maxrss"] // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HERE / "out" / "corpus-64")
    parser.add_argument("--megabytes", type=float, default=64)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    global LAUNCH
    LAUNCH = Launcher()  # started while this process is still small

    ensure_corpus(args.corpus, args.files, args.megabytes)
    paths = expand_session_paths([args.corpus])
    size = sum(path.stat().st_size for path in paths)
    lines = trace_lines(paths)

    def parse_floor() -> None:
        loads = orjson.loads
        for line in lines:
            loads(line)

    floor = best(args.repeat, parse_floor)
    result = read_corpus(source_files(paths), measure_plan())
    report = result.state.finalize()
    operations = report.totals.operations

    in_process = best(
        args.repeat, lambda: read_corpus(source_files(paths), measure_plan()).state.finalize()
    )
    jobs1 = min(
        run_cli(["measure", "--sessions", str(args.corpus), "--jobs", "1"])[0]
        for _ in range(args.repeat)
    )
    jobs2 = min(
        run_cli(["measure", "--sessions", str(args.corpus), "--jobs", "2"])[0]
        for _ in range(args.repeat)
    )
    startup = min(run_cli(["--version"])[0] for _ in range(args.repeat))

    memory = []
    for share in (0.25, 0.5, 1.0):
        subset = [str(path) for path in paths[: max(1, int(len(paths) * share))]]
        subset_size = sum(Path(p).stat().st_size for p in subset)
        _, rss = run_cli(["measure", "--sessions", *subset])
        memory.append((share, subset_size, rss))

    profiler = cProfile.Profile()
    profiler.enable()
    read_corpus(source_files(paths), measure_plan()).state.finalize()
    profiler.disable()
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(12)

    mb = size / 1e6
    print(f"## Ingest + measure ({mb:.1f} MB, {len(paths)} files, {operations} operations)\n")
    print("| measurement | seconds | x parse floor | MB/s | operations/s |")
    print("| --- | ---: | ---: | ---: | ---: |")
    rows = [
        ("parse floor: orjson.loads over the trace lines", floor),
        ("ingest + measure, in process", in_process),
        ("`pytest-entropy measure --jobs 1` (CLI, with start-up)", jobs1),
        ("`pytest-entropy measure --jobs 2` (CLI, with start-up)", jobs2),
    ]
    for label, seconds in rows:
        print(
            f"| {label} | {seconds:.3f} | {seconds / floor:.2f} | {mb / seconds:.1f} |"
            f" {operations / seconds:,.0f} |"
        )
    print(f"\nInterpreter start-up and imports (`--version`): {startup:.3f} s.")
    print(f"Trace lines: {len(lines)} ({sum(map(len, lines)) / 1e6:.1f} MB of the corpus).\n")
    print("| share of files | MB read | peak RSS (MB) |")
    print("| ---: | ---: | ---: |")
    for share, subset_size, rss in memory:
        print(f"| {share:.0%} | {subset_size / 1e6:.1f} | {rss / 1024:.1f} |")
    print("\nProfile of the in-process run (own time):\n")
    print("```")
    print(stream.getvalue().strip())
    print("```")
    LAUNCH.close()


if __name__ == "__main__":
    main()
