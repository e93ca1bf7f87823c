"""The generic OpenAI and Anthropic message readers on real conversations.

No corpus ships raw OpenAI or Anthropic API logs, but two hold them inside another format:
tau-bench trajectories are OpenAI chat-completions message lists, and Claude Code events wrap
Anthropic messages. Written out as plain logs, they must read as their native readers read
them.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pytest_entropy.ingest.jsonparse import parse_json_bytes
from tests.formats_support import corpus, corpus_operations, damage, operations, read


def test_openai_reader_on_tau_bench_conversations(shared_corpora: Path, tmp_path: Path) -> None:
    records = json.loads((shared_corpora / "tau-bench-historical/gpt-4o-airline.json").read_bytes())
    plain = tmp_path / "conversations.jsonl"
    flagged = tmp_path / "flagged.jsonl"
    with plain.open("w", encoding="utf-8") as out, flagged.open("w", encoding="utf-8") as marked:
        for record in records:
            conversation = {
                "id": f"{record['task_id']}-{record['trial']}",
                "model": "gpt-4o",
                "messages": record["traj"],
            }
            out.write(json.dumps(conversation) + "\n")
            # A logger that types failures adds is_error; tau-bench marks them with "Error:".
            for message in conversation["messages"]:
                if message["role"] == "tool" and message["content"].startswith("Error:"):
                    message["is_error"] = True
            marked.write(json.dumps(conversation) + "\n")
    evidence, diagnostics = read(plain, "auto")
    ops = operations(evidence)
    assert len(ops) == diagnostics.foreign_calls == 1164
    assert Counter(op.outcome for op in ops) == {"succeeded": 1164}  # OpenAI has no failure flag
    assert diagnostics.unmatched_results == diagnostics.unanswered_calls == 0
    assert {trace.model for trace in evidence.traces} == {"openai/gpt-4o"}
    assert damage(diagnostics) == {}
    evidence, _ = read(flagged, "openai")
    assert Counter(op.outcome for op in operations(evidence)) == {"succeeded": 1091, "failed": 73}


def test_anthropic_reader_on_claude_code_messages(shared_corpora: Path, tmp_path: Path) -> None:
    transcripts = shared_corpora / "claude-code-sessions-spotter/transcripts"
    files, _ = corpus([transcripts])
    for source, native in files:
        if "/subagents/" in source.as_posix():
            continue
        messages = tmp_path / source.name
        with messages.open("wb") as out:
            for line in source.read_bytes().splitlines():
                event, _ = parse_json_bytes(line)
                if event.get("type") in ("user", "assistant"):
                    out.write(json.dumps(event["message"]).encode() + b"\n")
        evidence, diagnostics = read(messages, "anthropic")
        expected = [(op.ref, op.outcome) for op in operations(native)]
        assert [(op.ref, op.outcome) for op in operations(evidence)] == expected
        assert diagnostics.unknown_records == 0
    assert corpus_operations(files)
