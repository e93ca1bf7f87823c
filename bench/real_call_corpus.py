"""The real-call benchmark corpus: recorded agent sessions in the native trace format.

    python bench/real_call_corpus.py [--cache DIR] [--target-mb 64] [--corpora DIR]

Three corpora of ``../shared/corpora`` whose sessions hold many calls per execution, unlike
the BFCL results of ``bench_commands.py`` (one call a line): the Pi coding-agent sessions
(about 6 calls and their audits per trace line), the Claude Code transcripts (about 40 calls
a trace) and the tau-bench airline conversations (about 6). Each is converted with
``pytest-entropy convert`` (``--format pi``, ``claude-code``, ``tau-bench``); one corpus
file is every converted session in order, and the file is repeated until the corpus holds
``--target-mb`` megabytes (about 2.3 MB a file: 28 files for 64 MB). The surface is the
three tool lists merged (the first declaration of a ref kept: tau-bench declares its
airline and retail tools in one list, with a few names twice).

The corpus is built once under ``--cache`` (default ``/tmp/pytest-entropy-bench``) and
reused; ``bench_commands.py --corpus real`` times every command on it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from pytest_entropy.cli import main  # noqa: E402

CORPORA = REPO.parent / "shared" / "corpora"
# (name, sessions under the corpora folder, session format, tool list)
SOURCES = (
    (
        "pi",
        "pi-sessions/sessions",
        "pi",
        "pi-sessions/surface/pi-coding-agent-0.73.1.tools.json",
    ),
    (
        "claude-code",
        "claude-code-sessions-spotter/transcripts",
        "claude-code",
        "claude-code-sessions-spotter/surface/claude-code-2.1.39.tools.json",
    ),
    (
        "tau-bench",
        "tau-bench-historical/gpt-4o-airline.json",
        "tau-bench",
        "tau-bench-historical/tools_at_7362a17.json",
    ),
)


def _quiet_main(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(argv)


def merged_surface(corpora: Path) -> dict[str, Any]:
    """The three tool lists as one snapshot, the first declaration of each ref kept."""
    from pytest_entropy.ingest.surfaces import load_surface

    actions: list[dict[str, Any]] = []
    seen: set[str] = set()
    for _, _, _, tools in SOURCES:
        for action in load_surface(corpora / tools)["actions"]:
            if action["ref"] not in seen:
                seen.add(action["ref"])
                actions.append(action)
    return {"version": 1, "actions": actions}


def converted_sessions(corpora: Path, work: Path) -> bytes:
    """Every session of the three corpora converted, concatenated in order."""
    parts: list[bytes] = []
    for name, sessions, session_format, _ in SOURCES:
        out = work / "converted" / name
        if not (out / ".complete").exists():
            shutil.rmtree(out, ignore_errors=True)
            argv = ["convert", "--sessions", str(corpora / sessions), "--format", session_format]
            if _quiet_main([*argv, "--out", str(out)]) != 0:
                raise SystemExit(f"converting {name} failed")
            (out / ".complete").write_text("ok\n", encoding="utf-8")
        parts.extend(path.read_bytes() for path in sorted(out.glob("*.jsonl")))
    return b"".join(part if part.endswith(b"\n") else part + b"\n" for part in parts)


def ensure_real_corpus(
    cache: Path, target_mb: float = 64.0, corpora: Path = CORPORA
) -> tuple[Path, Path]:
    """The real-call corpus directory and its surface file (built once per size)."""
    for _, sessions, _, tools in SOURCES:
        if not (corpora / sessions).exists() or not (corpora / tools).exists():
            raise SystemExit(f"a shared corpus is missing ({corpora / sessions})")
    cache.mkdir(parents=True, exist_ok=True)
    corpus = cache / f"real-{target_mb:g}mb"
    surface_path = cache / "real-surface.json"
    if (corpus / ".complete").exists() and surface_path.exists():
        return corpus, surface_path
    surface_path.write_text(json.dumps(merged_surface(corpora), sort_keys=True), encoding="utf-8")
    data = converted_sessions(corpora, cache / "real-work")
    shutil.rmtree(corpus, ignore_errors=True)
    corpus.mkdir()
    copies = max(1, round(target_mb * 1e6 / len(data)))
    for copy in range(copies):
        (corpus / f"{copy + 1:04d}-real.jsonl").write_bytes(data)
    (corpus / ".complete").write_text("ok\n", encoding="utf-8")
    return corpus, surface_path


def main_build() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/pytest-entropy-bench"))
    parser.add_argument("--target-mb", type=float, default=64.0)
    parser.add_argument("--corpora", type=Path, default=CORPORA)
    args = parser.parse_args()
    corpus, surface = ensure_real_corpus(args.cache, args.target_mb, args.corpora)
    files = sorted(corpus.glob("*.jsonl"))
    size = sum(path.stat().st_size for path in files)
    lines = operations = 0
    for line in files[0].read_bytes().splitlines():
        if b'"kind":"pi-fabric.execution"' in line:
            lines += 1
            operations += line.count(b'"type":"call"')
    print(
        f"{corpus}: {len(files)} files, {size / 1e6:.1f} MB; per file {lines} trace lines,"
        f" {operations} operations ({operations / max(lines, 1):.1f} a line); surface {surface}"
    )


if __name__ == "__main__":
    main_build()
