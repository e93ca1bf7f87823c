"""A session file with one huge line: it is skipped and counted, never loaded.

    python bench/huge_line.py [--gigabytes 1.0]

Writes a file whose second line is ``--gigabytes`` long (between two ordinary trace lines),
runs ``pytest-entropy measure --json`` on it, and reports the wall time, the CLI's peak RSS,
and the diagnostics: the two ordinary traces count, the huge line is one
``oversizedLines``. Checks free disk first. Prints Markdown for ``docs/reliability.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LINE = (
    '{"details":{"trace":{"kind":"pi-fabric.execution","version":1,"outcome":"succeeded",'
    '"phases":["p"],"operations":[{"type":"call","sequence":0,"ref":"pi.read",'
    '"args":{"path":"a"},"outcome":"succeeded"}],"counts":{"droppedValues":0,'
    '"truncatedValues":0,"redactedValues":0,"droppedOperations":0}}}}\n'
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gigabytes", type=float, default=1.0)
    args = parser.parse_args()
    size = int(args.gigabytes * (1 << 30))
    with tempfile.TemporaryDirectory(dir=Path(__file__).parent) as tmp:
        if shutil.disk_usage(tmp).free < size * 1.2:
            raise SystemExit("not enough free disk for the huge line")
        path = Path(tmp) / "huge.jsonl"
        block = b"x" * (1 << 20)
        with open(path, "wb") as stream:
            stream.write(LINE.encode())
            stream.write(b'{"pi-fabric.execution":"')
            written = 0
            while written < size:
                stream.write(block)
                written += len(block)
            stream.write(b'"}\n')
            stream.write(LINE.encode())
        start = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "pytest_entropy", "measure", "--sessions", str(path), "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out = process.stdout.read() if process.stdout else b""
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        if status != 0:
            raise SystemExit(process.stderr.read().decode() if process.stderr else "failed")
        result = json.loads(out)
        diagnostics = result["diagnostics"]
    print(f"**One session file with a {size / 1e9:.2f} GB line between two traces**\n")
    print("| measurement | value |\n| --- | ---: |")
    print(f"| wall time | {elapsed:.1f} s |")
    print(f"| peak RSS of `pytest-entropy measure` | {usage.ru_maxrss / 1024:.0f} MB |")
    print(f"| lines / oversized lines | {diagnostics['lines']} / {diagnostics['oversizedLines']} |")
    print(f"| traces measured | {result['report']['totals']['traces']} |")


if __name__ == "__main__":
    main()
