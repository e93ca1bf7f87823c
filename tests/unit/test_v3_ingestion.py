"""Metric v3's three ingestion differences (notes §1.1-§1.2, CV-10; corpus.ts and
audit/trace.ts @ monotykamary a76ea93), each against the v2 reading of the same bytes."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.core.meter import measure
from pytest_entropy.core.v3.normal_form import apply_normal_form_plan, derive_normal_form_plan
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.guard import guard_trace
from pytest_entropy.ingest.model_lines import is_model_line_v3
from pytest_entropy.ingest.native import ScanRecords, SessionScanner, scan_lines
from pytest_entropy.sources.scan import read_file_evidence
from tests.v3_support import CV30_REF, CV30_SCHEMA, CV30_SPILLED

COUNTS = {"droppedValues": 0, "truncatedValues": 0, "redactedValues": 0, "droppedOperations": 0}
E1: dict[str, Any] = {
    "kind": "pi-fabric.execution",
    "version": 1,
    "outcome": "succeeded",
    "phases": ["build"],
    "operations": [
        {
            "type": "call",
            "sequence": 0,
            "ref": "pi.read",
            "args": {"path": "src/a.ts", "limit": 10},
            "outcome": "succeeded",
        },
        {
            "type": "call",
            "sequence": 1,
            "ref": "pi.bash",
            "args": {"command": "ls"},
            "outcome": "failed",
            "failureStage": "invoke",
            "error": "boom",
        },
    ],
    "counts": COUNTS,
}
E2: dict[str, Any] = {
    **E1,
    "operations": [
        {
            "type": "call",
            "sequence": i,
            "ref": "mcp.report.render",
            "args": {},
            "outcome": "succeeded",
        }
        for i in range(8)
    ],
}


def line(entry: str, trace: Any, audits: list[Any]) -> str:
    return json.dumps(
        {
            "id": entry,
            "type": "message",
            "message": {
                "role": "toolResult",
                "toolCallId": "call-" + entry,
                "toolName": "fabric_exec",
                "content": [{"type": "text", "text": "ok"}],
                "details": {"success": True, "trace": trace, "audits": audits, "phases": ["build"]},
            },
        },
        separators=(",", ":"),
    )


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def witness() -> dict[str, Any]:
    plan = derive_normal_form_plan(CV30_REF, CV30_SCHEMA)
    result = apply_normal_form_plan(CV30_REF, CV30_SCHEMA, CV30_SPILLED, plan)
    assert result.witness is not None
    return dict(result.witness)


def normalized_trace() -> dict[str, Any]:
    op = {
        "type": "call",
        "sequence": 0,
        "ref": CV30_REF,
        "args": {"outputFormat": "rare-format", "limit": 2},
        "outcome": "succeeded",
        "normalization": witness(),
        "resultTruncated": True,
    }
    return {**E1, "operations": [op]}


def both(lines: list[str]) -> tuple[ScanRecords, ScanRecords]:
    return scan_lines(lines), scan_lines(lines, metric_version=3)


def streamed(lines: list[str], metric_version: int) -> ScanRecords:
    records = ScanRecords()
    scanner = SessionScanner(
        records.traces.append,
        on_audit=records.audit_calls.append,
        on_value=records.value_observations.append,
        metric_version=metric_version,
    )
    scanner.scan_stream(io.BytesIO("\n".join(lines).encode() + b"\n"))
    return records


# ------------------------------------------------------------------ 1: the guard


def test_guard_accepts_a_normalization_witness_only_in_v3() -> None:
    trace = normalized_trace()
    operations, reason = guard_trace(trace)
    assert operations == () and reason == "unknown operation key"
    operations, reason = guard_trace(trace, metric_version=3)
    assert reason == "" and [op.ref for op in operations] == [CV30_REF]
    broken = {**trace, "operations": [{**trace["operations"][0], "normalization": {"version": 1}}]}
    assert guard_trace(broken, metric_version=3)[1] == "normalization is not a normal-form witness"
    # resultTruncated alone is accepted by both generations (v2-final already lists it).
    plain = {**E1, "operations": [{**E1["operations"][0], "resultTruncated": False}]}
    assert guard_trace(plain)[1] == "" and guard_trace(plain, metric_version=3)[1] == ""


def test_scanner_ingests_a_normalized_trace_only_in_v3() -> None:
    lines = [line("e1", normalized_trace(), [])]
    v2, v3 = both(lines)
    assert v2.traces == [] and len(v3.traces) == 1
    assert len(streamed(lines, 3).traces) == 1 and streamed(lines, 2).traces == []


# --------------------------------------------------- 2: audits of a failing trace


def test_cv10_v3_guard_line_gives_nothing() -> None:
    # Without the kind string the line is not even a trace line, in either generation.
    lines = [
        compact(
            {
                "type": "message",
                "message": {
                    "role": "toolResult",
                    "toolName": "fabric_exec",
                    "details": {
                        "audits": [{"ref": "mcp.report.render", "args": {"format": "invented"}}],
                        "trace": {"version": 1},
                    },
                },
            }
        )
    ]
    for records in both(lines):
        assert (len(records.traces), len(records.audit_calls), len(records.value_observations)) == (
            0,
            0,
            0,
        )


def test_audits_of_a_trace_that_fails_the_guard_are_dropped_in_v3() -> None:
    lines = [
        compact(
            {
                "type": "message",
                "message": {
                    "role": "toolResult",
                    "toolName": "fabric_exec",
                    "details": {
                        "audits": [{"ref": "mcp.report.render", "args": {"format": "invented"}}],
                        "trace": {**E1, "version": 2},
                    },
                },
            }
        )
    ]
    v2, v3 = both(lines)
    assert (len(v2.traces), len(v2.audit_calls), len(v2.value_observations)) == (0, 1, 1)
    assert (len(v3.traces), len(v3.audit_calls), len(v3.value_observations)) == (0, 0, 0)
    assert streamed(lines, 3).audit_calls == [] and len(streamed(lines, 2).audit_calls) == 1


def test_v3_audits_of_a_normalized_trace_are_kept() -> None:
    audits = [{"ref": CV30_REF, "args": dict(CV30_SPILLED)}]
    v2, v3 = both([line("e1", normalized_trace(), audits)])
    # v2 rejects the trace but still harvests its audits; v3 keeps both.
    assert (len(v2.traces), len(v2.audit_calls)) == (0, 1)
    assert (len(v3.traces), len(v3.audit_calls)) == (1, 1)


# ----------------------------------------------------------- 3: the model cursor


def test_the_model_cursor_moves_on_trace_lines_in_v3() -> None:
    carrying = compact(
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "provider": "p",
                "model": "m",
                "details": {"trace": E1, "audits": []},
            },
        }
    )
    lines = [compact({"type": "model_change", "provider": "zro", "modelId": "kimi-k3"}), carrying]
    v2, v3 = both(lines)
    assert [t.model for t in v2.traces] == ["zro/kimi-k3"]
    assert [t.model for t in v3.traces] == ["p/m"]
    assert [t.model for t in streamed(lines, 3).traces] == ["p/m"]
    # The cursor it set stays for the lines after it.
    follow = [*lines, line("e2", E1, [])]
    assert [t.model for t in scan_lines(follow, metric_version=3).traces] == ["p/m", "p/m"]
    assert [t.model for t in scan_lines(follow).traces] == ["zro/kimi-k3", "zro/kimi-k3"]


@pytest.mark.parametrize(
    "model_line",
    [
        '{"type": "model_change", "provider": "zro", "modelId": "kimi-k3"}',
        '{"type" :\t"model_change","provider":"zro","modelId":"kimi-k3"}',
        '{"type":\u00a0"model_change","provider":"zro","modelId":"kimi-k3"}',
        '{"message": {"role": "assistant", "provider": "zro", "model": "kimi-k3"}}',
    ],
)
def test_the_v3_model_prefilter_allows_whitespace(model_line: str) -> None:
    lines = [model_line, line("e1", E1, [])]
    v2, v3 = both(lines)
    assert [t.model for t in v2.traces] == [None]
    # A no-break space passes the prefilter but is not JSON whitespace: the line does not parse.
    expected = None if "\u00a0" in model_line else "zro/kimi-k3"
    assert [t.model for t in v3.traces] == [expected]
    assert [t.model for t in streamed(lines, 3).traces] == [expected]


def test_model_prefilter_bytes() -> None:
    assert is_model_line_v3(b'{"type"\xe2\x80\xa8:"model_change"}')
    assert is_model_line_v3(b'"role"  :  "assistant"')
    assert not is_model_line_v3(b'"role":"user"')
    assert not is_model_line_v3(b'\\"role\\":\\"assistant\\"')


# ------------------------------------------------------------ the CV-10 corpus


def cv10_lines() -> list[str]:
    formats = ["pdf"] * 7 + ["html"]
    return [
        "{ not json",
        compact({"id": "entry-0", "type": "message", "message": {"role": "user", "content": "hi"}}),
        compact(
            {"id": "entry-model-1", "type": "model_change", "provider": "zro", "modelId": "kimi-k3"}
        ),
        line(
            "entry-1",
            E1,
            [
                {"ref": "pi.read", "args": {"path": "src/a.ts", "limit": 10}},
                {"ref": "pi.bash", "args": {"command": "ls"}},
            ],
        ),
        compact(
            {
                "id": "entry-model-2",
                "type": "model_change",
                "provider": "coralbricks",
                "modelId": "glm-5.3-fp4",
            }
        ),
        line("entry-2", E2, [{"ref": "mcp.report.render", "args": {"format": f}} for f in formats]),
        "",
    ]


@pytest.mark.parametrize("metric_version", [2, 3])
def test_cv10_corpus_reads_alike_in_both_generations(metric_version: int) -> None:
    records = scan_lines(cv10_lines(), metric_version=metric_version)
    assert len(records.traces) == 2
    report = measure(records.traces, metric_version=metric_version).to_json()
    assert report["totals"]["operations"] == 10
    assert report["totals"]["succeeded"] == 9
    assert report["totals"]["failed"] == 1
    assert [
        (m["model"], m["operations"], m["actionOperations"], m["succeeded"])
        for m in report["byModel"]
    ] == [("coralbricks/glm-5.3-fp4", 8, 8, 8), ("zro/kimi-k3", 2, 2, 1)]
    assert all(op.args == {} for op in records.traces[1].operations)
    assert any(
        o.ref == "mcp.report.render" and o.key == "format" and o.value == "html"
        for o in records.value_observations
    )
    assert len(records.value_observations) == 11
    renders = [c for c in records.audit_calls if c.ref == "mcp.report.render"]
    assert len(renders) == 8 and sum(c.args == {"format": "html"} for c in renders) == 1


def test_read_options_carry_the_generation_to_a_file_scan(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text(
        "\n".join([line("e1", normalized_trace(), [{"ref": "x.y", "args": {"a": 1}}])]) + "\n"
    )
    v2 = read_file_evidence(path, diagnostics=ScanDiagnostics())
    v3 = read_file_evidence(
        path, diagnostics=ScanDiagnostics(), options=ReadOptions(metric_version=3)
    )
    assert v2 is not None and v3 is not None
    assert (len(v2.traces), len(v2.audit_calls)) == (0, 1)
    assert (len(v3.traces), len(v3.audit_calls)) == (1, 1)


def test_an_unknown_generation_is_refused() -> None:
    with pytest.raises(ValueError, match="metric version must be 2 or 3"):
        SessionScanner(metric_version=4)


# ------------------------------------- tests/entropy-corpus.test.ts, in both generations


@pytest.mark.parametrize("metric_version", [2, 3])
def test_upstream_corpus_cases(metric_version: int) -> None:
    lines = [
        "{ not json",
        compact({"id": "e0", "type": "message", "message": {"role": "user", "content": "hi"}}),
        line("e1", E1, []),
        "",
    ]
    records = scan_lines(lines, metric_version=metric_version)
    assert len(records.traces) == 1 and records.traces[0].task_key == "build"
    totals = measure(records.traces, metric_version=metric_version).totals
    assert (totals.operations, totals.succeeded, totals.failed) == (2, 1, 1)
    no_phases = scan_lines([line("e1", {**E1, "phases": []}, [])], metric_version=metric_version)
    assert no_phases.traces[0].task_key == "(none)"
    audits = [
        {"ref": "pi.read", "args": {"path": "src/a.ts", "limit": 10}},
        {"ref": "mcp.render", "args": {"format": "pdf"}},
        "not a record",
        {"ref": 5, "args": {}},
        {"ref": "mcp.broken", "args": "not a record"},
    ]
    calls = scan_lines([line("e1", E1, audits)], metric_version=metric_version).audit_calls
    assert [c.to_json() for c in calls] == audits[:2]
    rejected = [
        {
            "ref": "memory.recall",
            "args": {"role": "toolResult"},
            "success": False,
            "error": "Invalid arguments for memory.recall: role must be equal to one of the"
            " allowed values",
        }
    ]
    attempt = scan_lines([line("e1", E1, rejected)], metric_version=metric_version)
    assert [o.to_json() for o in attempt.value_observations] == [
        {"ref": "memory.recall", "key": "role", "value": "toolResult"}
    ]
    assert [c.to_json() for c in attempt.audit_calls] == [
        {"ref": "memory.recall", "args": {"role": "toolResult"}}
    ]


def test_upstream_audit_values_feed_an_annotated_declare_enum() -> None:
    from pytest_entropy.core.proposals import propose_entropy_reductions

    formats = ["pdf"] * 7 + ["html"]
    audits = [{"ref": "mcp.report.render", "args": {"format": f}} for f in formats]
    records = scan_lines([line("e1", E2, audits)], metric_version=3)
    assert len(records.value_observations) == 8
    assert records.value_observations[0].to_json() == {
        "ref": "mcp.report.render",
        "key": "format",
        "value": "pdf",
    }
    live = {
        "version": 1,
        "actions": [
            {
                "ref": "mcp.report.render",
                "inputSchema": {
                    "type": "object",
                    "properties": {"format": {"type": "string", "x-fabric-enum-candidate": True}},
                    "additionalProperties": False,
                },
            }
        ],
    }
    report = measure(records.traces, live, metric_version=3)
    plain = propose_entropy_reductions(report, records.traces, live, metric_version=3)
    assert plain and all(p["kind"] == "normal-form" for p in plain)
    proposals = propose_entropy_reductions(
        report,
        records.traces,
        live,
        value_observations=records.value_observations,
        metric_version=3,
    )
    declares = [p for p in proposals if p["kind"] == "declare-enum"]
    assert declares == [
        {
            "kind": "declare-enum",
            "ref": "mcp.report.render",
            "key": "format",
            "values": ["pdf", "html"],
            "calls": 8,
            "distinct": 2,
            "topShare": 0.875,
        }
    ]
