"""Throughput of the native parser against orjson and the plain Python reader, and a live
differential check on real session lines (docs/native-core.md has the figures).

Needs ``pytest_entropy._core`` importable (a wheel built by maturin, or its ``.so`` copied
into ``pytest_entropy/``). Run from the repository root::

    PYTHONPATH=$PWD /tmp/cold/bin/python native/bench_parse.py ../shared/corpora/pi-sessions
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

import orjson

from pytest_entropy import _core  # type: ignore[attr-defined]
from pytest_entropy.ingest.jsonparse import parse_json_bytes

REPEAT_TO = 64 << 20  # bytes of lines per timing, as bench_commands' corpus size


def same(a: Any, b: Any) -> bool:
    """Equal values with equal types and the same dict order (1 == 1.0 is not enough)."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b) or (a != a and b != b)


def timed(label: str, parse: Callable[[bytes], Any], lines: list[bytes], size: int) -> float:
    start = time.perf_counter()
    for line in lines:
        # orjson refuses what the fallback reads; the others refuse junk.
        with suppress(ValueError):
            parse(line)
    seconds = time.perf_counter() - start
    print(f"{label:<34} {seconds:7.3f} s  {size / seconds / 1e6:8.1f} MB/s")
    return seconds


def main(folders: list[str]) -> None:
    files = sorted(p for folder in folders for p in Path(folder).rglob("*.jsonl"))
    data = b"".join(p.read_bytes() for p in files)
    lines, _ = _core.split_lines(data)
    lines = [line for line in lines if line]
    differ = 0
    for line in lines:
        try:
            expected = parse_json_bytes(line)
        except ValueError:
            expected = None
        try:
            got = _core.parse_json(line)
        except ValueError:
            got = None
        if (expected is None) != (got is None) or (
            expected is not None and (expected[1] != got[1] or not same(expected[0], got[0]))
        ):
            differ += 1
    print(f"{len(files)} files, {len(lines)} lines, {len(data) / 1e6:.1f} MB; differing: {differ}")
    copies = max(1, REPEAT_TO // len(data))
    corpus = lines * copies
    size = len(data) * copies
    print(f"timing {copies} copies: {size / 1e6:.0f} MB, {len(corpus)} lines")
    base = timed("orjson.loads", orjson.loads, corpus, size)
    native = timed("_core.parse_json", _core.parse_json, corpus, size)
    timed("parse_json_bytes (the specification)", parse_json_bytes, corpus, size)
    print(f"native / orjson: {native / base:.2f}")
    blob = data * copies
    start = time.perf_counter()
    _core.split_lines(blob)
    split = time.perf_counter() - start
    start = time.perf_counter()
    blob.split(b"\n")
    py_split = time.perf_counter() - start
    print(f"split_lines {split:.3f} s, bytes.split {py_split:.3f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
