"""Ctrl-C while the command line starts (its imports, the parser build) ends the run with
status 130 and one line, never a traceback (issue 26, item 16).

The interrupt is made deterministic without a sitecustomize or a sleep: a meta-path finder
installed before the entry point runs sends the process a real SIGINT (``os.kill``) the
moment a chosen module is about to be imported, so Python's own handler raises
``KeyboardInterrupt`` inside that import, exactly as a Ctrl-C at that instant would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "corpora" / "demo"

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGINT") or os.name != "posix", reason="POSIX")

DRIVER = """
import importlib.abc, os, runpy, signal, sys

target, entry, marker = sys.argv[1:4]
argv = sys.argv[4:]


class InterruptAt(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target_module=None):
        if name == target and not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGINT)  # Python raises KeyboardInterrupt here
        return None


sys.meta_path.insert(0, InterruptAt())
if entry == "console":  # what the pytest-entropy console script runs
    sys.argv = ["pytest-entropy", *argv]
    from pytest_entropy.cli import main

    sys.exit(main())
sys.argv = ["pytest_entropy", *argv]  # python -m pytest_entropy
runpy.run_module("pytest_entropy", run_name="__main__", alter_sys=True)
"""

# From the first heavy import to the parser build, the configuration and the command's run.
# The parser imports the one command that runs (issue 32): measure's module, never watch's.
TARGETS = [
    "pytest_entropy.cli.app",
    "pytest_entropy.core.meter",
    "pytest_entropy.run.executor",
    "pytest_entropy.state.config",
    "pytest_entropy.cli.reports",
    "pytest_entropy.cli.commands.measure",
    "pytest_entropy.cli.configured",
]


def _drive(cwd: Path, target: str, entry: str, marker: Path) -> subprocess.CompletedProcess[str]:
    """Run DRIVER: the demo's measure through ``entry``, a SIGINT as ``target`` is imported."""
    argv = ["measure", "--sessions", str(DEMO / "sessions")]
    argv += ["--surface", str(DEMO / "surface.json")]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.run(
        [sys.executable, "-c", DRIVER, target, entry, str(marker), *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("entry", ["console", "module"])
@pytest.mark.parametrize("target", TARGETS)
def test_an_interrupt_during_start_up_exits_130_with_one_line(
    tmp_path: Path, target: str, entry: str
) -> None:
    marker = tmp_path / "interrupted"
    done = _drive(tmp_path, target, entry, marker)
    assert marker.exists(), f"{target} was never imported: the test proves nothing"
    assert (done.returncode, done.stderr, done.stdout) == (130, "pytest-entropy: interrupted\n", "")


def test_without_an_interrupt_the_driver_runs_the_command(tmp_path: Path) -> None:
    """The driver itself is harmless: a target that is never imported changes nothing."""
    done = _drive(tmp_path, "no.such.module", "console", tmp_path / "m")
    assert done.returncode == 0, done.stderr
    assert "entropy" in done.stdout
