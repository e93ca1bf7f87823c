"""Pool and compile time against distinct values of one key, and pool bytes for long values.

    python bench/pool_scale.py [--distinct 1250,2500,5000,10000,20000] [--wide 200000]
                               [--long-megabytes 50] [--path CHECKOUT] [--timeout 300]

Part 1 writes one session whose audits give ``mcp.notes.search`` ``query`` N distinct values
(100 audits a line) and times ``pool`` and ``compile --write`` on it, each in its own process
(so start-up is included; the ratio column divides by N to show the growth). Part 2 puts
``--wide`` audits on one line and times ``compile --write``, ``watch --once`` and ``status``.
Part 3 audits one value of ``--long-megabytes`` MB and reports the pool's size. Prints
Markdown for ``docs/reliability.md``. ``--path`` runs another checkout (PYTHONPATH).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SURFACE = REPO / "corpora" / "demo" / "surface.json"


def session_line(number: int, audits: list[dict[str, object]]) -> str:
    trace = {
        "kind": "pi-fabric.execution",
        "version": 1,
        "outcome": "succeeded",
        "phases": ["search"],
        "operations": [
            {
                "type": "call",
                "sequence": 0,
                "ref": "mcp.notes.search",
                "provider": "mcp",
                "action": "notes.search",
                "args": {},
                "outcome": "succeeded",
            }
        ],
        "counts": {
            "droppedValues": 0,
            "truncatedValues": 0,
            "redactedValues": 0,
            "droppedOperations": 0,
        },
    }
    message = {
        "role": "toolResult",
        "toolCallId": f"call-{number}",
        "toolName": "fabric_exec",
        "content": [{"type": "text", "text": "done"}],
        "details": {"success": True, "trace": trace, "audits": audits},
    }
    return json.dumps({"id": f"s-{number}", "type": "message", "message": message}) + "\n"


def audit(value: str) -> dict[str, object]:
    return {"ref": "mcp.notes.search", "tool": "notes.search", "success": True,
            "args": {"query": value}}  # fmt: skip


def write_session(path: Path, values: list[str], per_line: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for start in range(0, len(values), per_line):
            out.write(session_line(start, [audit(v) for v in values[start : start + per_line]]))


class Runner:
    def __init__(self, python: str, path: str, timeout: float) -> None:
        self.python, self.timeout = python, timeout
        self.env = {**os.environ, "PYTHONPATH": path}

    def seconds(self, cwd: Path, *argv: str) -> str:
        """CPU seconds (user + system) of the command's process: the machine is shared, so
        wall time measures the neighbours as much as the command."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            result = subprocess.run(
                [self.python, "-m", "pytest_entropy", *argv],
                env=self.env,
                cwd=cwd,  # not this checkout: -m would import it from the cwd
                capture_output=True,
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return f"> {self.timeout:g} (killed)"
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        elapsed = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return f"{elapsed:.2f}" + (
            "" if result.returncode in (0, 1) else f" (exit {result.returncode})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--distinct", default="1250,2500,5000,10000,20000")
    parser.add_argument("--wide", type=int, default=200_000)
    parser.add_argument("--long-megabytes", type=float, default=50.0)
    parser.add_argument("--path", default=str(REPO))
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    run = Runner(sys.executable, args.path, args.timeout)
    surface = str(SURFACE)
    first: tuple[int, float] | None = None
    print("CPU seconds (user + system) of each command's process, start-up included.")
    print()
    print(
        "| distinct values | `pool` | `compile --write` | compile, above the first row, per 1,000 |"
    )
    print("| ---: | ---: | ---: | ---: |")
    for count in [int(part) for part in args.distinct.split(",") if part]:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "sessions").mkdir()
            write_session(root / "sessions" / "s.jsonl", [f"q{n}" for n in range(count)], 100)
            common = ["--sessions", str(root / "sessions"), "--surface", surface]
            pool = run.seconds(root, "pool", *common, "--out", str(root / "pool.json"))
            compiled = run.seconds(root, "compile", *common, "--write", "--state-dir", "st")
            try:
                if first is None:
                    first = (count, float(compiled))
                    per_thousand = "–"
                else:
                    extra = (float(compiled) - first[1]) / (count - first[0]) * 1000
                    per_thousand = f"{extra:.3f}"
            except ValueError:
                per_thousand = "–"
            print(f"| {count:,} | {pool} | {compiled} | {per_thousand} |")
    if args.wide:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "sessions").mkdir()
            values = [f"q{n}" for n in range(args.wide)]
            write_session(root / "sessions" / "s.jsonl", values, len(values))
            common = ["--sessions", str(root / "sessions"), "--surface", surface]
            print()
            print(f"One line with {args.wide:,} audits (distinct values):")
            print()
            print("| command | CPU seconds |")
            print("| --- | ---: |")
            wide_runs = {
                "compile --write": ["compile", *common, "--write", "--state-dir", "a"],
                "watch --once": ["watch", "--once", *common, "--state-dir", "b"],
                "status": ["status", *common, "--state-dir", "a"],
            }
            for name, argv in wide_runs.items():
                print(f"| `{name}` | {run.seconds(root, *argv)} |")
    if args.long_megabytes:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "sessions").mkdir()
            size = int(args.long_megabytes * 1_000_000)
            write_session(root / "sessions" / "s.jsonl", ["x" * size, "short"], 2)
            common = ["--sessions", str(root / "sessions"), "--surface", surface]
            seconds = run.seconds(root, "compile", *common, "--write", "--state-dir", "st")
            pool_bytes = (root / "st" / "observation-pool.json").stat().st_size
            print()
            print(
                f"One audit value of {size:,} bytes: `compile --write` {seconds} CPU s,"
                f" observation-pool.json {pool_bytes:,} bytes."
            )


if __name__ == "__main__":
    main()
