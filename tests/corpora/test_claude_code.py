"""Claude Code transcripts (``claude-code-sessions-spotter``), subagent files included."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pytest_entropy.ingest.surfaces import load_surface
from tests.formats_support import corpus, corpus_operations, damage, round_trip

TRANSCRIPTS = "claude-code-sessions-spotter/transcripts"
TOOLS = "claude-code-sessions-spotter/surface/claude-code-2.1.39.tools.json"

# README "Counts": tool_use blocks per tool.
TOOLS_USED = {
    "Bash": 459,
    "Read": 267,
    "Edit": 206,
    "Glob": 59,
    "Grep": 53,
    "Write": 44,
    "WebFetch": 14,
    "WebSearch": 12,
    "TaskOutput": 8,
    "Task": 7,
    "AskUserQuestion": 2,
    "Skill": 2,
    "ExitPlanMode": 2,
    "EnterPlanMode": 1,
}


def test_every_tool_use_becomes_one_operation(shared_corpora: Path) -> None:
    surface = load_surface(shared_corpora / TOOLS)
    files, diagnostics = corpus([shared_corpora / TRANSCRIPTS], surface=surface)
    assert len(files) == 20  # 5 main sessions, 12 subagent transcripts, 3 small sessions
    assert sum("/subagents/" in path.as_posix() for path, _ in files) == 12
    ops = corpus_operations(files)
    assert Counter(op.ref for op in ops) == TOOLS_USED
    assert diagnostics.foreign_calls == len(ops) == 1136
    assert diagnostics.foreign_records == 10155  # every line of the 20 files
    assert damage(diagnostics) == {}
    assert diagnostics.unanswered_calls == diagnostics.unmatched_results == 0
    # 59 is_error results; every tool is declared and every failed call's arguments validate,
    # so each failure is an invoke failure (the README: 0 unknown tools, 0 missing required).
    assert Counter((op.outcome, op.failure_stage) for op in ops) == {
        ("succeeded", None): 1077,
        ("failed", "invoke"): 59,
    }
    models = Counter(
        trace.model for _, evidence in files for trace in evidence.traces for _ in trace.operations
    )
    assert set(models) == {
        "anthropic/claude-opus-4-6",
        "anthropic/claude-haiku-4-5-20251001",
        "anthropic/claude-sonnet-4-5-20250929",
    }
    sidechains = {
        trace.task_key
        for path, evidence in files
        if "/subagents/" in path.as_posix()
        for trace in evidence.traces
    }
    assert all("/" in key for key in sidechains)


def test_converted_transcripts_measure_the_same(shared_corpora: Path, tmp_path: Path) -> None:
    surface_path = shared_corpora / TOOLS
    direct, native = round_trip(
        [shared_corpora / TRANSCRIPTS],
        tmp_path,
        "claude-code",
        surface_path=surface_path,
        surface=load_surface(surface_path),
    )
    assert direct == native
