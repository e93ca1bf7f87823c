"""Benchmark: an incremental scan costs time proportional to the appended bytes.

    python bench/bench_incremental.py [--megabytes 50] [--appends 64 256 1024 4096]

Writes one session file of about ``--megabytes`` (deterministic), reads it once through the
evidence cache, then for each append size appends that many kilobytes of session lines and
times the next read (best of 5 successive appends; the file keeps growing). A full scan of
the whole file is timed for comparison. Prints Markdown for ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus_gen import session_lines  # noqa: E402

from pytest_entropy.sources.incremental import EvidenceCache  # noqa: E402
from pytest_entropy.sources.scan import read_file_evidence  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=50)
    parser.add_argument("--appends", type=int, nargs="+", default=[64, 256, 1024, 4096])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "live.jsonl"
        with open(path, "w", encoding="utf-8", newline="\n") as stream:
            for line in session_lines(rng, int(args.megabytes * 1e6), 0):
                stream.write(line + "\n")
        size = path.stat().st_size
        pool_text = "".join(
            line + "\n" for line in session_lines(random.Random(12), max(args.appends) * 1024, 1)
        ).encode()
        start = time.perf_counter()
        full = read_file_evidence(path)
        full_seconds = time.perf_counter() - start
        assert full is not None
        rows = []
        cache = EvidenceCache()
        cache.read(path)
        with open(path, "ab") as stream:  # warm-up: one small append
            stream.write(pool_text[: pool_text.index(b"\n") + 1])
        cache.read(path)
        for kilobytes in args.appends:
            chunk = pool_text[: kilobytes * 1024]
            chunk = chunk[: chunk.rfind(b"\n") + 1]
            timings = []
            for _ in range(args.repeat):
                with open(path, "ab") as stream:
                    stream.write(chunk)
                begin = time.perf_counter()
                read = cache.read(path)
                timings.append(time.perf_counter() - begin)
                if read.mode != "appended" or read.bytes_scanned != len(chunk):
                    raise SystemExit(f"unexpected read: {read.mode} {read.bytes_scanned}")
            rows.append((kilobytes, len(chunk), min(timings)))
        grown = path.stat().st_size
        unchanged = EvidenceCache()
        unchanged.read(path)
        begin = time.perf_counter()
        assert unchanged.read(path).mode == "reused"
        reuse_seconds = time.perf_counter() - begin
    print(f"## Incremental scans of a {size / 1e6:.1f} MB live session file\n")
    print(f"(the file grew to {grown / 1e6:.1f} MB over the appends)\n")
    print(f"Full scan of the file: {full_seconds:.3f} s ({size / 1e6 / full_seconds:.0f} MB/s).")
    print(f"Unchanged file (cache hit): {reuse_seconds * 1e3:.3f} ms.\n")
    print("| appended | bytes scanned | seconds | MB/s of appended data | share of a full scan |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for kilobytes, scanned, seconds in rows:
        print(
            f"| {kilobytes} KiB | {scanned:,} | {seconds:.4f} | {scanned / 1e6 / seconds:.0f} |"
            f" {seconds / full_seconds:.2%} |"
        )


if __name__ == "__main__":
    main()
