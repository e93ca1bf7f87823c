"""Each foreign session reader on small inline logs (no shared corpora needed)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.registry import resolve_format
from pytest_entropy.ingest.writer import blank_args
from pytest_entropy.sources.locate import expand_session_paths
from tests.formats_support import operations, outcomes, read, round_trip


def jsonl(path: Path, *records: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def surface(*tools: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"version": 1, "actions": [{"ref": ref, "inputSchema": schema} for ref, schema in tools]}


PATH_SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "limit": {"type": "number"}},
    "required": ["path"],
    "additionalProperties": False,
}


# ------------------------------------------------------------------------------ Pi


def pi_assistant(*calls: tuple[str, str, Any], model: str = "claude-opus-4-5") -> dict[str, Any]:
    return {
        "type": "message",
        "message": {
            "role": "assistant",
            "provider": "anthropic",
            "model": model,
            "content": [
                {"type": "toolCall", "id": call_id, "name": name, "arguments": args}
                for call_id, name, args in calls
            ],
        },
    }


def pi_result(call_id: str, *, error: bool = False) -> dict[str, Any]:
    return {
        "type": "message",
        "message": {"role": "toolResult", "toolCallId": call_id, "isError": error},
    }


def pi_user(text: str = "go") -> dict[str, Any]:
    return {"type": "message", "message": {"role": "user", "content": text}}


def pi_session(tmp_path: Path) -> Path:
    return jsonl(
        tmp_path / "pi.jsonl",
        {"type": "session", "id": "s-1", "cwd": "/w"},
        pi_user(),
        pi_assistant(("c1", "read", {"path": "a.ts"}), ("c2", "read", {"path": "b", "limit": 9})),
        pi_result("c1"),
        pi_result("c2", error=True),
        pi_assistant(("c3", "edit", {"path": "a.ts", "oldText": "x"})),
        {"type": "thinking_level_change", "thinkingLevel": "off"},
        pi_user(),
        pi_assistant(("c4", "bash", {"command": "ls"}), model="claude-sonnet-4-5"),
        pi_result("c4"),
    )


def test_pi_calls_results_runs_and_models(tmp_path: Path) -> None:
    path = pi_session(tmp_path)
    assert resolve_format(path, ReadOptions()) == "pi"
    evidence, diagnostics = read(path)
    assert [len(trace.operations) for trace in evidence.traces] == [3, 1]
    assert [trace.task_key for trace in evidence.traces] == ["s-1", "s-1"]
    assert [trace.model for trace in evidence.traces] == [
        "anthropic/claude-opus-4-5",
        "anthropic/claude-sonnet-4-5",
    ]
    ops = operations(evidence)
    assert [op.ref for op in ops] == ["pi.read", "pi.read", "pi.edit", "pi.bash"]
    assert [op.outcome for op in ops] == ["succeeded", "failed", "aborted", "succeeded"]
    # Trace args keep the shape, audits the values.
    assert ops[1].args == {"path": "", "limit": 0}
    assert evidence.audit_calls[1].args == {"path": "b", "limit": 9}
    assert diagnostics.foreign_calls == 4 and diagnostics.unanswered_calls == 1
    assert ops[1].failure_stage is None  # no surface, no stage


def test_pi_stages_replay_against_the_surface(tmp_path: Path) -> None:
    path = pi_session(tmp_path)
    tools = surface(("pi.read", PATH_SCHEMA))
    evidence, _ = read(path, surface=tools)
    assert outcomes(evidence)[("failed", "invoke")] == 1
    bad = jsonl(
        tmp_path / "bad.jsonl",
        {"type": "session", "id": "s-2"},
        pi_assistant(("a", "read", {"path": 3}), ("b", "grep", {"q": "x"}), ("c", "read", {})),
        pi_result("a", error=True),
        pi_result("b", error=True),
        pi_result("c", error=True),
    )
    evidence, _ = read(bad, surface=tools)
    assert [op.failure_stage for op in operations(evidence)] == ["validate", "resolve", "validate"]


def test_pi_damaged_lines_are_counted_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "damaged.jsonl"
    lines = [
        json.dumps({"type": "session", "id": "s"}),
        json.dumps(pi_assistant(("a", "read", {"path": "x"})))
        + json.dumps(pi_result("a")),  # two objects on one line (a real Pi writer quirk)
        '{"type":"message","message":{"role":"toolResult","toolCallId":"zz"',  # truncated
        json.dumps({"type": "future_entry", "x": 1}),
        "[1, 2]",
        "",
        json.dumps(pi_assistant(("b", "read", {"path": "y"}))),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    evidence, diagnostics = read(path, "pi")
    assert [op.outcome for op in operations(evidence)] == ["succeeded", "aborted"]
    assert diagnostics.concatenated_lines == 1
    assert diagnostics.malformed_lines == 1
    assert diagnostics.unknown_records == 1
    assert diagnostics.non_object_lines == 1
    assert diagnostics.empty_lines == 1
    assert any("2 JSON values on one line" in sample for sample in diagnostics.samples)


def test_fabric_sessions_stay_native(tmp_path: Path, demo_dir: Path) -> None:
    for path in expand_session_paths([demo_dir / "sessions"]):
        assert resolve_format(path, ReadOptions()) == "fabric"
    # A Pi header with a fabric trace anywhere in the file is read natively.
    native = demo_dir / "sessions" / "2026-01-05-notes-release.jsonl"
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(
        json.dumps({"type": "session", "id": "s"}).encode()
        + b"\n"
        + json.dumps(pi_assistant(("a", "read", {"path": "x"}))).encode()
        + b"\n"
        + native.read_bytes()
    )
    assert resolve_format(mixed, ReadOptions()) == "fabric"


def test_gzip_logs_read_transparently(tmp_path: Path) -> None:
    plain = pi_session(tmp_path)
    packed = tmp_path / "pi.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert resolve_format(packed, ReadOptions()) == "pi"
    assert read(packed)[0] == read(plain)[0]


# ---------------------------------------------------------------------- Claude Code


def cc_event(kind: str, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "sessionId": "sess-1",
        "uuid": "u",
        "isSidechain": False,
        "message": message,
        **extra,
    }


def cc_call(call_id: str, name: str, args: Any, model: str = "claude-opus-4-6") -> dict[str, Any]:
    content = [{"type": "tool_use", "id": call_id, "name": name, "input": args}]
    return cc_event("assistant", {"model": model, "role": "assistant", "content": content})


def cc_result(call_id: str, *, error: bool = False) -> dict[str, Any]:
    content = [{"type": "tool_result", "tool_use_id": call_id, "content": "x", "is_error": error}]
    return cc_event("user", {"role": "user", "content": content})


def test_claude_code_transcript_with_subagents(tmp_path: Path) -> None:
    root = tmp_path / "project"
    main_file = jsonl(
        root / "sess-1.jsonl",
        {"type": "file-history-snapshot", "messageId": "m"},
        cc_event("user", {"role": "user", "content": "fix it"}),
        cc_call("t1", "Bash", {"command": "ls"}),
        cc_call("t1", "Bash", {"command": "ls"}),  # the same block on a second line
        cc_call("t2", "Read", {"file_path": "/a"}),
        cc_result("t1", error=True),
        cc_result("t2"),
        {"type": "progress", "data": {}},
        {"type": "brand-new-event"},
    )
    agent = jsonl(
        root / "sess-1" / "subagents" / "agent-a1.jsonl",
        {
            **cc_event("user", {"role": "user", "content": "explore"}),
            "isSidechain": True,
            "agentId": "a1",
        },
        {**cc_call("s1", "Grep", {"pattern": "x"}, "claude-haiku-4-5"), "isSidechain": True},
        {**cc_result("s1"), "isSidechain": True},
    )
    assert expand_session_paths([root]) == [main_file, agent]
    assert resolve_format(main_file, ReadOptions()) == "claude-code"
    evidence, diagnostics = read(main_file)
    ops = operations(evidence)
    assert [(op.ref, op.outcome) for op in ops] == [("Bash", "failed"), ("Read", "succeeded")]
    assert evidence.traces[0].task_key == "sess-1"
    assert evidence.traces[0].model == "anthropic/claude-opus-4-6"
    assert diagnostics.duplicate_records == 1 and diagnostics.unknown_records == 1
    sub, _ = read(agent)
    assert sub.traces[0].task_key == "sess-1/a1"
    assert sub.traces[0].model == "anthropic/claude-haiku-4-5"


# ---------------------------------------------------------------------------- OpenAI


def test_openai_chat_messages_conversations_and_responses(tmp_path: Path) -> None:
    call = {"id": "k1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": 1}'}}
    path = jsonl(
        tmp_path / "chat.jsonl",
        {"role": "user", "content": "hi"},
        {"role": "assistant", "model": "gpt-4o", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "k1", "content": "ok"},
        {
            "role": "assistant",
            "tool_calls": [
                {**call, "id": "k2", "function": {"name": "lookup", "arguments": "{bad"}}
            ],
        },
        {"role": "tool", "tool_call_id": "k2", "content": "nope", "is_error": True},
        {"role": "assistant", "function_call": {"name": "legacy", "arguments": "{}"}},
        {"role": "function", "name": "legacy", "content": "done"},
        {"type": "function_call", "call_id": "r1", "name": "search", "arguments": '{"x": "y"}'},
        {"type": "function_call_output", "call_id": "r1", "output": "..."},
        {"role": "tool", "tool_call_id": "ghost", "content": "?"},
    )
    assert resolve_format(path, ReadOptions()) == "openai"
    evidence, diagnostics = read(path)
    ops = operations(evidence)
    assert [(op.ref, op.outcome) for op in ops] == [
        ("lookup", "succeeded"),
        ("lookup", "failed"),
        ("legacy", "succeeded"),
        ("search", "succeeded"),
    ]
    assert evidence.traces[0].model == "openai/gpt-4o"
    assert diagnostics.undecodable_arguments == 1 and diagnostics.unmatched_results == 1
    # Undecodable arguments: empty shape in the trace, no audit args (counted as skipped).
    assert ops[1].args == {} and diagnostics.skipped_audits == 1
    conversation = jsonl(
        tmp_path / "conversations.jsonl",
        {
            "id": "conv-a",
            "model": "openrouter/qwen-3",
            "messages": [{"role": "assistant", "tool_calls": [call]}],
        },
    )
    evidence, _ = read(conversation, "openai")
    assert evidence.traces[0].task_key == "conv-a"
    assert evidence.traces[0].model == "openrouter/qwen-3"
    assert [op.outcome for op in operations(evidence)] == ["aborted"]


# ------------------------------------------------------------------------- Anthropic


def test_anthropic_messages_log(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "messages.jsonl",
        {"role": "user", "content": "hi"},
        {
            "type": "message",
            "role": "assistant",
            "model": "claude-3-5-sonnet",
            "content": [
                {"type": "tool_use", "id": "u1", "name": "get_weather", "input": {"city": "Oslo"}}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "u1", "is_error": True}],
        },
    )
    assert resolve_format(path, ReadOptions()) == "anthropic"
    evidence, _ = read(path)
    assert [(op.ref, op.outcome) for op in operations(evidence)] == [("get_weather", "failed")]
    assert evidence.traces[0].model == "anthropic/claude-3-5-sonnet"
    assert evidence.audit_calls[0].args == {"city": "Oslo"}


# ------------------------------------------------------------------------------- MCP


def rpc(**fields: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", **fields}


def mcp_log(tmp_path: Path) -> Path:
    call = "tools/call"
    return jsonl(
        tmp_path / "mcp.jsonl",
        rpc(id=0, method="initialize", params={}),
        rpc(id=0, result={"serverInfo": {"name": "notes", "version": "1"}}),
        rpc(method="notifications/initialized"),
        rpc(id=1, method=call, params={"name": "render", "arguments": {"format": "pdf"}}),
        rpc(id=1, result={"content": [], "isError": False}),
        rpc(id="1", method=call, params={"name": "render", "arguments": {"format": "x"}}),
        rpc(id="1", result={"content": [], "isError": True}),
        rpc(id=2, method=call, params={"name": "nothere", "arguments": {}}),
        rpc(id=2, error={"code": -32601, "message": "no"}),
        rpc(id=3, method=call, params={"name": "render", "arguments": {"format": 5}}),
        rpc(id=3, error={"code": -32602, "message": "bad"}),
        rpc(id=4, method=call, params={"name": "ghost", "arguments": {}}),
        rpc(id=4, error={"code": -32602, "message": "Unknown tool"}),
        {"direction": "send", "message": rpc(id=5, method=call, params={"name": "render"})},
        rpc(method="notifications/cancelled", params={"requestId": 5}),
        rpc(id=6, method=call, params={"name": "render", "arguments": {}}),
        {"not": "json-rpc"},
    )


def test_mcp_jsonrpc_outcomes_and_typed_codes(tmp_path: Path) -> None:
    path = mcp_log(tmp_path)
    assert resolve_format(path, ReadOptions()) == "mcp"
    evidence, diagnostics = read(path, ref_prefix="mcp.notes.")
    ops = operations(evidence)
    assert [(op.ref, op.outcome, op.failure_stage) for op in ops] == [
        ("mcp.notes.render", "succeeded", None),
        ("mcp.notes.render", "failed", None),
        ("mcp.notes.nothere", "failed", "resolve"),
        ("mcp.notes.render", "failed", "validate"),
        ("mcp.notes.ghost", "failed", "validate"),
        ("mcp.notes.render", "aborted", None),
        ("mcp.notes.render", "aborted", None),
    ]
    assert evidence.traces[0].task_key == "notes" and evidence.traces[0].model is None
    assert diagnostics.unknown_records == 1 and diagnostics.unanswered_calls == 1
    render = {"type": "object", "properties": {"format": {"enum": ["pdf", "html"]}}}
    evidence, _ = read(path, ref_prefix="mcp.notes.", surface=surface(("mcp.notes.render", render)))
    stages = [op.failure_stage for op in operations(evidence)]
    # isError with arguments the schema refuses -> validate; -32602 for an undeclared tool
    # -> resolve.
    assert stages == [None, "validate", "resolve", "validate", "resolve", None, None]


def test_mcp_responses_to_nothing_are_counted_not_lost(tmp_path: Path) -> None:
    # A second response to an answered call and a response to no request of the log were
    # dropped without a count; responses to other requests (tools/list) and a late one to
    # a cancelled call stay quiet.
    call = "tools/call"
    path = jsonl(
        tmp_path / "mcp.jsonl",
        rpc(id=0, method="initialize", params={}),
        rpc(id=0, result={"serverInfo": {"name": "notes"}}),
        rpc(id="list", method="tools/list"),
        rpc(id="list", result={"tools": []}),
        rpc(id=1, method=call, params={"name": "render", "arguments": {}}),
        rpc(id=1, result={"content": []}),
        rpc(id=1, result={"content": []}),
        rpc(id=2, method=call, params={"name": "render", "arguments": {}}),
        rpc(method="notifications/cancelled", params={"requestId": 2}),
        rpc(id=2, result={"content": []}),
        rpc(id=99, result={"content": []}),
        rpc(id=0, method="initialize", params={}),
        rpc(id=0, result={"serverInfo": {"name": "notes"}}),
        rpc(id=1, method=call, params={"name": "render", "arguments": {}}),
        rpc(id=1, error={"code": -32602, "message": "bad"}),
    )
    evidence, diagnostics = read(path, ref_prefix="mcp.notes.")
    assert [op.outcome for op in operations(evidence)] == ["succeeded", "aborted", "failed"]
    assert diagnostics.duplicate_records == 1
    assert diagnostics.unmatched_results == 1
    assert diagnostics.unknown_records == 0
    assert any(":7: a second result for an answered call" in note for note in diagnostics.samples)
    assert any(":11: a result without a call" in note for note in diagnostics.samples)


def test_mcp_a_reconnection_numbers_its_requests_afresh(tmp_path: Path) -> None:
    # Every connection of a client numbers its requests from the start (the SDK's from 0):
    # the second connection's calls were dropped as repeats of the first's, and a response
    # could answer the last connection's call left open.
    call = "tools/call"
    path = jsonl(
        tmp_path / "mcp.jsonl",
        rpc(id=0, method="initialize", params={}),
        rpc(id=1, method=call, params={"name": "render", "arguments": {}}),
        rpc(id=1, result={"content": []}),
        rpc(id=2, method=call, params={"name": "render", "arguments": {"left": True}}),
        rpc(id=0, method="initialize", params={}),
        rpc(id=1, method=call, params={"name": "render", "arguments": {}}),
        rpc(id=1, error={"code": -32602, "message": "bad"}),
        rpc(id=2, method=call, params={"name": "render", "arguments": {}}),
        rpc(id=2, result={"content": [], "isError": True}),
    )
    evidence, diagnostics = read(path, ref_prefix="mcp.notes.")
    outcomes = [op.outcome for op in operations(evidence)]
    assert outcomes == ["succeeded", "aborted", "failed", "failed"]
    assert len(evidence.traces) == 2
    assert diagnostics.duplicate_records == 0 and diagnostics.unmatched_results == 0
    assert diagnostics.unanswered_calls == 1


# ------------------------------------------------------------------------------ BFCL


def test_bfcl_single_and_multi_turn_with_scores(tmp_path: Path) -> None:
    result_dir = tmp_path / "result" / "acme_model-1" / "live"
    score_dir = tmp_path / "score" / "acme_model-1" / "live"
    single = jsonl(
        result_dir / "BFCL_v4_live_simple_result.json",
        {"id": "live_simple_0", "result": [{"f_a": '{"x": 1}'}], "latency": 1},
        {"id": "live_simple_1", "result": [{"f_a": '{"x": "no"}'}, {"g": "{oops"}], "latency": 1},
        {"id": "live_simple_2", "result": "I cannot call a tool", "latency": 1},
    )
    jsonl(
        score_dir / "BFCL_v4_live_simple_score.json",
        {"accuracy": 0.5},
        {"id": "live_simple_1", "valid": False, "error_type": "type_error:simple"},
    )
    step = [
        {"role": "assistant", "content": [{"cd": '{"folder": "a"}'}, {"ls": "{}"}]},
        {"role": "handler_log", "content": "ok"},
        {"role": "tool", "content": '{"error": "cd: no such dir"}'},
        {"role": "tool", "content": '["x"]'},
    ]
    broken = [
        {"role": "assistant", "content": [{"pwd": ""}, {"ls": "{}"}]},
        {"role": "handler_log", "content": "Error decoding", "error": "Expecting value"},
    ]
    multi = jsonl(
        tmp_path / "result" / "acme_model-1" / "multi" / "BFCL_v4_multi_turn_base_result.json",
        {
            "id": "multi_turn_base_0",
            "result": [[[{"cd": '{"folder": "a"}'}, {"ls": "{}"}]], [[{"pwd": ""}, {"ls": "{}"}]]],
            "inference_log": [
                [{"role": "state_info"}],
                {"begin_of_turn_query": [], "step_0": step},
                {"begin_of_turn_query": [], "step_0": broken},
            ],
            "latency": [],
        },
    )
    assert resolve_format(single, ReadOptions()) == "bfcl"
    evidence, diagnostics = read(single)
    assert [len(trace.operations) for trace in evidence.traces] == [1, 2, 0]
    assert [trace.task_key for trace in evidence.traces] == ["live_simple"] * 3
    assert evidence.traces[0].model == "acme/model-1"
    assert [op.outcome for op in operations(evidence)] == ["succeeded", "failed", "failed"]
    assert diagnostics.undecodable_arguments == 1 and diagnostics.unstructured_outputs == 1
    evidence, diagnostics = read(multi, "bfcl")
    assert [(op.ref, op.outcome) for op in operations(evidence)] == [
        ("cd", "failed"),
        ("ls", "succeeded"),
        ("pwd", "failed"),
        ("ls", "aborted"),
    ]
    assert diagnostics.unscored_entries == 0
    assert expand_session_paths([tmp_path], ReadOptions("bfcl")) == [single, multi]


# ------------------------------------------------------------------------- tau-bench


def test_tau_bench_records(tmp_path: Path) -> None:
    call = {"id": "c", "type": "function", "function": {"name": "book", "arguments": '{"n": 1}'}}
    record = {
        "task_id": 7,
        "trial": 0,
        "reward": 0.0,
        "info": {},
        "traj": [
            {"role": "system", "content": "policy"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c", "name": "book", "content": "Error: no seats"},
            {"role": "user", "content": "again"},
            {"role": "assistant", "content": None, "tool_calls": [call]},  # the same id, reused
            {"role": "tool", "tool_call_id": "c", "name": "book", "content": "{}"},
        ],
    }
    path = tmp_path / "gpt-4o-airline.json"
    path.write_text(json.dumps([record, {**record, "task_id": 8, "traj": []}]), encoding="utf-8")
    assert resolve_format(path, ReadOptions()) == "tau-bench"
    evidence, _ = read(path)
    assert [trace.task_key for trace in evidence.traces] == ["airline/7", "airline/8"]
    assert [trace.model for trace in evidence.traces] == ["tau-bench/gpt-4o"] * 2
    assert [op.outcome for op in evidence.traces[0].operations] == ["failed", "succeeded"]
    assert evidence.traces[1].operations == ()


# ------------------------------------------------------------------------- OpenHands


def oh_action(event_id: int, name: str, arguments: str, action: str = "run") -> dict[str, Any]:
    response = {
        "model": "claude-3-5",
        "choices": [
            {
                "message": {
                    "tool_calls": [
                        {"id": f"t{event_id}", "function": {"name": name, "arguments": arguments}}
                    ]
                }
            }
        ],
    }
    return {
        "id": event_id,
        "source": "agent",
        "action": action,
        "args": {},
        "tool_call_metadata": {
            "function_name": name,
            "tool_call_id": f"t{event_id}",
            "model_response": response,
        },
    }


def test_openhands_trajectory_and_instances(tmp_path: Path) -> None:
    events = [
        {"id": 1, "source": "user", "action": "message", "args": {"content": "fix"}},
        oh_action(2, "execute_bash", '{"command": "make"}'),
        {
            "id": 3,
            "source": "agent",
            "observation": "run",
            "cause": 2,
            "extras": {"metadata": {"exit_code": 2}},
        },
        oh_action(4, "execute_bash", '{"command": "sleep 999"}'),
        {
            "id": 5,
            "source": "agent",
            "observation": "run",
            "cause": 4,
            "extras": {"metadata": {"exit_code": -1}},
        },
        {"id": 6, "source": "agent", "observation": "error", "content": "Parameter 'command' ..."},
        oh_action(7, "str_replace_editor", '{"command": "view", "path": "/a"}', "read"),
        {"id": 8, "source": "agent", "observation": "read", "cause": 7},
        oh_action(9, "finish", "{}", "finish"),
        {"id": 10, "source": "agent", "action": "run_ipython", "args": {}},
    ]
    trajectory = tmp_path / "basic.json"
    trajectory.write_text(json.dumps(events), encoding="utf-8")
    assert resolve_format(trajectory, ReadOptions()) == "openhands"
    evidence, diagnostics = read(trajectory)
    assert [(op.ref, op.outcome) for op in operations(evidence)] == [
        ("execute_bash", "failed"),
        ("execute_bash", "timed_out"),
        ("str_replace_editor", "succeeded"),
        ("finish", "succeeded"),
    ]
    assert evidence.traces[0].task_key == "basic"
    assert evidence.traces[0].model == "openhands/claude-3-5"
    assert diagnostics.unmatched_results == 1 and diagnostics.unstructured_outputs == 1
    instance = {
        "instance_id": "repo__1",
        "metadata": {"llm_config": {"model": "openai/llama-4"}},
        "history": events,
    }
    output = jsonl(tmp_path / "output.jsonl", instance)
    assert resolve_format(output, ReadOptions()) == "openhands"
    evidence, _ = read(output)
    assert evidence.traces[0].task_key == "repo__1"
    assert evidence.traces[0].model == "openai/llama-4"


# ------------------------------------------------------------------------- ToolBench


def test_toolbench_search_tree(tmp_path: Path) -> None:
    def action(name: str, args: str, code: int | None, *children: Any) -> dict[str, Any]:
        leaf: dict[str, Any] = {
            "node_type": "Action Input",
            "description": args,
            "children": list(children),
        }
        if code is not None:
            leaf["observation_code"] = code
        return {"node_type": "Action", "description": name, "children": [leaf]}

    tree = action(
        "search",
        '{"q": "a"}',
        0,
        action("login", "{}", 1),
        {
            "node_type": "Thought",
            "description": "retry",
            "children": [action("search", '{"q": "b"}', 12)],
        },
        action("Finish", '{"return_type": "give_up"}', 4),
    )
    document = {
        "answer_generation": {"function": []},
        "tree": {"tree": {"node_type": "Action Input", "children": [tree]}},
    }
    path = tmp_path / "42_ChatGPT_DFS_woFilter_w2.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert resolve_format(path, ReadOptions()) == "toolbench"
    evidence, _ = read(path)
    ops = operations(evidence)
    assert [(op.ref, op.outcome, op.failure_stage) for op in ops] == [
        ("search", "succeeded", None),
        ("login", "failed", "resolve"),
        ("search", "failed", "invoke"),
        ("Finish", "succeeded", None),
    ]
    assert evidence.traces[0].task_key == "42"
    assert evidence.traces[0].model == "toolbench/ChatGPT"


# ------------------------------------------------------------- conversion round trips


@pytest.mark.parametrize(
    ("name", "session_format"),
    [
        ("pi", "pi"),
        ("claude", "claude-code"),
        ("mcp", "mcp"),
        ("openhands", "openhands"),
    ],
)
def test_convert_then_measure_equals_direct(tmp_path: Path, name: str, session_format: str) -> None:
    if name == "pi":
        source = pi_session(tmp_path / "in")
        tools = surface(("pi.read", PATH_SCHEMA))
    elif name == "claude":
        source = jsonl(
            tmp_path / "in" / "s.jsonl",
            cc_call("t", "Bash", {"command": 1}),
            cc_result("t", error=True),
        )
        tools = surface(("Bash", {"type": "object", "properties": {"command": {"type": "string"}}}))
    elif name == "mcp":
        source = mcp_log(tmp_path / "in")
        tools = surface(("render", {"type": "object"}))
    else:
        source = tmp_path / "in" / "t.json"
        source.parent.mkdir(parents=True)
        source.write_text(json.dumps([oh_action(1, "x", '{"a": [1, {"b": 2}]}')]), encoding="utf-8")
        tools = None
    surface_path = None
    if tools is not None:
        surface_path = tmp_path / "surface.json"
        surface_path.write_text(json.dumps(tools), encoding="utf-8")
    direct, native = round_trip(
        [source.parent], tmp_path / "out", session_format, surface_path=surface_path, surface=tools
    )
    assert direct == native


def test_blank_args_keep_the_shape_and_pass_the_guard() -> None:
    deep: Any = {"leaf": 1.5}
    for _ in range(40):
        deep = {"next": deep, "list": [deep]}
    blanked = blank_args({"a": deep, "n": float("inf"), "s": "x" * 10, "b": True, "z": None})
    assert blanked["n"] == 0 and blanked["s"] == "" and blanked["b"] is False
    assert blanked["a"]["next"]["next"] == {}
