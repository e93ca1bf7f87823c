"""Plain Pi sessions (``pi-sessions``): counts from the corpus README, edit-schema drift."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pytest_entropy.ingest.surfaces import load_surface
from tests.formats_support import corpus, corpus_operations, damage, operations, round_trip

SESSIONS = "pi-sessions/sessions"
OLD_TOOLS = "pi-sessions/surface/pi-coding-agent-0.27.9.tools.json"
NEW_TOOLS = "pi-sessions/surface/pi-coding-agent-0.73.1.tools.json"

# README "Counts": tool calls and isError results per session.
PER_SESSION = {
    "large-session.jsonl": (391, 19),
    "before-compaction.jsonl": (454, 12),
    "session.jsonl": (189, 12),
    "compact.jsonl": (432, 17),
}


def test_every_call_becomes_one_operation(shared_corpora: Path) -> None:
    files, diagnostics = corpus([shared_corpora / SESSIONS])
    assert {
        path.name: (
            len(operations(evidence)),
            sum(op.outcome == "failed" for op in operations(evidence)),
        )
        for path, evidence in files
    } == PER_SESSION
    ops = corpus_operations(files)
    assert Counter(op.ref for op in ops) == {
        "pi.bash": 720,
        "pi.edit": 401,
        "pi.read": 319,
        "pi.write": 26,
    }
    assert diagnostics.foreign_calls == len(ops) == 1466
    # ~3500 entries, every one read; the two lines holding two entries (compact.jsonl:1013,
    # session.jsonl:440) are split, not skipped.
    assert diagnostics.foreign_records == 3500
    assert diagnostics.concatenated_lines == 2
    assert any(
        sample.endswith("compact.jsonl:1013: 2 JSON values on one line")
        for sample in diagnostics.samples
    )
    assert damage(diagnostics) == {}
    # Calls without a result sit in aborted or errored turns (the two edits lacking newText
    # among them).
    assert diagnostics.unanswered_calls == Counter(op.outcome for op in ops)["aborted"] == 27
    assert {trace.model for _, evidence in files for trace in evidence.traces} == {
        "anthropic/claude-opus-4-5",
        "anthropic/claude-sonnet-4-5",
    }


def test_edit_schema_migration_shows_as_validate_failures(shared_corpora: Path) -> None:
    sessions = shared_corpora / SESSIONS
    old = load_surface(shared_corpora / OLD_TOOLS)
    new = load_surface(shared_corpora / NEW_TOOLS)
    assert [action["ref"] for action in old["actions"]][:4] == [
        "pi.read",
        "pi.bash",
        "pi.edit",
        "pi.write",
    ]
    stages_old = Counter(
        (op.ref, op.failure_stage)
        for op in corpus_operations(corpus([sessions], surface=old, key="old")[0])
        if op.outcome == "failed"
    )
    stages_new = Counter(
        (op.ref, op.failure_stage)
        for op in corpus_operations(corpus([sessions], surface=new, key="new")[0])
        if op.outcome == "failed"
    )
    assert stages_old == {
        ("pi.bash", "invoke"): 54,
        ("pi.edit", "invoke"): 4,
        ("pi.read", "invoke"): 2,
    }
    # 0.73.1 replaced edit's oldText/newText with edits[]: the recorded edits no longer validate.
    assert stages_new == {
        ("pi.bash", "invoke"): 54,
        ("pi.edit", "validate"): 4,
        ("pi.read", "invoke"): 2,
    }


def test_converted_sessions_measure_the_same(shared_corpora: Path, tmp_path: Path) -> None:
    surface_path = shared_corpora / OLD_TOOLS
    direct, native = round_trip(
        [shared_corpora / SESSIONS],
        tmp_path,
        "auto",
        surface_path=surface_path,
        surface=load_surface(surface_path),
    )
    assert direct == native
