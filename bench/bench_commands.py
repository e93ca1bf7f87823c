"""Benchmark: every corpus command against the parse floor, with CPU time and peak RSS.

    python bench/bench_commands.py [--cache DIR] [--copies 12] [--repeat 3] [--only NAME ...]
                                   [--corpus generated|real|both] [--real-mb 64]
                                   [--no-rss] [--profile NAME]

Two corpora, one after the other (``--corpus``). The real-call corpus is built by
``bench/real_call_corpus.py``: Pi, Claude Code and tau-bench sessions, many calls a trace
line. The generated corpus (built once, cached under ``--cache``, by default
``/tmp/pytest-entropy-bench``, outside the repository): the BFCL 2024 leaderboard results
of ``../shared/corpora`` converted to native session JSONL with ``pytest-entropy convert``
against the ``questions_v1`` surface, one session file per model (its twelve category files
in order), repeated ``--copies`` times (12 models x 12 copies = 144 files). Entries that
hold no call (the prompt-style models' raw strings: no operation and no audit) are left out,
so the corpus is made of tool calls (about 60 MB, 106,104 trace lines, 169,068 operations).

Each command runs in this process through ``pytest_entropy.cli.main`` with the default
engine (``--jobs 1``, local), once as a warm-up and then ``--repeat`` times; its best wall
time and its CPU time (``time.process_time``, which the machine's other load does not
inflate) are printed as multiples of the parse floor measured the same way in the same run
(read every file, ``orjson.loads`` every line; best of ``--repeat``). ``main()`` builds
every cache it uses afresh, so each repeat does the full work.

Peak RSS is measured apart: each command runs once more as its own process, forked from
the small launcher of ``bench/launcher.py`` (``wait4``'s ``ru_maxrss``), so the figure is
the command's own high-water mark, interpreter and imports included.

``watch --once`` runs against a copy of the newest twelve files (its window is the eight
newest), first on an unchanged window and then after one turn was appended to the newest
file; both are a new ``main()``, so neither can reuse an earlier read. The in-process compile
loop (``CompileLoop.tick``) is timed too: an unchanged window (a cache hit per file) and one
appended turn (only the appended bytes are scanned).

Nothing here is a test; ``docs/performance.md`` records the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from launcher import Launcher  # noqa: E402

from pytest_entropy.cli import main  # noqa: E402

CORPORA = REPO.parent / "shared" / "corpora"
RESULTS = "bfcl-results-2024-08/result"
QUESTIONS = "bfcl-results-2024-08/questions_v1"
TRACE_MARK = b'"kind":"pi-fabric.execution"'
EMPTY_TRACE = (b'"operations":[]', b'"audits":[]')

# Reference figures of the issue (same kind of corpus, same machine kind), seconds.
REFERENCE = {"measure": 1.99, "propose": 2.86, "compile": 3.08, "trial": 3.90, "pool": 3.00}
# Goals as multiples of the parse floor (issue 28; issue 18's were 1.5, 2.9, 3.1, 3.9, 3.0).
GOALS = {"measure": 0.5, "propose": 0.8, "compile": 1.2, "trial": 1.5, "pool": 0.8}


# ------------------------------------------------------------------------------ corpus


def _convert(corpora: Path, work: Path) -> tuple[Path, Path]:
    if not (corpora / RESULTS).is_dir():
        raise SystemExit(f"the BFCL 2024 results are missing ({corpora / RESULTS})")
    from pytest_entropy.ingest.surfaces import load_surface

    surface_path = work / "surface.json"
    if not surface_path.exists():
        surface = load_surface(corpora / QUESTIONS)
        surface_path.write_text(json.dumps(surface, sort_keys=True), encoding="utf-8")
    converted = work / "converted"
    if not (converted / ".complete").exists():
        shutil.rmtree(converted, ignore_errors=True)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            status = main(
                [
                    "convert",
                    "--sessions",
                    str(corpora / RESULTS),
                    "--format",
                    "bfcl",
                    "--surface",
                    str(surface_path),
                    "--out",
                    str(converted),
                ]
            )
        if status != 0:
            raise SystemExit(f"convert failed with exit status {status}")
        (converted / ".complete").write_text("ok\n", encoding="utf-8")
    return surface_path, converted


def _per_model(converted: Path) -> dict[str, bytes]:
    """One session's bytes per model: its converted files in order, call-less traces out."""
    models: dict[str, list[bytes]] = {}
    for path in sorted(converted.glob("*.jsonl")):
        model = path.name.split("-", 1)[1].split("__", 1)[0]
        kept = []
        for line in path.read_bytes().splitlines(keepends=True):
            if TRACE_MARK in line and all(mark in line for mark in EMPTY_TRACE):
                continue
            kept.append(line)
        models.setdefault(model, []).append(b"".join(kept))
    return {model: b"".join(parts) for model, parts in models.items()}


def ensure_corpus(cache: Path, copies: int, corpora: Path) -> tuple[Path, Path]:
    """The benchmark corpus directory and the surface file (built once per ``copies``)."""
    cache.mkdir(parents=True, exist_ok=True)
    corpus = cache / f"corpus-{copies}"
    surface_path = cache / "surface.json"
    if (corpus / ".complete").exists() and surface_path.exists():
        return corpus, surface_path
    surface_path, converted = _convert(corpora, cache)
    shutil.rmtree(corpus, ignore_errors=True)
    corpus.mkdir()
    sessions = _per_model(converted)
    index = 0
    for copy in range(copies):
        for model, data in sessions.items():
            index += 1
            (corpus / f"{index:04d}-copy{copy:02d}-{model}.jsonl").write_bytes(data)
    (corpus / ".complete").write_text("ok\n", encoding="utf-8")
    return corpus, surface_path


def corpus_files(corpus: Path) -> list[Path]:
    return sorted(corpus.glob("*.jsonl"))


# ------------------------------------------------------------------------------ timing


def timed(action: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - wall, time.process_time() - cpu


def repeated(action: Callable[[], object], repeat: int, warm_up: bool = True) -> dict[str, float]:
    if warm_up:
        action()
    return _figures([timed(action) for _ in range(repeat)])


def paired(
    action: Callable[[], object], floor: Callable[[], object], repeat: int
) -> tuple[dict[str, float], dict[str, float]]:
    """``action``'s figures and the parse floor's, their runs alternating (floor, action, ...)
    after one warm-up of the action: a machine whose speed drifts during the benchmark (a
    shared host) slows both alike, so their ratio holds where the single floor's does not."""
    action()
    runs = [(timed(floor), timed(action)) for _ in range(repeat)]
    floors, actions = [run[0] for run in runs], [run[1] for run in runs]
    return _figures(actions), _figures(floors)


def _figures(runs: list[tuple[float, float]]) -> dict[str, float]:
    walls, cpus = [run[0] for run in runs], [run[1] for run in runs]
    return {
        "wall": min(walls),
        "wall_median": statistics.median(walls),
        "cpu": min(cpus),
        "cpu_median": statistics.median(cpus),
    }


def parse_floor(paths: list[Path]) -> int:
    lines = 0
    for path in paths:
        for line in path.read_bytes().splitlines():
            if line:
                orjson.loads(line)
                lines += 1
    return lines


def native_kernels_in_use() -> str:
    """The Rust core and the C kernels this run uses (built, and allowed by the switches)."""
    from pytest_entropy.core.native_core import core

    rust = "Rust core " + ("loaded" if core() is not None else "not used")
    try:
        from hatch_build import kernel_sources, module_name
        from pytest_entropy.core.fastpath import kernel
    except ImportError:
        return rust  # the C kernels are gone (issue 28)
    names = [rust]
    for source in kernel_sources(REPO):
        name = module_name(source, REPO).removeprefix("pytest_entropy.")
        names.append(name + ("" if kernel(name) is not None else " (not used)"))
    return ", ".join(names) or "none"


def run_main(argv: list[str], ok: tuple[int, ...] = (0, 1)) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()) as err:
        status = main(argv)
    if status not in ok:
        raise SystemExit(f"{argv[0]} exited {status}: {err.getvalue()[-2000:]}")
    return out.getvalue()


def trial_artifact(corpus: Path, surface_path: Path, scratch: Path) -> Path:
    """An artifact for the trial: what the compile would write if its replay found nothing
    (the corpus's auto-applied proposals: enum tightenings, overload splits, quarantines).
    The real compile rejects it (recorded calls the candidate would refuse), so the trial has
    divergences to count."""
    path = scratch / "artifact.json"
    if path.exists():
        return path
    from pytest_entropy.core.artifact import serialize_artifact
    from pytest_entropy.core.compiler import DigestCounts, _new_artifact
    from pytest_entropy.core.gate import apply_proposals_to_surface
    from pytest_entropy.core.proposals import AUTO_APPLY_PROPOSAL_KINDS
    from pytest_entropy.core.status import surface_hash
    from pytest_entropy.run.corpus import CorpusPlan, read_corpus, source_files

    surface = json.loads(surface_path.read_text(encoding="utf-8"))
    read = read_corpus(source_files(corpus_files(corpus)), CorpusPlan(observation_values=True))
    report = read.state.finalize(surface, None, surface_hash(surface))
    proposals = read.evidence.proposals(report, surface)
    auto = [p for p in proposals if p["kind"] in AUTO_APPLY_PROPOSAL_KINDS]
    candidate = apply_proposals_to_surface(surface, auto)
    after = read.state.finalize(candidate, None, surface_hash(candidate))
    counts = DigestCounts(read.state.traces, 0, "bench", "bench")
    artifact = _new_artifact(surface, surface, candidate, auto, None, report, after, counts)
    path.write_text(serialize_artifact(artifact), encoding="utf-8")
    return path


def commands(corpus: Path, surface: Path, scratch: Path) -> dict[str, list[str]]:
    sessions = ["--sessions", str(corpus)]
    on = ["--surface", str(surface)]
    artifact = trial_artifact(corpus, surface, scratch)
    return {
        "measure": ["measure", *sessions, *on],
        "propose": ["propose", *sessions, *on],
        "compile": ["compile", *sessions, *on, "--out", str(scratch / "compiled.json")],
        "trial": ["trial", *sessions, *on, "--artifact", str(artifact)],
        "pool": ["pool", *sessions, *on, "--out", str(scratch / "pool.json")],
    }


def watch_setup(corpus: Path, scratch: Path) -> tuple[Path, Path]:
    window = scratch / "watch-sessions"
    shutil.rmtree(window, ignore_errors=True)
    window.mkdir(parents=True)
    for path in corpus_files(corpus)[-12:]:
        shutil.copyfile(path, window / path.name)
    state = scratch / "watch-state"
    shutil.rmtree(state, ignore_errors=True)
    return window, state


def one_turn(window: Path) -> bytes:
    """A trace line of the newest file, to append as one more turn."""
    newest = sorted(window.glob("*.jsonl"))[-1]
    for line in reversed(newest.read_bytes().splitlines(keepends=True)):
        if TRACE_MARK in line and b'"operations":[{' in line:
            return line
    raise SystemExit("no trace with operations in the watch window")


# ------------------------------------------------------------------------------ report


def ratio(seconds: float, floor: float) -> str:
    return f"{seconds / floor:.2f}x"


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/pytest-entropy-bench"))
    parser.add_argument("--corpora", type=Path, default=CORPORA, help="the shared corpora")
    parser.add_argument("--copies", type=int, default=12)
    parser.add_argument(
        "--corpus",
        choices=("generated", "real", "both"),
        default="both",
        help="the BFCL corpus (one call a line), the real-call corpus"
        " (bench/real_call_corpus.py: many calls a line) or both, one after the other",
    )
    parser.add_argument("--real-mb", type=float, default=64.0, help="size of the real corpus")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="commands to run (default: all)")
    parser.add_argument("--no-rss", action="store_true", help="skip the peak RSS runs")
    parser.add_argument("--no-watch", action="store_true", help="skip the watch runs")
    parser.add_argument("--profile", help="print a cProfile of one command and stop")
    args = parser.parse_args()
    launcher = None if args.no_rss else Launcher()  # started while this process is small
    corpora: list[tuple[str, Path, Path]] = []
    if args.corpus in ("generated", "both"):
        corpus, surface = ensure_corpus(args.cache, args.copies, args.corpora)
        corpora.append(("generated (BFCL, one call a line)", corpus, surface))
    if args.corpus in ("real", "both"):
        from real_call_corpus import ensure_real_corpus

        corpus, surface = ensure_real_corpus(args.cache, args.real_mb, args.corpora)
        corpora.append(("real calls (Pi, Claude Code, tau-bench)", corpus, surface))
    for label, corpus, surface in corpora:
        scratch = args.cache / f"scratch-{corpus.name}"
        scratch.mkdir(exist_ok=True)
        bench_corpus(label, corpus, surface, scratch, args, launcher)
    if launcher is not None:
        launcher.close()


def bench_corpus(
    label: str,
    corpus: Path,
    surface: Path,
    scratch: Path,
    args: argparse.Namespace,
    launcher: Launcher | None,
) -> None:
    """Every selected command on one corpus, beside the parse floor of the same run."""
    paths = corpus_files(corpus)
    size = sum(path.stat().st_size for path in paths)
    traces = sum(path.read_bytes().count(TRACE_MARK) for path in paths)
    runs = commands(corpus, surface, scratch)
    if args.profile:
        run_main(runs[args.profile])
        profiler = cProfile.Profile()
        profiler.enable()
        run_main(runs[args.profile])
        profiler.disable()
        stream = io.StringIO()
        stats = pstats.Stats(profiler, stream=stream)
        stats.sort_stats("tottime").print_stats(30)
        stats.sort_stats("cumulative").print_stats(30)
        print(stream.getvalue())
        return
    pure = os.environ.get("PYTEST_ENTROPY_PURE", "")
    no_native = os.environ.get("PYTEST_ENTROPY_NO_NATIVE", "")
    print(
        f"\n## {label}\ncorpus: {len(paths)} files, {size / 1e6:.1f} MB, {traces:,} trace lines"
        f" ({corpus}); python {sys.version.split()[0]}; load {os.getloadavg()[0]:.1f};"
        f" PYTEST_ENTROPY_PURE={pure or '(unset)'};"
        f" PYTEST_ENTROPY_NO_NATIVE={no_native or '(unset)'}"
    )
    print(f"native code in use: {native_kernels_in_use()}")
    floor = repeated(lambda: parse_floor(paths), args.repeat)
    print(f"parse floor: {floor['wall']:.3f} s wall, {floor['cpu']:.3f} s CPU")
    selected = args.only or list(runs)
    rows = []
    for name in selected:
        if name not in runs:
            continue
        figures, beside = paired(
            lambda argv=runs[name]: run_main(argv), lambda: parse_floor(paths), args.repeat
        )
        rss = None
        if launcher is not None:
            result = launcher.run([sys.executable, "-m", "pytest_entropy", *runs[name]], (0, 1))
            rss = result["maxrss"] / 1e6
        rows.append((name, figures, beside, rss))
        print(
            f"  {name}: {figures['wall']:.3f} s wall ({ratio(figures['wall'], floor['wall'])}),"
            f" {figures['cpu']:.3f} s CPU ({ratio(figures['cpu'], floor['cpu'])});"
            f" floor beside it {beside['cpu']:.3f} s CPU ({ratio(figures['cpu'], beside['cpu'])})"
            + (f", peak RSS {rss:.1f} MB" if rss is not None else ""),
            flush=True,
        )
    print()
    print(
        "| command | wall s | × floor (wall) | CPU s | × floor (CPU) | floor beside it (CPU s)"
        " | × floor beside it (CPU) | goal | peak RSS |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(f"| parse floor | {floor['wall']:.2f} | 1.00 | {floor['cpu']:.2f} | 1.00 | | | | |")
    for name, figures, beside, rss in rows:
        goal = f"≤ {GOALS[name]}x" if name in GOALS else ""
        shown = f"{rss:.0f} MB" if rss is not None else "–"
        print(
            f"| {name} | {figures['wall']:.2f} | {figures['wall'] / floor['wall']:.2f}"
            f" | {figures['cpu']:.2f} | {figures['cpu'] / floor['cpu']:.2f}"
            f" | {beside['cpu']:.2f} | {figures['cpu'] / beside['cpu']:.2f} | {goal} | {shown} |"
        )
    if not args.no_watch and (args.only is None or "watch" in args.only):
        watch_rows(corpus, surface, scratch, args.repeat, launcher)


def watch_rows(
    corpus: Path, surface: Path, scratch: Path, repeat: int, launcher: Launcher | None
) -> None:
    from pytest_entropy.cli.common import read_options_of  # noqa: F401  (imports warmed)
    from pytest_entropy.run.watch import CompileLoop
    from pytest_entropy.sources.locate import directory_session_files

    window, state = watch_setup(corpus, scratch)
    argv = ["watch", "--once", "--sessions", str(window), "--surface", str(surface)]
    argv += ["--state-dir", str(state), "--json"]
    run_main(argv)  # first tick: writes the pool (and an artifact if one compiles)
    unchanged = repeated(lambda: run_main(argv), repeat)
    turn = one_turn(window)
    newest = sorted(window.glob("*.jsonl"))[-1]

    def append_then_tick() -> None:
        with newest.open("ab") as handle:
            handle.write(turn)
        run_main(argv)

    appended = repeated(append_then_tick, repeat)
    rss = None
    if launcher is not None:
        rss = launcher.run([sys.executable, "-m", "pytest_entropy", *argv], (0, 1))["maxrss"]
    print()
    print("| watch | wall s | CPU s |")
    print("| --- | ---: | ---: |")
    for label, figures in (("unchanged window", unchanged), ("one appended turn", appended)):
        print(f"| `watch --once`, {label} | {figures['wall']:.3f} | {figures['cpu']:.3f} |")
    surface_doc = json.loads(surface.read_text(encoding="utf-8"))
    loop = CompileLoop(
        window=lambda: directory_session_files(window, 8),
        surface=surface_doc,
        state_dir=state,
    )
    loop.tick()
    hit = repeated(loop.tick, repeat, warm_up=False)

    def append_then_loop_tick() -> None:
        with newest.open("ab") as handle:
            handle.write(turn)
        loop.tick()

    grown = repeated(append_then_loop_tick, repeat, warm_up=False)
    print(f"| compile loop tick, unchanged (cache hits) | {hit['wall']:.3f} | {hit['cpu']:.3f} |")
    print(
        f"| compile loop tick, one appended turn ({len(turn)} bytes)"
        f" | {grown['wall']:.3f} | {grown['cpu']:.3f} |"
    )
    if rss is not None:
        print(f"\npeak RSS of `watch --once`: {rss / 1e6:.0f} MB")


if __name__ == "__main__":
    main_bench()
