"""The OpenTelemetry GenAI reader and the surfaces logs carry (issue 33): the recorded trace
(bench/record_otel_genai.py) measured to hand-checked counts, one test per row of the
outcome table in docs/formats.md, spans in any order and batch, Inspect's and OTel's tool
definitions as surfaces."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.registry import resolve_format
from pytest_entropy.ingest.surfaces import load_surface
from tests.formats_support import operations, read, round_trip

DATA = Path(__file__).resolve().parents[1] / "data"
TRACE = DATA / "otel-genai" / "agent-trace.jsonl"
BROWSER = DATA / "inspect" / "2025-05-12T20-27-36-04-00_browser.json.gz"


def test_recorded_trace() -> None:
    assert resolve_format(TRACE, ReadOptions()) == "otel-genai"
    evidence, diagnostics = read(TRACE)
    ops = operations(evidence)
    # In start-time order, though the file lists the chat spans first (by scope).
    assert [(op.ref, op.outcome) for op in ops] == [
        ("get_weather", "succeeded"),
        ("lookup_user", "failed"),
        ("send_email", "failed"),
        ("get_weather", "failed"),
    ]
    assert {op.failure_stage for op in ops} == {None}  # the conventions type no stage
    assert [trace.model for trace in evidence.traces] == ["openai/gpt-4o-mini-2024-07-18"]
    assert len(evidence.traces) == 1
    assert diagnostics.undecodable_arguments == 1  # "{city: Paris"
    assert diagnostics.unknown_records == 0
    # With the tools the trace itself records, the replay types every failure.
    surface = load_surface(TRACE)
    assert [action["ref"] for action in surface["actions"]] == ["get_weather", "lookup_user"]
    evidence, _ = read(TRACE, surface=surface)
    assert [(op.ref, op.failure_stage) for op in operations(evidence)] == [
        ("get_weather", None),
        ("lookup_user", "invoke"),
        ("send_email", "resolve"),
        ("get_weather", "validate"),
    ]


def attribute(key: str, value: Any) -> dict[str, Any]:
    if type(value) is bool:
        return {"key": key, "value": {"boolValue": value}}
    if type(value) is int:
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def span(trace: str, start: int, **attributes: Any) -> dict[str, Any]:
    status = attributes.pop("status", None)
    out: dict[str, Any] = {
        "traceId": trace,
        "spanId": f"{start:016x}",
        "name": attributes.pop("name", "span"),
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1),
        "attributes": [attribute(key.replace("__", "."), value)
                       for key, value in attributes.items()],
    }  # fmt: skip
    if status is not None:
        out["status"] = {"code": status}
    return out


def export(*spans: dict[str, Any]) -> dict[str, Any]:
    scope = {"scope": {"name": "t"}, "spans": list(spans)}
    resource = {"attributes": [attribute("service.name", "s")]}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [scope]}]}


def tool_span(trace: str, start: int, name: str = "search", **extra: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {"gen_ai__operation__name": "execute_tool", "gen_ai__tool__name": name,
                              "gen_ai__tool__call__arguments": '{"q": "x"}', **extra}  # fmt: skip
    return span(trace, start, **fields)


def write(path: Path, *records: Any) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


ROWS = [
    ("status unset", {}, ("succeeded", None)),
    ("status ok", {"status": "STATUS_CODE_OK"}, ("succeeded", None)),
    ("status error", {"status": "STATUS_CODE_ERROR"}, ("failed", None)),
    ("numeric error code", {"status": 2}, ("failed", None)),
    ("error.type alone", {"error__type": "ValueError"}, ("failed", None)),
    ("timeout type", {"status": 2, "error__type": "TimeoutError"}, ("timed_out", None)),
]


@pytest.mark.parametrize(
    ("extra", "expected"),
    [(extra, expected) for _, extra, expected in ROWS],
    ids=[name for name, _, _ in ROWS],
)
def test_otel_outcome_table(tmp_path: Path, extra: dict[str, Any], expected: Any) -> None:
    path = write(tmp_path / "spans.jsonl", export(tool_span("t1", 1, **extra)))
    evidence, _ = read(path)
    (op,) = operations(evidence)
    assert (op.outcome, op.failure_stage) == expected


def test_spans_in_any_batch_and_order(tmp_path: Path) -> None:
    chat = {"gen_ai__operation__name": "chat", "gen_ai__request__model": "claude-x",
            "gen_ai__provider__name": "anthropic"}  # fmt: skip
    path = write(
        tmp_path / "otlp.jsonl",
        export(tool_span("t2", 50, "late"), span("t1", 30, name="GET /", http__method="GET")),
        {"unexpected": True},
        export(
            tool_span("t1", 20, "second", gen_ai__tool__call__id="c2"),
            span("t1", 10, **chat),
            tool_span("t1", 15, "first"),
            span("t2", 40, gen_ai__operation__name="invoke_agent",
                 gen_ai__conversation__id="conv-9"),
            span("t2", 45, name="execute_tool nameless", gen_ai__operation__name="execute_tool",
                 gen_ai__tool__call__arguments="{}"),
            span("t2", 46, name="execute_tool", gen_ai__operation__name="execute_tool"),
        ),
    )  # fmt: skip
    with path.open("a", encoding="utf-8") as stream:
        stream.write("{broken\n")
    evidence, diagnostics = read(path)
    ops = operations(evidence)
    assert [op.ref for op in ops] == ["first", "second", "nameless", "late"]
    assert [(trace.task_key, trace.model) for trace in evidence.traces] == [
        ("t1", "anthropic/claude-x"),
        ("conv-9", "anthropic/claude-x"),  # no chat span of its own: the cursor carries on
    ]
    assert diagnostics.unknown_records == 3  # the HTTP span, the record, the span without a name
    assert diagnostics.malformed_lines == 1
    # Arguments not recorded (content capture off) are undecodable, never invented.
    quiet = write(tmp_path / "quiet.jsonl", export(span("t", 1, gen_ai__operation__name=
                  "execute_tool", gen_ai__tool__name="search")))  # fmt: skip
    evidence, diagnostics = read(quiet, "otel-genai")
    assert [op.ref for op in operations(evidence)] == ["search"]
    assert diagnostics.undecodable_arguments == 1


def test_a_document_and_gzip_read_alike(tmp_path: Path) -> None:
    document = tmp_path / "trace.json"
    document.write_text(json.dumps(export(tool_span("t", 1)), indent=2), encoding="utf-8")
    packed = tmp_path / "trace.jsonl.gz"
    packed.write_bytes(gzip.compress(TRACE.read_bytes()))
    assert resolve_format(document, ReadOptions()) == "otel-genai"
    assert resolve_format(packed, ReadOptions()) == "otel-genai"
    assert [op.ref for op in operations(read(document)[0])] == ["search"]
    assert Counter(op.ref for op in operations(read(packed)[0])) == {
        "get_weather": 2,
        "lookup_user": 1,
        "send_email": 1,
    }


def test_inspect_offered_tools_are_a_surface(tmp_path: Path) -> None:
    log = tmp_path / "log.json"
    log.write_bytes(gzip.decompress(BROWSER.read_bytes()))
    surface = load_surface(log)
    refs = [action["ref"] for action in surface["actions"]]
    assert refs[:2] == ["web_browser_go", "web_browser_click"]
    assert len(refs) == len(set(refs))  # one action per tool, though every model event lists them
    assert "web_browser_type" in refs
    assert all(action["inputSchema"]["type"] == "object" for action in surface["actions"])
    assert load_surface(log, surface_format="inspect") == surface


def test_convert_then_measure_equals_direct(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "trace.jsonl").write_bytes(TRACE.read_bytes())
    surface = load_surface(TRACE)
    direct, native = round_trip(
        [tmp_path / "in"], tmp_path / "out", "otel-genai", surface_path=TRACE, surface=surface
    )
    assert direct == native
