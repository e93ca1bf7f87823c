"""A small process that runs benchmark commands and reports their wall time and peak RSS.

Linux keeps a process's RSS high-water mark across exec, so a command forked straight from a
benchmark that holds hundreds of MB reports the benchmark's size as its own peak. Started
before the benchmark grows, this launcher forks each command from a small process instead.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

LAUNCHER = r"""
import json, os, subprocess, sys, tempfile, time
for line in sys.stdin:
    command = json.loads(line)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        result = {
            "status": os.waitstatus_to_exitcode(status),
            "seconds": seconds,
            "maxrss": usage.ru_maxrss * 1024,
            "stdout": out.read().decode(),
            "stderr": err.read().decode()[-4000:],
        }
    print(json.dumps(result), flush=True)
"""


class Launcher:
    """A small helper process that runs commands for us (see ``LAUNCHER``)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", LAUNCHER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, command: list[str], ok: tuple[int, ...] = (0,)) -> dict[str, Any]:
        """Run ``command``; stop the benchmark unless its exit status is one of ``ok``."""
        if self.process.stdin is None or self.process.stdout is None:
            raise SystemExit("the launcher has no pipes")
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        result: dict[str, Any] = json.loads(self.process.stdout.readline())
        if result["status"] not in ok:
            raise SystemExit(f"{command} failed: {result['stderr']}")
        return result

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)
