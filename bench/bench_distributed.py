"""Benchmark: compile, trial and propose on every engine, and their memory against one pass.

    python bench/bench_distributed.py [--corpus bench/out/corpus-scale-512] [--repeat 1]

Needs the dask extra. Uses the corpus ``bench/bench_scale.py`` generates (cached under
``bench/out/``; generated here too if missing) and a surface that declares the generated
refs with enums wider than what the sessions use, so ``compile`` has real tightenings to
propose, apply and replay. Reports, as Markdown for ``docs/performance.md``:

* wall time, MB/s and peak RSS of ``compile``, ``trial`` and ``propose`` (CLI subprocesses)
  on ``--engine local``, ``--engine processes --jobs 2`` and ``--engine dask --jobs 2``;
  every engine must print the same bytes, or the benchmark stops;
* peak RSS of the engine path against the one-pass functions (every trace held in memory,
  as ``compile_entropy_surface(traces, ...)`` needs) on growing shares of the corpus.

Timings are wall-clock on the machine that runs it; nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_scale import ensure_corpus  # noqa: E402
from launcher import Launcher  # noqa: E402

from pytest_entropy.sources.locate import expand_session_paths  # noqa: E402

SURFACE = {
    "version": 1,
    "actions": [
        {
            "ref": "mcp.report.render",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "format": {"type": "string", "enum": ["pdf", "html", "docx", "odt", "txt"]},
                    "title": {"type": "string"},
                },
            },
        },
        {
            "ref": "mcp.flags.set",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "level": {
                        "type": "string",
                        "enum": ["info", "warn", "error", "debug", "trace", "fatal"],
                    }
                },
            },
        },
        {
            "ref": "mcp.notes.search",
            "inputSchema": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            },
        },
        {
            "ref": "memory.recall",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "role": {"type": "string", "x-fabric-enum-candidate": True},
                },
            },
        },
        {"ref": "pi.read", "inputSchema": {"type": "object"}},
        {"ref": "pi.edit", "inputSchema": {"type": "object"}},
        {"ref": "pi.bash", "inputSchema": {"type": "object"}},
        {"ref": "pi.grep", "inputSchema": {"type": "object"}},
    ],
}

ENGINES = [
    ("`--engine local`", []),
    ("`--engine processes --jobs 2`", ["--jobs", "2"]),
    (
        "`--engine dask --jobs 2` (starts its own local cluster)",
        ["--engine", "dask", "--jobs", "2"],
    ),
]

ONE_PASS = r"""
import json, sys
from pathlib import Path
from pytest_entropy.core.compiler import compile_entropy_surface
from pytest_entropy.sources.scan import read_file_evidence
surface = json.loads(Path(sys.argv[1]).read_text())
traces, observations, audits = [], [], []
for name in sys.argv[2:]:
    evidence = read_file_evidence(Path(name))
    if evidence is not None:
        traces += evidence.traces
        observations += evidence.value_observations
        audits += evidence.audit_calls
outcome = compile_entropy_surface(traces, surface, None, observations, audits)
print(json.dumps(outcome.to_json()))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HERE / "out" / "corpus-scale-512")
    parser.add_argument("--megabytes", type=float, default=512)
    parser.add_argument("--files", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    launch = Launcher()
    ensure_corpus(args.corpus, args.files, args.megabytes)
    paths = expand_session_paths([args.corpus])
    size = sum(path.stat().st_size for path in paths)
    megabytes = size / 1e6
    corpus = str(args.corpus)
    cli = [sys.executable, "-m", "pytest_entropy"]

    with tempfile.TemporaryDirectory() as scratch:
        surface = Path(scratch) / "surface.json"
        surface.write_text(json.dumps(SURFACE))
        artifact = Path(scratch) / "artifact.json"

        def timed(command: list[str]) -> tuple[float, int, str]:
            runs = [launch.run(command, ok=(0, 1)) for _ in range(args.repeat)]
            outputs = {run["stdout"] for run in runs}
            if len(outputs) != 1:
                raise SystemExit(f"{command}: repeated runs disagree")
            return (
                min(run["seconds"] for run in runs),
                max(run["maxrss"] for run in runs),
                outputs.pop(),
            )

        base = ["--sessions", corpus, "--surface", str(surface), "--json"]
        rows: list[tuple[str, str, float, int]] = []
        seen: dict[str, set[str]] = {"compile": set(), "trial": set(), "propose": set()}
        for label, engine in ENGINES:
            seconds, rss, out = timed([*cli, "compile", *base, "--out", str(artifact), *engine])
            seen["compile"].add(out)
            rows.append(("compile", label, seconds, rss))
        status = json.loads(seen["compile"].copy().pop())["status"]
        for label, engine in ENGINES:
            seconds, rss, out = timed([*cli, "trial", *base, "--artifact", str(artifact), *engine])
            seen["trial"].add(out)
            rows.append(("trial", label, seconds, rss))
        for label, engine in ENGINES:
            seconds, rss, out = timed([*cli, "propose", *base, *engine])
            seen["propose"].add(out)
            rows.append(("propose", label, seconds, rss))
        for command, outputs in seen.items():
            if len(outputs) != 1:
                raise SystemExit(f"engines disagree on {command}")
        trial = json.loads(seen["trial"].pop())

        shares = []
        for fraction in (8, 4, 2):
            share = paths[: len(paths) // fraction]
            share_size = sum(path.stat().st_size for path in share)
            one = launch.run([sys.executable, "-c", ONE_PASS, str(surface), *map(str, share)])
            engine_run = launch.run(
                [
                    *cli,
                    "compile",
                    "--sessions",
                    *map(str, share),
                    "--surface",
                    str(surface),
                    "--json",
                ],
                ok=(0, 1),
            )
            same = json.loads(one["stdout"]) == json.loads(engine_run["stdout"])
            shares.append((share_size, one, engine_run, same))
    launch.close()

    print(f"## compile / trial / propose on {megabytes:.0f} MB ({len(paths)} files)\n")
    print(
        f"compile status: {status}; trial verdict: {trial['verdict']},"
        f" {trial['totals']['operations']:,} calls replayed.\n"
    )
    print("| command | engine | seconds | MB/s | peak RSS (MB) |")
    print("| --- | --- | ---: | ---: | ---: |")
    for command, label, seconds, rss in rows:
        print(
            f"| {command} | {label} | {seconds:.2f} | {megabytes / seconds:.0f} | {rss / 1e6:.1f} |"
        )
    print("\nEvery engine printed the same bytes for each command.\n")
    print(
        "| corpus | one pass, traces in memory: s / peak MB | engine path, local: s / peak MB"
        " | same outcome |"
    )
    print("| ---: | ---: | ---: | --- |")
    for share_size, one, engine_run, same in shares:
        print(
            f"| {share_size / 1e6:.0f} MB | {one['seconds']:.2f} / {one['maxrss'] / 1e6:.0f} |"
            f" {engine_run['seconds']:.2f} / {engine_run['maxrss'] / 1e6:.0f} | {same} |"
        )


if __name__ == "__main__":
    main()
