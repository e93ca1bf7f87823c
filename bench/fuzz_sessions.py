"""Long-running session fuzzer: generated session files never crash the scanner.

    python bench/fuzz_sessions.py [--files 100000] [--seed 1] [--jobs 2]

Each generated file mixes valid trace and model lines with hostile ones: random bytes,
truncated JSON, valid JSON of the wrong shape, traces that break each guard rule, huge
numbers, NaN/Infinity literals, lone surrogates, deep nesting, CRLF endings and a missing
trailing newline. For every file it checks that (1) no exception escapes the scanner (measure
path and evidence path), (2) every line is accounted for in the diagnostics, and (3) the
report equals the report of the valid lines alone. Prints the counts as Markdown for
``docs/reliability.md``.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

COUNTS = {"droppedValues": 0, "truncatedValues": 0, "redactedValues": 0, "droppedOperations": 0}
REFS = ["pi.read", "mcp.report.render", "memory.expand", "fabric.discovery.search", "\U0001f600.x"]


def break_guard(value: dict[str, Any], rule: int) -> None:
    """Break one trace-guard rule of spec §1.2 in place (rules 0-19)."""
    envelope_rules: list[tuple[str, Any]] = [
        ("extra", 1),
        ("kind", "other"),
        ("version", True),
        ("version", 2),
        ("outcome", "cancelled"),
        ("phases", [1]),
        ("error", None),
    ]
    if rule < len(envelope_rules):
        key, bad = envelope_rules[rule]
        value[key] = bad
        return
    rule -= len(envelope_rules)
    counts_rules: list[tuple[str, Any]] = [
        ("extra", 0),
        ("droppedValues", -1),
        ("droppedValues", 0.5),
        ("droppedValues", 2**53),
    ]
    if rule < len(counts_rules):
        key, bad = counts_rules[rule]
        value["counts"][key] = bad
        return
    rule -= len(counts_rules)
    if rule == 0:
        value.pop("phases")
        return
    if rule == 1:
        value.pop("operations")
        return
    operations = value["operations"]
    if not operations:
        value["kind"] = 5
        return
    first = operations[0]
    deep: Any = 1
    for _ in range(15):
        deep = [deep]
    operation_rules: list[tuple[str, Any]] = [
        ("type", "x"),
        ("normalization", {}),
        ("failureStage", "unknown"),
        ("args", []),
        ("args", {"a": deep}),
        ("resultTruncated", None),
    ]
    key, bad = operation_rules[min(rule - 2, len(operation_rules) - 1)]
    first[key] = bad


GUARD_RULES = 20


def trace(rng: random.Random) -> dict[str, Any]:
    operations = []
    for sequence in range(rng.randrange(0, 5)):
        op: dict[str, Any] = {
            "type": "call",
            "sequence": sequence * rng.choice([1, 2]),
            "ref": rng.choice(REFS),
            "args": rng.choice(
                [{}, {"path": "a"}, {"n": rng.random() * 1e6}, {"x": [1, {"y": None}]}]
            ),
            "outcome": rng.choice(["succeeded", "failed", "aborted", "timed_out"]),
        }
        if op["outcome"] == "failed" and rng.random() < 0.7:
            op["failureStage"] = rng.choice(["resolve", "prepare", "validate", "invoke"])
        operations.append(op)
    return {
        "kind": "pi-fabric.execution",
        "version": 1,
        "outcome": "succeeded",
        "phases": rng.choice([[], ["build"], ["fix", "x"]]),
        "operations": operations,
        "counts": dict(COUNTS),
    }


def line_of(trace_value: dict[str, Any], rng: random.Random) -> bytes:
    audits = [{"ref": "pi.read", "args": {"path": "a"}}]
    details: dict[str, Any] = {"trace": trace_value, "audits": audits}
    record: dict[str, Any] = {"details": details}
    if rng.random() < 0.7:
        record = {"type": "message", "message": {"details": details}}
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()


def hostile(rng: random.Random, base: bytes) -> bytes:
    kind = rng.randrange(9)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80))).replace(b"\n", b"")
    if kind == 1:
        return base[: rng.randrange(0, max(1, len(base) - 1))]
    if kind == 2:
        return b'["pi-fabric.execution",{"details":{"trace":5}}]'
    if kind == 3:
        broken = trace(rng)
        break_guard(broken, rng.randrange(GUARD_RULES))
        return line_of(broken, rng)
    if kind == 4:
        return base.replace(b'"version":1', b'"version":NaN', 1)
    if kind == 5:
        return b'{"details":{"trace":{"kind":"pi-fabric.execution","version":1e400}}}'
    if kind == 6:
        return b'{"pi-fabric.execution":' + b"[" * rng.randrange(900, 3000) + b"}"
    if kind == 7:
        return base.replace(b'"kind"', b'"k\\udc00":1,"kind"', 1)
    return b"\xef\xbb\xbf" + base[:-3]


def one_file(seed: int) -> tuple[int, int, int]:
    """(crashes, accounting failures, report mismatches) for one generated file."""
    from pytest_entropy.core.meter import MeterState, report_hash
    from pytest_entropy.ingest.native import SessionScanner

    rng = random.Random(seed)
    good: list[bytes] = []
    everything: list[bytes] = []
    for _ in range(rng.randrange(1, 12)):
        if rng.random() < 0.15:
            model = {"type": "model_change", "provider": "p", "modelId": rng.choice("ab")}
            line = json.dumps(model, separators=(",", ":")).encode()
        else:
            line = line_of(trace(rng), rng)
        ending = b"\r" if rng.random() < 0.2 else b""
        good.append(line + ending)
        everything.append(line + ending)
        if rng.random() < 0.6:
            everything.append(hostile(rng, line))
    data = b"\n".join(everything) + (b"\n" if rng.random() < 0.5 else b"")
    try:
        state = MeterState()
        scanner = SessionScanner(meter=state, on_audit=lambda _c: None, on_value=lambda _v: None)
        scanner.scan_stream(io.BytesIO(data))
        generic = MeterState()
        SessionScanner(meter=generic, accelerate=False).scan_stream(io.BytesIO(data))
        clean = MeterState()
        SessionScanner(meter=clean).scan_stream(io.BytesIO(b"\n".join(good) + b"\n"))
    except Exception:
        return 1, 0, 0
    d = scanner.diagnostics
    expected_lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    accounted = d.empty_lines + d.ignored_lines + d.model_lines + d.trace_lines + d.oversized_lines
    accounting = int(d.lines != expected_lines or accounted != d.lines)
    hashes = {report_hash(s.finalize()) for s in (state, clean, generic)}
    same = len(hashes) == 1
    return 0, accounting, int(not same)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    started = time.monotonic()
    seeds = range(args.seed * 10_000_000, args.seed * 10_000_000 + args.files)
    totals = [0, 0, 0]
    with ProcessPoolExecutor(args.jobs) as pool:
        for result in pool.map(one_file, seeds, chunksize=500):
            for index, value in enumerate(result):
                totals[index] += value
    elapsed = time.monotonic() - started
    title = f"Session fuzzing: {args.files:,} generated files (seed {args.seed}), {elapsed:.0f} s"
    print(f"**{title}**\n")
    print("| outcome | files |\n| --- | ---: |")
    print(f"| exceptions escaping the scanner | {totals[0]} |")
    print(f"| lines not accounted for in the diagnostics | {totals[1]} |")
    print(f"| report differs from the valid lines alone, or between decoders | {totals[2]} |")


if __name__ == "__main__":
    main()
