"""Exit codes and seconds for unreadable session files and symlink loops.

    python bench/unreadable_inputs.py [--path CHECKOUT] [--timeout 60]

Builds, from the demo corpus, a directory with one file that cannot be read (a ``.jsonl.gz``
name over bytes that are not gzip: permissions do not stop root) and a directory with a
symlink loop ``a.jsonl -> b.jsonl -> a.jsonl``. Runs each corpus command on the file named
alone, on the directory, and on the directory with ``--strict``, and ``measure``/``status``
on the loop; prints Markdown for ``docs/reliability.md`` (exit code, seconds, what was
read). ``--path`` runs another checkout (PYTHONPATH).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.process_support import timed_entropy  # noqa: E402

DEMO = REPO / "corpora" / "demo"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", default=str(REPO))
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": args.path}
    surface = str(DEMO / "surface.json")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        broken = root / "broken"
        shutil.copytree(DEMO / "sessions", broken)
        (broken / "zz.jsonl.gz").write_bytes(b"not gzip\n")
        loop = root / "loop"
        shutil.copytree(DEMO / "sessions", loop)
        (loop / "a.jsonl").symlink_to("b.jsonl")
        (loop / "b.jsonl").symlink_to("a.jsonl")

        def run(*argv: str) -> tuple[str, float, str]:
            result, seconds = timed_entropy(argv, timeout=args.timeout, cwd=tmp, env=env)
            if result is None:
                return "hung", seconds, ""
            return str(result.returncode), seconds, result.stdout

        artifact = str(root / "artifact.json")
        run(
            "compile", "--sessions", str(DEMO / "sessions"), "--surface", surface, "--out", artifact
        )
        commands = {
            "measure": ["measure", "--surface", surface],
            "status": ["status", "--surface", surface],
            "propose": ["propose", "--surface", surface],
            "compile": ["compile", "--surface", surface],
            "pool": ["pool", "--out", str(root / "pool.json")],
            "trial": ["trial", "--surface", surface, "--artifact", artifact],
            "watch --once": ["watch", "--once", "--surface", surface, "--state-dir", "w"],
        }
        print("| command | named unreadable file | directory with it | directory, `--strict` |")
        print("| --- | ---: | ---: | ---: |")
        for name, argv in commands.items():
            cells = []
            for sessions, extra in (
                (str(broken / "zz.jsonl.gz"), []),
                (str(broken), []),
                (str(broken), ["--strict"]),
            ):
                if name in ("status", "watch --once") and sessions.endswith(".gz"):
                    cells.append("(takes a directory)")
                    continue
                code, seconds, _ = run(*argv, "--sessions", sessions, *extra)
                cells.append(f"exit {code} ({seconds:.2f} s)")
            print(f"| `{name}` | " + " | ".join(cells) + " |")
        print()
        print("| command on `a.jsonl <-> b.jsonl` + 3 sessions | exit | seconds | read |")
        print("| --- | ---: | ---: | --- |")
        code, seconds, out = run("measure", "--sessions", str(loop), "--surface", surface, "--json")
        read = "–"
        if code == "0":
            diagnostics = json.loads(out)["diagnostics"]
            read = (
                f"{diagnostics['traces']} traces from {diagnostics['files']} files,"
                f" {diagnostics['unreadableFiles']} unreadable"
            )
        print(f"| `measure` | {code} | {seconds:.2f} | {read} |")
        code, seconds, out = run("status", "--sessions", str(loop), "--surface", surface, "--json")
        if code == "0":
            result = json.loads(out)
            read = (
                f"{len(result['corpus']['sessions'])} sessions,"
                f" {result['diagnostics']['unreadableFiles']} unreadable"
            )
        print(f"| `status` | {code} | {seconds:.2f} | {read} |")


if __name__ == "__main__":
    main()
