"""Build the benchmark corpora of issue 28: real tool calls, and the generated kind beside them.

    python bench/real_call_corpus.py [--kind real-calls|generated] [--cache DIR]
                                     [--corpora ../shared/corpora] [--files 288]

**Real calls.** Every session corpus that ``bench/real_corpora.py`` lists: those of
``../shared/corpora`` (Pi, Claude Code, tau-bench, both BFCL result sets, OpenHands,
ToolBench) and the samples of the other agent formats in ``tests/data`` (Codex, Gemini CLI,
Inspect, OpenTelemetry GenAI), is converted to native session JSONL by ``pytest-entropy
convert`` against the surface it was recorded with. Trace lines that hold neither an
operation nor an audit (a BFCL prompt-style answer, a turn without a call) are left out, so
the corpus is made of calls, several to a line where the agent made several in one turn.
The benchmark's surface is the union of the corpora's surfaces. Without the shared corpora
the build stops with a message saying so (``CorporaMissingError``, exit status 2).

**Generated.** ``bench/corpus_gen.py``'s sessions (one seeded generator per file) and a
surface written from its own argument generators.

Both are pools of numbered files where file ``i`` depends only on ``i``, so the first ``n``
files of a bigger corpus are exactly the smaller one. Real calls: every converted session,
in order and once, packed into 36 files of about equal size (a session is never cut), and
file ``i`` is file ``i % 36`` of that pass, so any 36 consecutive files hold all the
distinct content (the issue-18 corpus had the same property: three copies of twelve
models); the main corpus is the number of files nearest to ~64 MB (150 today). Generated:
160 files of 400 kB, file ``i`` from seed ``seed + i``. Corpora of several sizes (the main
one, ten times it for the linearity check, 36 and 288 files for the memory flatness) are
directories of hard links into the pool. Everything is deterministic:
the same inputs give the same bytes. Built once under ``--cache`` (by default
``/tmp/pytest-entropy-bench``, outside the repository).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from corpus_gen import ACTIONS, session_lines  # noqa: E402
from real_corpora import (  # noqa: E402
    BUNDLED_CORPORA,
    SESSION_CORPORA,
    SessionCorpus,
    corpus_surface,
)

CORPORA = REPO.parent / "shared" / "corpora"
DEFAULT_CACHE = Path("/tmp/pytest-entropy-bench")
TRACE_MARK = b'"kind":"pi-fabric.execution"'
EMPTY_TRACE = (b'"operations":[]', b'"audits":[]')
# The main corpus: about 64 MB (generated: 160 files); memory at 36, main and 288 files.
TARGET_MEGABYTES = 64.0
MAIN_FILES = 160
GENERATED_SEED = 20261202
# Bump when the layout or the filtering changes, so an old cache is not reused.
LAYOUT = "3"
# One pass over every converted session fills this many files of the real-call corpus, so
# its 36-file corpus already holds all the distinct content (as the issue-18 corpus did).
ROTATION_FILES = 36
# Every session corpus bench/real_corpora.py reads: the shared corpora's and the samples of
# the other agent formats kept in tests/data (Codex, Gemini CLI, Inspect, OpenTelemetry).
REAL_CALL_CORPORA = (*SESSION_CORPORA, *BUNDLED_CORPORA)


class CorporaMissingError(SystemExit):
    """The shared corpora are not on this machine (the real-call corpus needs them)."""


@dataclass(frozen=True, slots=True)
class BuiltCorpus:
    """One benchmark corpus: its file pool (``pool``), the surface, how many files make the
    main corpus, and size statistics of that main corpus."""

    kind: str
    pool: Path
    surface: Path
    main_files: int
    stats: dict[str, Any]

    def view(self, files: int) -> Path:
        """A directory holding the first ``files`` files of the pool (hard links)."""
        available = sorted(self.pool.glob("*.jsonl"))[: pool_files(self.pool)]
        if files > len(available):
            raise SystemExit(f"{self.kind}: {files} files asked, {len(available)} built")
        view = self.pool.parent / f"{self.pool.name}-first-{files}"
        if (view / ".complete").exists():
            return view
        shutil.rmtree(view, ignore_errors=True)
        view.mkdir()
        for path in available[:files]:
            try:
                os.link(path, view / path.name)
            except OSError:
                shutil.copyfile(path, view / path.name)
        (view / ".complete").write_text("ok\n", encoding="utf-8")
        return view


# ------------------------------------------------------------------------------ real calls


def _quiet_main(argv: list[str]) -> int:
    from pytest_entropy.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(argv)


def convert_corpus(root: Path, corpus: SessionCorpus, work: Path) -> tuple[Path, Path | None]:
    """Convert one session corpus; returns (its converted directory, its surface file)."""
    surface_path: Path | None = None
    if corpus.surfaces:
        surface_path = work / "surfaces" / f"{corpus.name}.json"
        if not surface_path.exists():
            surface_path.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps(corpus_surface(root, corpus), sort_keys=True)
            surface_path.write_text(text, encoding="utf-8")
    converted = work / "converted" / corpus.name
    if (converted / ".complete").exists():
        return converted, surface_path
    shutil.rmtree(converted, ignore_errors=True)
    base = REPO if corpus.bundled else root
    argv = ["convert", "--sessions", *(str(base / path) for path in corpus.sessions)]
    argv += ["--format", corpus.session_format, "--out", str(converted)]
    if surface_path is not None:
        argv += ["--surface", str(surface_path)]
    status = _quiet_main(argv)
    if status != 0:
        raise SystemExit(f"convert of {corpus.name} failed with exit status {status}")
    (converted / ".complete").write_text("ok\n", encoding="utf-8")
    return converted, surface_path


def call_lines(data: bytes) -> bytes:
    """A converted session without its call-less trace lines (other lines kept)."""
    kept = [
        line
        for line in data.splitlines(keepends=True)
        if not (TRACE_MARK in line and all(mark in line for mark in EMPTY_TRACE))
    ]
    return b"".join(kept)


def converted_sessions(converted: Sequence[Path]) -> list[bytes]:
    """Every converted session that still holds a trace, in directory then name order."""
    sessions = []
    for directory in converted:
        for path in sorted(directory.glob("*.jsonl")):
            data = call_lines(path.read_bytes())
            if TRACE_MARK in data:
                sessions.append(data)
    return sessions


def merged_surfaces(paths: Sequence[Path]) -> dict[str, Any]:
    """The union of several surface files: first position of a ref, its last schema."""
    schemas: dict[str, Any] = {}
    for path in paths:
        for action in json.loads(path.read_bytes())["actions"]:
            schemas[action["ref"]] = action["inputSchema"]
    actions = [{"ref": ref, "inputSchema": schema} for ref, schema in schemas.items()]
    return {"version": 1, "actions": actions}


def packed_rotation(sizes: Sequence[int], files: int) -> list[list[int]]:
    """Every session, in order and once, packed into ``files`` consecutive groups of about
    equal size (a session is never cut, no group is empty): one pass over the corpora."""
    if len(sizes) < files:
        raise SystemExit(f"{len(sizes)} sessions hold a call: fewer than the {files} files")
    total = sum(sizes)
    groups: list[list[int]] = [[] for _ in range(files)]
    group = written = 0
    for index, size in enumerate(sizes):
        groups[group].append(index)
        written += size
        files_left = files - group - 1
        sessions_left = len(sizes) - index - 1
        if files_left and (written * files >= (group + 1) * total or sessions_left <= files_left):
            group += 1
    return groups


def rotated_file(sessions: Sequence[bytes], groups: Sequence[Sequence[int]], index: int) -> bytes:
    """File ``index`` of the real-call corpus: group ``index`` modulo the rotation's length,
    so every ``len(groups)`` consecutive files hold each session exactly once."""
    return b"".join(sessions[position] for position in groups[index % len(groups)])


def line_stats(data: bytes) -> dict[str, int]:
    """Lines, trace lines and operations of native session bytes (for the corpus summary)."""
    lines = traces = operations = 0
    for line in data.splitlines():
        if not line:
            continue
        lines += 1
        if TRACE_MARK in line:
            traces += 1
            record = json.loads(line)
            holder = record.get("message") if isinstance(record.get("message"), dict) else record
            trace = (holder.get("details") or {}).get("trace") or {}
            operations += len(trace.get("operations") or [])
    return {"lines": lines, "trace_lines": traces, "operations": operations}


def pool_files(pool: Path) -> int:
    """How many files of a pool are complete (its ``.complete`` marker holds the count)."""
    marker = pool / ".complete"
    return int(marker.read_text(encoding="utf-8")) if marker.exists() else 0


def grow_pool(pool: Path, files: int, make: Callable[[int], bytes]) -> None:
    """Write files ``pool_files(pool)`` to ``files - 1`` of ``pool`` (file ``i`` is
    ``make(i)``), so a pool grows without rewriting what it holds."""
    have = pool_files(pool)
    if have >= files:
        return
    pool.mkdir(parents=True, exist_ok=True)
    for index in range(have, files):
        (pool / f"session-{index:04d}.jsonl").write_bytes(make(index))
    (pool / ".complete").write_text(f"{files}\n", encoding="utf-8")


def _summary(pool: Path, main_files: int, sources: dict[str, int]) -> dict[str, Any]:
    totals = {"lines": 0, "trace_lines": 0, "operations": 0, "bytes": 0}
    for path in sorted(pool.glob("*.jsonl"))[:main_files]:
        data = path.read_bytes()
        totals["bytes"] += len(data)
        for key, value in line_stats(data).items():
            totals[key] += value
    totals["files"] = main_files
    per_line = round(totals["operations"] / max(1, totals["trace_lines"]), 2)
    return {"main_corpus": {**totals, "operations_per_trace_line": per_line}, "sources": sources}


def build_real_calls(
    cache: Path,
    corpora: Path = CORPORA,
    *,
    files: int = 288,
    rotation_files: int = ROTATION_FILES,
    megabytes: float = TARGET_MEGABYTES,
    specs: Sequence[SessionCorpus] = REAL_CALL_CORPORA,
) -> BuiltCorpus:
    """The real-call corpus: a pool of ``files`` files, one pass over every session in each
    ``rotation_files`` of them, the main corpus its first files up to about ``megabytes``."""
    if not corpora.is_dir() and not all(spec.bundled for spec in specs):
        raise CorporaMissingError(
            f"the shared corpora are not here ({corpora}): the real-call corpus is built from"
            " them (see its INDEX.md); pass --corpora DIR, or run the generated corpus only"
            " (bench_commands.py --issue28 --corpus generated)"
        )
    work = cache / f"real-calls-v{LAYOUT}"
    pool = work / f"pool-{rotation_files}-{megabytes:g}MB"
    surface_path = work / "surface.json"
    stats_path = pool / "stats.json"
    if pool_files(pool) >= files and surface_path.exists() and stats_path.exists():
        stats = json.loads(stats_path.read_text(encoding="utf-8"))
        return BuiltCorpus("real-calls", pool, surface_path, stats["main_corpus"]["files"], stats)
    work.mkdir(parents=True, exist_ok=True)
    converted, surfaces = [], []
    sources: dict[str, int] = {}
    for spec in specs:
        if not spec.bundled and not (corpora / spec.sessions[0]).exists():
            raise CorporaMissingError(f"{spec.name} is missing from {corpora}")
        directory, surface = convert_corpus(corpora, spec, work)
        converted.append(directory)
        sources[spec.name] = len(converted_sessions([directory]))
        if surface is not None:
            surfaces.append(surface)
    surface_path.write_text(json.dumps(merged_surfaces(surfaces), sort_keys=True), "utf-8")
    sessions = converted_sessions(converted)
    groups = packed_rotation([len(session) for session in sessions], rotation_files)
    rotation_bytes = sum(len(session) for session in sessions)
    main_files = max(1, round(megabytes * 1e6 * rotation_files / rotation_bytes))
    grow_pool(pool, max(files, main_files), lambda i: rotated_file(sessions, groups, i))
    stats = _summary(pool, main_files, sources)
    stats["rotation"] = {
        "files": rotation_files,
        "bytes": rotation_bytes,
        "sessions": len(sessions),
    }
    stats_path.write_text(json.dumps(stats, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return BuiltCorpus("real-calls", pool, surface_path, main_files, stats)


# ------------------------------------------------------------------------------ generated


def generated_surface(samples: int = 200, seed: int = GENERATED_SEED) -> dict[str, Any]:
    """A surface for ``corpus_gen``'s refs: each argument its generators produce, typed by
    the values they gave (no ``required``, closed objects), plus the discovery and workflow
    refs it calls with fixed arguments."""
    rng = random.Random(seed)
    actions = []
    for ref, (make, _projected) in ACTIONS.items():
        kinds: dict[str, set[str]] = {}
        for _ in range(samples):
            for key, value in make(rng).items():
                kinds.setdefault(key, set()).add(_json_type(value))
        properties = {
            key: {"type": sorted(types)[0]} if len(types) == 1 else {"type": sorted(types)}
            for key, types in sorted(kinds.items())
        }
        actions.append(
            {
                "ref": ref,
                "inputSchema": {
                    "type": "object",
                    "properties": properties,
                    "additionalProperties": False,
                },
            }
        )
    return {"version": 1, "actions": actions}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if value is None:
        return "null"
    return "object"


def build_generated(
    cache: Path,
    *,
    files: int = 288,
    main_files: int = MAIN_FILES,
    megabytes: float = TARGET_MEGABYTES,
    seed: int = GENERATED_SEED,
) -> BuiltCorpus:
    """The generated corpus laid out like the real-call one (file ``i`` from seed ``seed+i``)."""
    file_bytes = int(megabytes * 1_000_000 / main_files)
    work = cache / f"generated-v{LAYOUT}"
    pool = work / f"pool-{file_bytes}-{seed}"
    surface_path = work / "surface.json"
    stats_path = pool / "stats.json"
    if pool_files(pool) >= files and surface_path.exists() and stats_path.exists():
        stats = json.loads(stats_path.read_text(encoding="utf-8"))
        return BuiltCorpus("generated", pool, surface_path, main_files, stats)
    work.mkdir(parents=True, exist_ok=True)
    surface_path.write_text(json.dumps(generated_surface(), sort_keys=True), encoding="utf-8")

    def make(index: int) -> bytes:
        lines = session_lines(random.Random(seed + index), file_bytes, index)
        return "".join(line + "\n" for line in lines).encode()

    grow_pool(pool, max(files, main_files), make)
    stats = _summary(pool, main_files, {"bench/corpus_gen.py": max(files, main_files)})
    stats["file_bytes_target"] = file_bytes
    stats_path.write_text(json.dumps(stats, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return BuiltCorpus("generated", pool, surface_path, main_files, stats)


def build(kind: str, cache: Path, corpora: Path = CORPORA, **sizes: Any) -> BuiltCorpus:
    """``build_real_calls`` or ``build_generated`` by name (``real-calls``, ``generated``)."""
    if kind == "real-calls":
        return build_real_calls(cache, corpora, **sizes)
    if kind == "generated":
        return build_generated(cache, **sizes)
    raise SystemExit(f"unknown corpus kind {kind!r} (real-calls, generated)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--corpora", type=Path, default=CORPORA, help="the shared corpora")
    parser.add_argument("--kind", choices=["real-calls", "generated"], default="real-calls")
    parser.add_argument("--files", type=int, default=288, help="files in the pool")
    parser.add_argument("--megabytes", type=float, default=TARGET_MEGABYTES)
    args = parser.parse_args(argv)
    try:
        built = build(
            args.kind, args.cache, args.corpora, files=args.files, megabytes=args.megabytes
        )
    except CorporaMissingError as error:
        print(error, file=sys.stderr)
        return 2
    print(json.dumps({"pool": str(built.pool), "surface": str(built.surface), **built.stats}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
