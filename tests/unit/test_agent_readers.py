"""The Codex CLI and Gemini CLI readers (issue 33): real samples measured to hand-checked
counts, one test per row of the failure-stage tables in docs/formats.md, and generated edge
cases (undecodable arguments, calls without outputs, rewinds, compactions, unknown records)."""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.registry import directory_listing, resolve_format
from tests.formats_support import operations, outcomes, read, round_trip

DATA = Path(__file__).resolve().parents[1] / "data"
CODEX_A = (
    DATA / "codex" / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl.gz"
)
CODEX_B = (
    DATA / "codex" / "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl.gz"
)
GEMINI_A = DATA / "gemini-cli" / "session-2025-12-01T21-45-5b959dae.json.gz"
GEMINI_B = DATA / "gemini-cli" / "session-2026-01-16T11-01-file-ops-37b7abef.json.gz"


def jsonl(path: Path, *records: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def summary(path: Path, session_format: str = "auto") -> dict[str, Any]:
    """What the issue checks: calls, failed calls by stage, distinct tools, models."""
    evidence, diagnostics = read(path, session_format)
    ops = operations(evidence)
    return {
        "calls": len(ops),
        "traces": len(evidence.traces),
        "failed": dict(Counter(op.failure_stage for op in ops if op.outcome == "failed")),
        "outcomes": dict(Counter(op.outcome for op in ops)),
        "tools": dict(Counter(op.ref for op in ops)),
        "models": sorted({str(trace.model) for trace in evidence.traces}),
        "tasks": sorted({trace.task_key for trace in evidence.traces}),
        "diagnostics": diagnostics,
    }


# ------------------------------------------------------------------------- real samples


def test_codex_real_rollout_with_events() -> None:
    assert resolve_format(CODEX_A, ReadOptions()) == "codex"
    got = summary(CODEX_A)
    assert got["calls"] == 105 and got["traces"] == 2
    assert got["tools"] == {
        "exec_command": 43,
        "write_stdin": 54,
        "apply_patch": 3,
        "web_search": 3,
        "update_plan": 2,
    }
    # The four exec_command_end events with exit codes 2, 1, 1, 1, each after its output.
    assert got["failed"] == {"invoke": 4}
    assert got["outcomes"] == {"succeeded": 101, "failed": 4}
    evidence, _ = read(CODEX_A)
    assert {op.ref for op in operations(evidence) if op.outcome == "failed"} == {"exec_command"}
    assert got["models"] == ["openai/gpt-5.5"]
    assert got["tasks"] == ["019e1625-789d-76c0-80ab-3724b5ddb799"]
    diagnostics = got["diagnostics"]
    assert diagnostics.unknown_records == 0 and diagnostics.unanswered_calls == 0
    assert diagnostics.foreign_records == 386


def test_codex_real_rollout_without_events() -> None:
    got = summary(CODEX_B)
    assert got["calls"] == 38 and got["traces"] == 1
    assert got["tools"] == {"exec_command": 35, "js": 3}
    assert got["failed"] == {"invoke": 1}  # "Process exited with code 1"
    assert got["models"] == ["None"]  # the sample has no turn_context
    assert got["diagnostics"].unknown_records == 0


def test_gemini_real_recordings() -> None:
    for path in (GEMINI_A, GEMINI_B):
        assert resolve_format(path, ReadOptions()) == "gemini-cli"
    first = summary(GEMINI_A)
    assert (first["calls"], first["traces"], first["failed"]) == (10, 2, {})
    assert first["tools"] == {"read_file": 7, "list_directory": 1, "write_file": 1, "replace": 1}
    assert first["models"] == ["google/gemini-3-pro-image-preview"]
    assert first["tasks"] == ["5b959dae-8655-4cd1-b10f-720b8c336ea2"]
    second = summary(GEMINI_B)
    assert (second["calls"], second["traces"], second["failed"]) == (14, 4, {})
    assert second["tools"] == {
        "read_file": 6,
        "write_todos": 3,
        "write_file": 3,
        "delegate_to_agent": 1,
        "search_file_content": 1,
    }
    assert second["models"] == ["google/gemini-3-pro"]
    for got in (first, second):
        assert got["diagnostics"].unknown_records == 0
        assert got["diagnostics"].unanswered_calls == 0


# -------------------------------------------------------------------------------- codex


def line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-01-01T00:00:00.000Z", "type": kind, "payload": payload}


def meta(session: str = "s-1", **extra: Any) -> dict[str, Any]:
    return line("session_meta", {"id": session, "cwd": "/w", "model_provider": "openai", **extra})


def turn(model: str = "gpt-5") -> dict[str, Any]:
    return line("turn_context", {"cwd": "/w", "model": model})


def fcall(call_id: str, name: str = "shell", arguments: Any = '{"command": ["ls"]}') -> Any:
    return line(
        "response_item",
        {"type": "function_call", "name": name, "arguments": arguments, "call_id": call_id},
    )


def fout(call_id: str, output: Any = "ok", kind: str = "function_call_output") -> Any:
    return line("response_item", {"type": kind, "call_id": call_id, "output": output})


def event(kind: str, call_id: str, **fields: Any) -> dict[str, Any]:
    return line("event_msg", {"type": kind, "call_id": call_id, **fields})


def codex_one(tmp_path: Path, *records: Any) -> tuple[str, str | None]:
    """The outcome and stage of the one call of a rollout."""
    path = jsonl(tmp_path / "rollout-x.jsonl", meta(), turn(), *records)
    evidence, _ = read(path, "codex")
    (op,) = operations(evidence)
    return op.outcome, op.failure_stage


CODEX_ROWS = [
    ("succeeded", [fcall("c"), fout("c", "done")], ("succeeded", None)),
    ("unsupported call", [fcall("c", "nope"), fout("c", "unsupported call: nope")],
     ("failed", "resolve")),
    ("unsupported custom call", [
        line("response_item", {"type": "custom_tool_call", "name": "x", "input": "*",
                               "call_id": "c"}),
        fout("c", "unsupported custom tool call: x", "custom_tool_call_output")],
     ("failed", "resolve")),
    ("parse failure, JSON arguments", [
        fcall("c", arguments='{"command": 1}'),
        fout("c", "failed to parse function arguments: invalid type: integer `1`")],
     ("failed", "validate")),
    ("parse failure, not JSON", [
        fcall("c", arguments="{command"),
        fout("c", "failed to parse function arguments: key must be a string")],
     ("failed", "prepare")),
    ("exec rejected", [fcall("c"), fout("c", "exec command rejected by user")],
     ("failed", "approve")),
    ("patch rejected", [
        line("response_item", {"type": "custom_tool_call", "name": "apply_patch", "input": "*",
                               "call_id": "c"}),
        fout("c", "patch rejected by user", "custom_tool_call_output")],
     ("failed", "approve")),
    ("exec declined event", [fcall("c"), event("exec_command_end", "c", exit_code=-1,
                                                status="declined"), fout("c", "x")],
     ("failed", "approve")),
    ("exit code event before output", [fcall("c"), event("exec_command_end", "c", exit_code=2),
                                       fout("c", "x")],
     ("failed", "invoke")),
    ("exit code event after output", [fcall("c"), fout("c", "Process running"),
                                      event("exec_command_end", "c", exit_code=1)],
     ("failed", "invoke")),
    ("zero exit event wins over text", [fcall("c"), fout("c", "Exit code: 3"),
                                        event("exec_command_end", "c", exit_code=0)],
     ("succeeded", None)),
    ("patch failed event", [fcall("c", "apply_patch"), event("patch_apply_end", "c",
                                                             success=False), fout("c", "x")],
     ("failed", "invoke")),
    ("mcp error result", [fcall("c", "mcp__gh__issue_read"), event(
        "mcp_tool_call_end", "c", result={"Ok": {"content": [], "isError": True}}), fout("c")],
     ("failed", "invoke")),
    ("mcp call error", [fcall("c", "mcp__gh__issue_read"), event(
        "mcp_tool_call_end", "c", result={"Err": "unknown server"}), fout("c")],
     ("failed", None)),
    ("execution error", [fcall("c"), fout("c", "execution error: Io(...)")],
     ("failed", "invoke")),
    ("structured exit code", [fcall("c"), fout("c", json.dumps(
        {"output": "", "metadata": {"exit_code": 1, "duration_seconds": 0.1}}))],
     ("failed", "invoke")),
    ("freeform exit code", [fcall("c"), fout("c", "Exit code: 127\nWall time: 0 seconds")],
     ("failed", "invoke")),
    ("older failure object", [fcall("c"), fout("c", {"content": "boom", "success": False})],
     ("failed", None)),
    ("poll shows the command's exit", [fcall("c", "write_stdin", '{"session_id": 1}'),
                                       fout("c", "Process exited with code 1")],
     ("succeeded", None)),
    ("no output", [fcall("c")], ("aborted", None)),
    ("web search failed", [line("response_item", {"type": "web_search_call", "status": "failed",
                                                  "action": {"type": "search", "query": "q"}})],
     ("failed", "invoke")),
    ("web search completed", [line("response_item", {"type": "web_search_call",
                                                     "status": "completed"})],
     ("succeeded", None)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("records", "expected"),
    [(records, expected) for _, records, expected in CODEX_ROWS],
    ids=[name for name, _, _ in CODEX_ROWS],
)
def test_codex_stage_table(tmp_path: Path, records: list[Any], expected: Any) -> None:
    assert codex_one(tmp_path, *records) == expected


def test_codex_turns_models_names_and_damage(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "rollout-2026.jsonl",
        meta("sess-9", model_provider="azure"),
        turn("gpt-5"),
        fcall("a", "mcp__github__issue_read", '{"owner": "o", "number": 1}'),
        fout("a"),
        line("response_item", {"type": "custom_tool_call", "name": "apply_patch",
                               "input": "*** Begin Patch", "call_id": "b"}),
        line("compacted", {"message": "summary", "replacement_history": [
            {"type": "function_call", "name": "ghost", "arguments": "{}", "call_id": "z"}]}),
        fout("b", "Success", "custom_tool_call_output"),
        turn("gpt-5-mini"),
        fcall("c", arguments="not json"),
        line("response_item", {"type": "hologram", "call_id": "c"}),
        line("future_record", {"x": 1}),
        line("response_item", {"type": "local_shell_call", "call_id": "d", "status": "completed",
                               "action": {"type": "exec", "command": ["pwd"]}}),
        fout("d", "Exit code: 0"),
        fout("zz"),
    )  # fmt: skip
    with path.open("a", encoding="utf-8") as stream:
        stream.write("{not json\n[1]\n")
    assert resolve_format(path, ReadOptions()) == "codex"
    evidence, diagnostics = read(path)
    ops = operations(evidence)
    assert [op.ref for op in ops] == [
        "mcp__github__issue_read",
        "apply_patch",
        "shell",
        "local_shell",
    ]
    assert [trace.model for trace in evidence.traces] == ["azure/gpt-5", "azure/gpt-5-mini"]
    assert {trace.task_key for trace in evidence.traces} == {"sess-9"}
    assert outcomes(evidence) == Counter(
        {("succeeded", None): 3, ("aborted", None): 1}
    )  # the compacted history's call is not a new call
    assert diagnostics.unknown_records == 2  # the hologram item, the future line type
    assert diagnostics.undecodable_arguments == 1
    assert diagnostics.unanswered_calls == 1
    assert diagnostics.unmatched_results == 1
    assert diagnostics.malformed_lines == 1 and diagnostics.non_object_lines == 1


# --------------------------------------------------------------------------- gemini-cli


def gemini_meta(session: str = "g-1") -> dict[str, Any]:
    return {"sessionId": session, "projectHash": "ab" * 32, "startTime": "t", "lastUpdated": "t"}


def user(message_id: str, text: str = "go") -> dict[str, Any]:
    return {"id": message_id, "timestamp": "t", "type": "user", "content": text}


def gemini(message_id: str, *calls: dict[str, Any], model: str = "gemini-2.5-pro") -> Any:
    return {"id": message_id, "timestamp": "t", "type": "gemini", "content": "",
            "model": model, "toolCalls": list(calls)}  # fmt: skip


def tool(call_id: str, status: str = "success", error: str | None = None, **extra: Any) -> Any:
    result: Any = [{"functionResponse": {"id": call_id, "name": "read_file",
                                         "response": {"output": "x"}}}]  # fmt: skip
    if error is not None:
        result = [{"functionResponse": {"id": call_id, "name": "read_file",
                                        "response": {"error": error}}}]  # fmt: skip
    return {"id": call_id, "name": extra.pop("name", "read_file"),
            "args": extra.pop("args", {"path": "a"}), "result": result, "status": status,
            "timestamp": "t", **extra}  # fmt: skip


GEMINI_ROWS = [
    ("success", tool("c"), ("succeeded", None)),
    ("tool not found", tool("c", "error", 'Tool "reed_file" not found. Did you mean "read_file"?'),
     ("failed", "resolve")),
    ("policy denial", tool("c", "error", "Tool execution denied by policy. No shell."),
     ("failed", "approve")),
    ("invalid parameters", tool("c", "error", "params must have required property 'path'"),
     ("failed", "validate")),
    ("execution error", tool("c", "error", "File not found: /a"), ("failed", None)),
    ("cancelled", tool("c", "cancelled"), ("aborted", None)),
    ("never finished", tool("c", "executing"), ("aborted", None)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "expected"),
    [(call, expected) for _, call, expected in GEMINI_ROWS],
    ids=[name for name, _, _ in GEMINI_ROWS],
)
def test_gemini_stage_table(tmp_path: Path, call: dict[str, Any], expected: Any) -> None:
    path = jsonl(tmp_path / "session-1.jsonl", gemini_meta(), user("u"), gemini("m", call))
    evidence, diagnostics = read(path, "gemini-cli")
    (op,) = operations(evidence)
    assert (op.outcome, op.failure_stage) == expected
    assert diagnostics.unanswered_calls == 0


def test_gemini_rewrites_rewinds_and_checkpoints(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "session-2026-01-01T00-00-abcd.jsonl",
        gemini_meta("g-7"),
        user("u1"),
        gemini("m1", tool("a")),
        gemini("m1", tool("a"), tool("b", name="glob", args="**/*.py")),  # the turn grew
        user("u2"),
        gemini("m2", tool("c", name="run_shell_command", args={"command": "ls"})),
        user("u3"),
        gemini("m3", tool("d", name="web_fetch")),
        {"$rewindTo": "u3"},  # drops u3 and m3
        {"$set": {"summary": "s"}},
        {"mystery": True},
        {"id": "x1", "timestamp": "t", "type": "hologram", "content": ""},
        gemini("m4", tool("e", name="write_file"), model="gemini-2.5-flash"),
    )
    assert resolve_format(path, ReadOptions()) == "gemini-cli"
    evidence, diagnostics = read(path)
    ops = operations(evidence)
    assert [op.ref for op in ops] == ["read_file", "glob", "run_shell_command", "write_file"]
    assert [trace.model for trace in evidence.traces] == [
        "google/gemini-2.5-pro",
        "google/gemini-2.5-pro",
        "google/gemini-2.5-flash",
    ]
    assert {trace.task_key for trace in evidence.traces} == {"g-7"}
    assert diagnostics.duplicate_records == 1  # m1's earlier copy
    assert diagnostics.rewound_records == 2  # u3, m3
    assert diagnostics.unknown_records == 2  # the mystery record, the hologram message
    assert diagnostics.undecodable_arguments == 1  # glob's string arguments
    # A checkpoint replaces the conversation; a rewind to an unknown id clears it.
    checkpoint = jsonl(
        tmp_path / "session-b.jsonl",
        gemini_meta(),
        user("u1"),
        gemini("m1", tool("a")),
        {"$set": {"messages": [user("u9"), gemini("m9", tool("z", name="glob"))]}},
    )
    assert [op.ref for op in operations(read(checkpoint)[0])] == ["glob"]
    cleared = jsonl(
        tmp_path / "session-c.jsonl",
        gemini_meta(),
        user("u1"),
        gemini("m1", tool("a")),
        {"$rewindTo": "gone"},
        gemini("m2", tool("b", name="glob")),
    )
    evidence, diagnostics = read(cleared)
    assert [op.ref for op in operations(evidence)] == ["glob"]
    assert diagnostics.rewound_records == 2


# --------------------------------------------------------------- directories and auto


def test_directory_rules(tmp_path: Path) -> None:
    codex_home = tmp_path / ".codex"
    day = codex_home / "sessions" / "2026" / "01" / "02"
    jsonl(day / "rollout-2026-01-02T10-00-00-b.jsonl", meta("b"), turn(), fcall("c"), fout("c"))
    jsonl(day / "rollout-2026-01-02T09-00-00-a.jsonl", meta("a"), turn(), fcall("c"), fout("c"))
    jsonl(codex_home / "history.jsonl", {"session_id": "a", "ts": 1, "text": "hi"})
    listed = directory_listing(codex_home, ReadOptions("codex")).files
    assert [path.name for path in listed] == [
        "rollout-2026-01-02T09-00-00-a.jsonl",
        "rollout-2026-01-02T10-00-00-b.jsonl",
    ]
    gemini_home = tmp_path / ".gemini"
    chats = gemini_home / "tmp" / ("ab" * 32) / "chats"
    jsonl(chats / "session-2.jsonl", gemini_meta("2"), user("u"), gemini("m", tool("a")))
    jsonl(chats / "session-1.json", {**gemini_meta("1"), "messages": []})
    jsonl(gemini_home / "settings.json", {"theme": "x"})
    listed = directory_listing(gemini_home, ReadOptions("gemini-cli")).files
    assert [path.name for path in listed] == ["session-1.json", "session-2.jsonl"]


def test_auto_reads_a_mixed_directory_and_names_what_it_cannot(tmp_path: Path) -> None:
    root = tmp_path / "mixed"
    jsonl(root / "codex" / "rollout-1.jsonl", meta(), turn(), fcall("c"), fout("c"))
    jsonl(root / "gemini" / "session-1.jsonl", gemini_meta(), user("u"), gemini("m", tool("a")))
    (root / "gemini" / "legacy.json.gz").write_bytes(GEMINI_A.read_bytes())
    (root / "inspect").mkdir()
    (root / "otel").mkdir()
    (root / "otel" / "spans.jsonl").write_bytes(
        (DATA / "otel-genai" / "agent-trace.jsonl").read_bytes()
    )
    (root / "inspect" / "run.eval").write_bytes(
        (DATA / "inspect" / "log_message_deduplication.eval").read_bytes()
    )
    jsonl(root / "openai" / "chat.jsonl", {"messages": [
        {"role": "assistant", "tool_calls": [{"id": "t", "type": "function", "function": {
            "name": "lookup", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "t",
                                                       "content": "ok"}]})  # fmt: skip
    (root / "notes.json").write_text('{"hello": "world"}', encoding="utf-8")
    (root / "misc").mkdir()
    (root / "misc" / "broken.jsonl").write_bytes(b"\x00\x01 not a log\n")
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
        code = main(["measure", "--sessions", str(root), "--json"])
    assert code == 0
    document = json.loads(buffer.getvalue())
    refs = {row["ref"] for row in document["report"]["refs"]}
    assert refs == {
        "shell", "read_file", "list_directory", "write_file", "replace", "lookup", "bash",
        "get_weather", "lookup_user", "send_email",
    }  # fmt: skip
    diagnostics = document["diagnostics"]
    assert diagnostics["files"] == 6
    assert sorted(diagnostics["unrecognizedNames"]) == [
        str(root / "misc" / "broken.jsonl"),
        str(root / "notes.json"),
    ]
    for path, expected in [
        (root / "codex" / "rollout-1.jsonl", "codex"),
        (root / "gemini" / "session-1.jsonl", "gemini-cli"),
        (root / "gemini" / "legacy.json.gz", "gemini-cli"),
        (root / "openai" / "chat.jsonl", "openai"),
        (root / "inspect" / "run.eval", "inspect"),
        (root / "otel" / "spans.jsonl", "otel-genai"),
    ]:
        assert resolve_format(path, ReadOptions()) == expected


@pytest.mark.parametrize("session_format", ["codex", "gemini-cli"])
def test_convert_then_measure_equals_direct(tmp_path: Path, session_format: str) -> None:
    source = CODEX_A if session_format == "codex" else GEMINI_B
    (tmp_path / "in").mkdir()
    name = "rollout-a.jsonl.gz" if session_format == "codex" else "session-a.json.gz"
    (tmp_path / "in" / name).write_bytes(source.read_bytes())
    direct, native = round_trip([tmp_path / "in"], tmp_path / "out", session_format)
    assert direct == native


def test_codex_older_rollouts_without_the_envelope(tmp_path: Path) -> None:
    shell_output = json.dumps({"output": "", "metadata": {"exit_code": 2}})
    path = jsonl(
        tmp_path / "rollout-2025-06-01T10-00-00-abc.jsonl",
        {"id": "old-1", "timestamp": "2025-06-01T10:00:00Z", "instructions": None},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "function_call", "name": "shell", "arguments": '{"command": ["ls"]}',
         "call_id": "a"},
        {"type": "function_call_output", "call_id": "a",
         "output": {"content": shell_output, "success": False}},
        {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "b"},
        {"type": "function_call_output", "call_id": "b", "output": {"content": "ok"}},
    )  # fmt: skip
    assert resolve_format(path, ReadOptions()) == "codex"
    evidence, diagnostics = read(path)
    assert [(op.ref, op.outcome, op.failure_stage) for op in operations(evidence)] == [
        ("shell", "failed", "invoke"),
        ("shell", "succeeded", None),
    ]
    assert {trace.task_key for trace in evidence.traces} == {"old-1"}
    assert diagnostics.unknown_records == 0
