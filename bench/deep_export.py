"""Bytes and seconds of ``export`` for schemas nested deeper and deeper.

    python bench/deep_export.py [--depths 1000,5000,20000] [--path CHECKOUT] [--timeout 120]

Each schema is a chain ``{"type": "object", "properties": {"x": ...}}`` ``depth`` times
around ``{"type": "string"}`` (two containers per level), in a one-action surface. Runs
``pytest-entropy export`` from ``--path`` (default: this checkout) in its own process and
prints Markdown for ``docs/reliability.md``: input bytes, bytes written, their ratio and the
seconds. A run past ``--timeout`` (or past the free disk) is reported as such.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def surface_text(depth: int) -> str:
    inner = '{"type":"string"}'
    schema = '{"type":"object","properties":{"x":' * depth + inner + "}}" * depth
    return '{"version":1,"actions":[{"ref":"deep.tool","inputSchema":' + schema + "}]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", default="1000,5000,20000")
    parser.add_argument("--path", default=str(REPO), help="checkout to run (PYTHONPATH)")
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": args.path}
    print("| depth (levels) | input bytes | bytes written | written / input | seconds |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for depth in [int(part) for part in args.depths.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            surface = Path(tmp) / "deep.json"
            surface.write_text(surface_text(depth), encoding="utf-8")
            out = Path(tmp) / "out.json"
            command = [sys.executable, "-m", "pytest_entropy", "export"]
            command += ["--surface", str(surface), "--out", str(out)]
            started = time.monotonic()
            try:
                result = subprocess.run(
                    command, env=env, cwd=tmp, capture_output=True, timeout=args.timeout
                )
                outcome = "" if result.returncode == 0 else f" (exit {result.returncode})"
            except subprocess.TimeoutExpired:
                outcome = f" (killed at {args.timeout:g} s)"
            seconds = time.monotonic() - started
            size_in = surface.stat().st_size
            written = out.stat().st_size if out.exists() else 0
            print(
                f"| {depth:,} | {size_in:,} | {written:,}{outcome} | {written / size_in:.2f}"
                f" | {seconds:.2f} |"
            )


if __name__ == "__main__":
    main()
