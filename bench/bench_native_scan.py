"""``measure`` in process on the Rust core, on the plain path and the orjson parse floor.

    python bench/bench_native_scan.py /tmp/corpus [--surface S] [--repeat 3] [--rss] [--scan]

Paths: ``native`` (the Rust core) and ``plain`` (the Rust core off:
``PYTEST_ENTROPY_PURE=1``). The C kernels and the Python fast paths that once made a third
path (``default-no-core``) are gone (issue 28). The floor parses every non-empty line
with ``orjson.loads``. Each figure is the best CPU time of ``--repeat`` runs; ``--rss`` measures the
peak RSS of each path in a fresh process. ``--scan`` times the Rust scan alone instead: each
file's bytes fed to one ``TraceScanner`` and its meter merged into one, no command around it
(what the core itself costs against the floor).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import orjson  # noqa: E402

from pytest_entropy.cli.app import main  # noqa: E402
from pytest_entropy.core.native_core import core, use_native_core  # noqa: E402

PATHS = {"native": True, "plain": False}


def floor(corpus: Path) -> None:
    for path in sorted(corpus.glob("*.jsonl")):
        with open(path, "rb") as handle:
            for line in handle:
                if line.strip():
                    orjson.loads(line)


def measure(corpus: Path, surface: Path | None, path: str) -> str:
    use_native_core(PATHS[path])
    argv = ["measure", "--sessions", str(corpus), "--json"]
    if surface is not None:
        argv += ["--surface", str(surface)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(argv)
    if status not in (0, 1):
        raise SystemExit(f"measure exited {status}")
    return str(json.loads(out.getvalue())["reportHash"])


def scan(corpus: Path) -> int:
    """The Rust scan alone: every file read whole, scanned, its meter merged into one."""
    native = core()
    assert native is not None
    total = native.NativeMeter()
    for path in sorted(corpus.glob("*.jsonl")):
        scanner = native.TraceScanner()
        scanner.feed(path.read_bytes())
        scanner.finish()
        total.merge(scanner.take_meter())
    return int(total.traces)


def best(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        action()
        times.append(time.process_time() - start)
    return min(times)


def peak_rss(corpus: Path, surface: Path | None, path: str) -> int:
    code = (
        "import sys, resource; sys.path.insert(0, sys.argv[1]);"
        "from bench.bench_native_scan import measure; from pathlib import Path;"
        "surface = None if sys.argv[3] == '-' else Path(sys.argv[3]);"
        "measure(Path(sys.argv[2]), surface, sys.argv[4]);"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    args = [sys.executable, "-c", code, str(REPO), str(corpus), str(surface or "-"), path]
    out = subprocess.run(args, capture_output=True, text=True, check=True, cwd=REPO)
    return int(out.stdout.split()[-1])


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--surface", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rss", action="store_true")
    parser.add_argument("--paths", nargs="*", default=list(PATHS))
    parser.add_argument("--scan", action="store_true", help="time the Rust scan alone")
    options = parser.parse_args()
    if core() is None:
        raise SystemExit("the Rust core is not built (see docs/native-core.md)")
    size = sum(p.stat().st_size for p in options.corpus.glob("*.jsonl")) / 1e6
    base = best(lambda: floor(options.corpus), options.repeat)
    print(f"corpus {options.corpus}: {size:.1f} MB; orjson floor {base:.3f} s")
    if options.scan:
        seconds = best(lambda: scan(options.corpus), options.repeat)
        traces = scan(options.corpus)
        print(f"{'scan':16} {seconds:7.3f} s  {seconds / base:5.2f} x floor  ({traces:,} traces)")
        return
    hashes = set()
    for path in options.paths:
        hashes.add(measure(options.corpus, options.surface, path))
        seconds = best(
            functools.partial(measure, options.corpus, options.surface, path), options.repeat
        )
        line = f"{path:16} {seconds:7.3f} s  {seconds / base:5.2f} x floor"
        if options.rss:
            line += f"  peak RSS {peak_rss(options.corpus, options.surface, path) / 1024:6.1f} MB"
        print(line, flush=True)
    print("report hashes agree" if len(hashes) == 1 else f"REPORT HASHES DIFFER: {hashes}")


if __name__ == "__main__":
    main_bench()
