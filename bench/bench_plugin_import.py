"""What loading the pytest plugin costs a project that does not use it.

Two figures, each the median of several fresh interpreters:

* the import time of ``pytest_entropy.plugin`` once pytest itself is imported (what the
  ``pytest11`` entry point adds to every pytest start);
* the wall time of ``pytest --collect-only`` on a one-test project with and without the
  plugin (plugin autoloading off, the plugin named with ``-p``), so other installed plugins
  do not blur the difference.

Run from the repository root:  python bench/bench_plugin_import.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IMPORT_SNIPPET = (
    "import time, pytest\n"
    "start = time.perf_counter()\n"
    "import pytest_entropy.plugin\n"
    "print((time.perf_counter() - start) * 1000)\n"
)


def import_ms(runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", IMPORT_SNIPPET], capture_output=True, text=True, check=True
        )
        samples.append(float(out.stdout.strip()))
    return samples


def collect_ms(project: Path, extra: list[str], runs: int) -> list[float]:
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "--co", "-p", "no:cacheprovider", *extra]
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, cwd=project, env=env, capture_output=True, check=True)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as directory:
        project = Path(directory)
        (project / "test_one.py").write_text("def test_one():\n    pass\n")
        without = collect_ms(project, [], runs)
        with_plugin = collect_ms(project, ["-p", "pytest_entropy.plugin"], runs)
    imports = import_ms(runs)
    print(f"runs: {runs} (medians)")
    print(f"import pytest_entropy.plugin after pytest: {statistics.median(imports):.1f} ms")
    print(f"pytest --co, one test, without the plugin: {statistics.median(without):.1f} ms")
    print(f"pytest --co, one test, with the plugin:    {statistics.median(with_plugin):.1f} ms")
    delta = statistics.median(with_plugin) - statistics.median(without)
    print(f"difference: {delta:+.1f} ms")


if __name__ == "__main__":
    main()
