"""Record every command's output bytes on the demo and the shared corpora, to compare builds.

    python bench/record_outputs.py --out before.json [--corpora ../shared/corpora]
    python bench/record_outputs.py --out after.json
    python bench/record_outputs.py --compare before.json after.json

Each case runs the installed ``pytest-entropy`` as a separate process (so no state leaks
from one case into the next) in a scratch directory, and records the exit code, a digest of
stdout and stderr, and a digest of every file the command wrote. The scratch directory's own
path is replaced by ``<tmp>``, and the elapsed time that compile and watch notices print
(``(163ms)``, ``(2.8s)``) by ``(<ms>)``, before hashing, so two runs of the same build give the
same manifest. A refactor that must change nothing (the layout issue) proves it by two manifests
that ``--compare`` finds equal.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEMO = REPO / "corpora" / "demo"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _cases(corpora: Path | None) -> list[tuple[str, list[str]]]:
    """(name, argv) pairs; ``{tmp}`` in an argument is the case's scratch directory."""
    demo_sessions = str(DEMO / "sessions")
    demo_surface = str(DEMO / "surface.json")
    demo_repairs = str(DEMO / "repairs.json")
    base = ["--sessions", demo_sessions, "--surface", demo_surface]
    cases: list[tuple[str, list[str]]] = [
        ("demo-measure-json", ["measure", *base, "--repairs", demo_repairs, "--json"]),
        ("demo-measure-text", ["measure", *base, "--repairs", demo_repairs]),
        ("demo-measure-jobs2", ["measure", *base, "--jobs", "2", "--json"]),
        ("demo-status-json", ["status", *base, "--json"]),
        ("demo-status-text", ["status", *base]),
        ("demo-freedom-json", ["freedom", "--surface", demo_surface, "--json"]),
        ("demo-freedom-text", ["freedom", "--surface", demo_surface]),
        ("demo-propose-json", ["propose", *base, "--json"]),
        ("demo-propose-text", ["propose", *base]),
        ("demo-compile-json", ["compile", *base, "--json", "--out", "{tmp}/artifact.json"]),
        ("demo-compile-text", ["compile", *base]),
        (
            "demo-compile-write",
            ["compile", *base, "--write", "--state-dir", "{tmp}/state", "--json"],
        ),
        ("demo-pool-json", ["pool", *base, "--out", "{tmp}/pool.json", "--json"]),
        ("demo-trial-json", ["trial", *base, "--json"]),
        ("demo-trial-text", ["trial", *base]),
        ("demo-certify-text", ["certify"]),
        ("demo-certify-json", ["certify", "--format", "json"]),
        ("demo-certify-markdown", ["certify", "--format", "markdown"]),
        ("demo-certify-corpus", ["certify", *base, "--format", "json"]),
        (
            "demo-export",
            ["export", "--surface", demo_surface, "--out", "{tmp}/surface.json", "--json"],
        ),
        ("demo-convert", ["convert", "--sessions", demo_sessions, "--out", "{tmp}/conv", "--json"]),
        ("demo-watch-once", ["watch", *base, "--state-dir", "{tmp}/w", "--once", "--json"]),
        ("usage-error", ["measure"]),
        ("missing-file", ["measure", "--sessions", "{tmp}/nope.jsonl"]),
    ]
    if corpora is None or not corpora.is_dir():
        return cases
    foreign = [
        ("pi", ["pi-sessions/sessions"], "pi-sessions/surface/pi-coding-agent-0.27.9.tools.json"),
        (
            "claude-code",
            ["claude-code-sessions-spotter/transcripts"],
            "claude-code-sessions-spotter/surface/claude-code-2.1.39.tools.json",
        ),
        (
            "tau-bench",
            ["tau-bench-historical/gpt-4o-airline.json"],
            "tau-bench-historical/tools_at_7362a17.json",
        ),
        ("bfcl", ["bfcl-results-2024-08/result"], "bfcl-results-2024-08/questions_v1"),
    ]
    for name, sessions, surface in foreign:
        paths = [str(corpora / s) for s in sessions]
        args = ["--sessions", *paths, "--surface", str(corpora / surface)]
        cases += [
            (f"{name}-measure", ["measure", *args, "--json"]),
            (f"{name}-propose", ["propose", *args, "--json"]),
            (f"{name}-compile", ["compile", *args, "--json", "--out", "{tmp}/a.json"]),
            (f"{name}-trial", ["trial", *args, "--json"]),
            (f"{name}-pool", ["pool", *args, "--out", "{tmp}/p.json", "--json"]),
            (f"{name}-status", ["status", *args, "--json"]),
            (f"{name}-freedom", ["freedom", "--surface", str(corpora / surface), "--json"]),
        ]
    servers = corpora / "mcp-servers-tools-list" / "servers"
    if servers.is_dir():
        for server in sorted(servers.iterdir())[:8]:
            cases.append((f"mcp-freedom-{server.name}", ["freedom", "--surface", str(server)]))
    return cases


_ELAPSED = re.compile(rb"\((?:\d+ms|\d+(?:\.\d+)?s)\)")


def _normalized(output: bytes, scratch: Path) -> bytes:
    return _ELAPSED.sub(b"(<ms>)", output.replace(str(scratch).encode(), b"<tmp>"))


def _run_case(command: list[str], argv: list[str]) -> dict[str, object]:
    scratch = Path(tempfile.mkdtemp(prefix="record-"))
    try:
        args = [a.replace("{tmp}", str(scratch)) for a in argv]
        env = dict(os.environ, NO_COLOR="1", PYTHONHASHSEED="0")
        done = subprocess.run(
            [*command, *args],
            cwd=scratch,
            capture_output=True,
            env=env,
            timeout=600,
            check=False,
        )
        files = {}
        for path in sorted(scratch.rglob("*")):
            if path.is_file():
                files[str(path.relative_to(scratch))] = _digest(path.read_bytes())
        return {
            "exit": done.returncode,
            "stdout": _digest(_normalized(done.stdout, scratch)),
            "stderr": _digest(_normalized(done.stderr, scratch)),
            "files": files,
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _compare(before_path: Path, after_path: Path) -> int:
    before = json.loads(before_path.read_text())
    after = json.loads(after_path.read_text())
    differ = [name for name in before if before[name] != after.get(name)]
    missing = [name for name in after if name not in before]
    for name in differ:
        print(f"differs: {name}: {before[name]} != {after.get(name)}")
    for name in missing:
        print(f"new case: {name}")
    print(f"{len(before) - len(differ)} of {len(before)} cases identical")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument("--executable", default=shutil.which("pytest-entropy") or "")
    parser.add_argument(
        "--command",
        help="the command to run instead of --executable, as one shell-quoted string "
        "(for example 'env PYTHONPATH=/other/checkout python -m pytest_entropy')",
    )
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    options = parser.parse_args(argv)
    if options.compare:
        return _compare(*options.compare)
    if options.command:
        command = shlex.split(options.command)
    elif options.executable:
        command = [str(Path(options.executable).resolve())]
    else:
        command = []
    if not command or options.out is None:
        parser.error("--out is required, and pytest-entropy must be on PATH (or --executable)")
    if not options.corpora.is_dir():
        print(f"note: {options.corpora} is absent; only the demo corpus is recorded")
    manifest = {}
    for name, argv_case in _cases(options.corpora):
        manifest[name] = _run_case(command, argv_case)
        print(f"{name}: exit {manifest[name]['exit']}", file=sys.stderr)
    options.out.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
