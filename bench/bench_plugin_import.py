"""What the package costs a process that starts it: the CLI's start-up and the pytest plugin.

The budgets of issue 32, each a ratio of two commands timed in the same run (interleaved, so
a busy machine slows both alike), whole processes with bytecode cached:

* ``pytest-entropy --version`` within 2x of ``python -c pass``;
* ``pytest-entropy measure`` on the demo corpus within 4x of ``python -c pass``;
* a trivial unrelated pytest run (one empty test) within 5% of the same run with
  ``-p no:entropy``, in a fresh venv holding the base install only (what a user's project
  gets; ``tests/install_support.py`` builds it) and in this environment (with every plugin
  the test extra brings).

Each figure is the median over ``--runs`` rounds of wall time and of CPU time (user +
system of the child: less sensitive to other processes than the wall clock). With
``--instructions`` each command also runs once under valgrind's callgrind, whose count of
executed instructions does not depend on the load at all (the figure to compare across
machines and runs; valgrind is Debian's ``valgrind`` package). Also printed: the import time
of ``pytest_entropy.plugin`` once pytest is imported.

Run from the repository root:
    python bench/bench_plugin_import.py [--runs N] [--no-venv] [--instructions]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

DEMO = REPO / "corpora" / "demo"
CLI = "import sys; from pytest_entropy.cli import console_main; sys.exit(console_main())"
IMPORT_SNIPPET = (
    "import time, pytest\n"
    "start = time.perf_counter()\n"
    "import pytest_entropy.plugin\n"
    "print((time.perf_counter() - start) * 1000)\n"
)


def _environment(base_venv: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)}
    if base_venv:
        env.pop("PYTHONPATH", None)
    else:
        env["PYTHONPATH"] = str(REPO)
    return env


def _one(command: Sequence[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU milliseconds of one run of ``command`` (which must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(list(command), cwd=cwd, env=env, capture_output=True)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def interleaved(
    commands: dict[str, Sequence[str]], runs: int, cwd: Path, env: dict[str, str]
) -> dict[str, tuple[float, float]]:
    """``{name: (median wall ms, median CPU ms)}``, the commands taking turns each round
    (after one unmeasured round that writes the bytecode caches)."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for round_number in range(runs + 1):
        for name, command in commands.items():
            sample = _one(command, cwd, env)
            if round_number:
                samples[name].append(sample)
    return {
        name: (
            statistics.median(wall for wall, _ in values),
            statistics.median(cpu for _, cpu in values),
        )
        for name, values in samples.items()
    }


def instructions(command: Sequence[str], cwd: Path, env: dict[str, str]) -> int:
    """Instructions one run of ``command`` executes (valgrind callgrind's total)."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    for line in done.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1].strip())
    raise SystemExit(f"valgrind gave no count for {' '.join(command)}:\n{done.stderr[-2000:]}")


def counted(commands: dict[str, Sequence[str]], cwd: Path, env: dict[str, str]) -> dict[str, int]:
    for command in commands.values():
        _one(command, cwd, env)  # the bytecode caches first, as for the timings
    return {name: instructions(command, cwd, env) for name, command in commands.items()}


def _count_row(label: str, count: int, base: int, budget: float) -> str:
    ratio = count / base
    verdict = "within" if ratio <= budget else "OVER"
    return f"| {label} | {count / 1e6:,.1f} M | {ratio:.3f}x | {budget:g}x | {verdict} |"


def _row(label: str, figure: tuple[float, float], base: tuple[float, float], budget: float) -> str:
    wall_ratio, cpu_ratio = figure[0] / base[0], figure[1] / base[1]
    verdict = "within" if max(wall_ratio, cpu_ratio) <= budget else "OVER"
    return (
        f"| {label} | {figure[0]:.1f} | {figure[1]:.1f} | {wall_ratio:.2f}x | {cpu_ratio:.2f}x "
        f"| {budget:g}x | {verdict} |"
    )


def _cli_commands() -> dict[str, Sequence[str]]:
    python = sys.executable
    measure = ["measure", "--sessions", str(DEMO / "sessions"), "--surface"]
    measure += [str(DEMO / "surface.json"), "--repairs", str(DEMO / "repairs.json")]
    return {
        "pass": [python, "-c", "pass"],
        "version": [python, "-c", CLI, "--version"],
        "measure": [python, "-c", CLI, *measure],
    }


def _plugin_commands(python: str) -> dict[str, Sequence[str]]:
    run = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    return {"without": [*run, "-p", "no:entropy"], "with": run}


def _project(work: Path, label: str) -> Path:
    project = work / f"project-{label.split()[0]}"
    project.mkdir(exist_ok=True)
    (project / "test_one.py").write_text("def test_one():\n    pass\n", encoding="utf-8")
    return project


def instruction_budgets(work: Path, pythons: dict[str, tuple[str, bool]]) -> list[str]:
    compileall.compile_dir(str(REPO / "pytest_entropy"), quiet=1)
    cli = counted(_cli_commands(), work, _environment(False))
    lines = [
        "| command | instructions | ratio | budget | |",
        "| --- | ---: | ---: | ---: | --- |",
        f"| `python -c pass` | {cli['pass'] / 1e6:,.1f} M | 1.000x | | |",
        _count_row("`pytest-entropy --version`", cli["version"], cli["pass"], 2),
        _count_row("`pytest-entropy measure` (demo)", cli["measure"], cli["pass"], 4),
    ]
    for label, (python, base_venv) in pythons.items():
        project = _project(work, label)
        plugin = counted(_plugin_commands(python), project, _environment(base_venv))
        lines.append(
            f"| {label}: `pytest -p no:entropy` | {plugin['without'] / 1e6:,.1f} M | 1.000x | | |"
        )
        loaded = f"{label}: `pytest` (the plugin loaded)"
        lines.append(_count_row(loaded, plugin["with"], plugin["without"], 1.05))
    return lines


def cli_budgets(runs: int, work: Path) -> list[str]:
    compileall.compile_dir(str(REPO / "pytest_entropy"), quiet=1)
    figures = interleaved(_cli_commands(), runs, work, _environment(False))
    base = figures["pass"]
    return [
        "| command | wall ms | CPU ms | wall ratio | CPU ratio | budget | |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
        f"| `python -c pass` | {base[0]:.1f} | {base[1]:.1f} | 1.00x | 1.00x | | |",
        _row("`pytest-entropy --version`", figures["version"], base, 2),
        _row("`pytest-entropy measure` (demo)", figures["measure"], base, 4),
    ]


def plugin_budget(runs: int, work: Path, python: str, label: str, base_venv: bool) -> list[str]:
    project = _project(work, label)
    figures = interleaved(_plugin_commands(python), runs, project, _environment(base_venv))
    without, with_plugin = figures["without"], figures["with"]
    return [
        f"| {label}: `pytest -p no:entropy` | {without[0]:.1f} | {without[1]:.1f} | 1.00x "
        "| 1.00x | | |",
        _row(f"{label}: `pytest` (the plugin loaded)", with_plugin, without, 1.05),
    ]


def import_ms(runs: int, work: Path) -> float:
    samples = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", IMPORT_SNIPPET],
            capture_output=True,
            text=True,
            check=True,
            cwd=work,
            env=_environment(False),
        )
        samples.append(float(out.stdout.strip()))
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--no-venv", action="store_true", help="skip the base-install venv")
    parser.add_argument(
        "--instructions", action="store_true", help="also count instructions under valgrind"
    )
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    print(f"runs: {args.runs} (medians, interleaved); load average at start: {load:.2f}\n")
    with tempfile.TemporaryDirectory() as directory:
        work = Path(directory)
        pythons = {"this env": (sys.executable, False)}
        if not args.no_venv:
            from tests.install_support import make_base_install, venv_python

            venv = work / "base-venv"
            make_base_install(venv)
            pythons = {"base venv": (str(venv_python(venv)), True), **pythons}
        lines = cli_budgets(args.runs, work)
        for label, (python, base_venv) in pythons.items():
            lines += plugin_budget(args.runs, work, python, label, base_venv)
        plugin_import = import_ms(args.runs, work)
        counts = instruction_budgets(work, pythons) if args.instructions else []
    print("\n".join(lines))
    if counts:
        print("\ninstructions executed (valgrind callgrind, one run each):\n")
        print("\n".join(counts))
    print(f"\nimport pytest_entropy.plugin after pytest: {plugin_import:.1f} ms")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
