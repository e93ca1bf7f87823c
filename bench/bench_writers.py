"""The JSON writers of ``core/canonical.py`` alone, on big documents, with and without the core.

    python bench/bench_writers.py --report R.json --pool P.json --surface S.json [--repeat 5]

Each document is read once (``json.loads``); then each writer - ``canonical_json``,
``stable_json_hash``, ``js_stringify`` and ``file_text`` - writes it on the ``default``
path (the Rust core where it is built and in use) and on the ``plain`` one (the core off,
as ``PYTEST_ENTROPY_PURE=1``), and the two texts are compared. ``schemas`` is
``stable_json_hash`` of every action's ``inputSchema`` of the surface, one call each (the
digests trial keys its checks by). Each figure is the median of ``--repeat`` runs, in ms.
Make the documents with ``pytest-entropy measure --json`` and ``pytest-entropy pool --out``
on a corpus (``bench/real_call_corpus.py``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pytest_entropy.core import canonical  # noqa: E402
from pytest_entropy.core.native_core import use_native_core  # noqa: E402

WRITERS: dict[str, Callable[[Any], Any]] = {
    "canonical_json": canonical.canonical_json,
    "stable_json_hash": canonical.stable_json_hash,
    "js_stringify": canonical.js_stringify,
    "file_text": canonical.file_text,
}


def _median_ms(function: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    samples = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples), result


def _on_path(native: bool, function: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    previous = use_native_core(native)
    try:
        return _median_ms(function, repeat)
    finally:
        use_native_core(previous)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, required=True)
    parser.add_argument("--pool", type=Path, required=True)
    parser.add_argument("--surface", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    documents = {
        name: json.loads(path.read_text(encoding="utf-8"))
        for name, path in (("report", args.report), ("pool", args.pool))
    }
    schemas = [action["inputSchema"] for action in json.loads(args.surface.read_text())["actions"]]
    cases: list[tuple[str, Callable[[], Any]]] = []
    for name, document in documents.items():
        for writer, function in WRITERS.items():
            cases.append((f"{name} {writer}", lambda f=function, d=document: f(d)))
    cases.append(
        (
            f"schemas stable_json_hash ({len(schemas)})",
            lambda: list(map(canonical.stable_json_hash, schemas)),
        )
    )
    print("| case | default (ms) | plain (ms) | plain / default |")
    print("| --- | ---: | ---: | ---: |")
    for name, function in cases:
        default_ms, default_result = _on_path(True, function, args.repeat)
        plain_ms, plain_result = _on_path(False, function, args.repeat)
        if default_result != plain_result:
            raise SystemExit(f"{name}: the two paths wrote different text")
        print(f"| {name} | {default_ms:.1f} | {plain_ms:.1f} | {plain_ms / default_ms:.1f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
