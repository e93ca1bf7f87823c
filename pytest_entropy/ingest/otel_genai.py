"""OpenTelemetry GenAI spans in OTLP/JSON (the collector's file exporter, SDK file exporters).

Each line (or the one document) is an ``ExportTraceServiceRequest``:
``{"resourceSpans": [{"resource", "scopeSpans": [{"scope", "spans": [...]}]}]}``. Spans are
read by the GenAI semantic conventions (``gen_ai.operation.name``):

* call: an ``execute_tool`` span: ``gen_ai.tool.name``, ``gen_ai.tool.call.arguments``
  (JSON text; not recorded when content capture is off: counted as undecodable),
  ``gen_ai.tool.call.id``;
* outcome: status ``ERROR`` or an ``error.type`` failed (a timeout type: ``timed_out``);
  the conventions type no stage, so a failure carries none (``--surface`` replays it);
* model: the latest ``chat`` / ``text_completion`` / ``generate_content`` span of the trace
  started before the call: ``<gen_ai.provider.name or gen_ai.system>/<gen_ai.response.model
  or gen_ai.request.model>``;
* trace: one OpenTelemetry trace (``traceId``), its spans in start-time order; task key:
  ``gen_ai.conversation.id`` where a span records one, else the trace id.

A trace's spans can arrive in any line (batches), so spans are kept (compactly) until the
file ends. Spans that are not GenAI spans (HTTP, database, ...) are counted as unknown
records; GenAI operations without calls (``embeddings``, ``invoke_agent``, ...) are not.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_entropy.ingest.base import SessionFormat
from pytest_entropy.ingest.detection import is_json_name, is_jsonl_name, sorted_files
from pytest_entropy.ingest.detectors import detect_otel_genai
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.foreign import decode_arguments, iter_json_values
from pytest_entropy.ingest.runs import RunBuilder
from pytest_entropy.ingest.writer import NativeWriter

if TYPE_CHECKING:
    from pytest_entropy.ingest.base import ReadOptions

__all__ = [
    "FORMAT",
    "detect_otel_genai",
    "iter_spans",
    "otel_files",
    "read_otel_genai",
    "span_attributes",
    "span_outcome",
]

_MODEL_OPERATIONS: Final = frozenset({"chat", "text_completion", "generate_content"})
_ERROR_CODES: Final = frozenset({2, "STATUS_CODE_ERROR", "ERROR"})
_TIMEOUT: Final = re.compile(r"timeout|timed.?out", re.IGNORECASE)


def _any_value(value: Any) -> Any:
    """The plain value of an OTLP/JSON ``AnyValue``."""
    if type(value) is not dict:
        return None
    for key, item in value.items():
        if key == "stringValue" or key == "boolValue" or key == "doubleValue":
            return item
        if key == "intValue":
            try:
                return int(item)
            except (TypeError, ValueError):
                return None
        if key == "arrayValue":
            values = item.get("values") if type(item) is dict else None
            return [_any_value(entry) for entry in values] if type(values) is list else []
        if key == "kvlistValue":
            values = item.get("values") if type(item) is dict else None
            return span_attributes({"attributes": values})
    return None


def span_attributes(span: Any) -> dict[str, Any]:
    """A span's (or resource's) ``attributes`` as a plain dict (later keys win)."""
    attributes = span.get("attributes") if type(span) is dict else None
    out: dict[str, Any] = {}
    for entry in attributes if type(attributes) is list else ():
        if type(entry) is dict and type(entry.get("key")) is str:
            out[entry["key"]] = _any_value(entry.get("value"))
    return out


def iter_spans(record: Any) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """``(span, resource attributes)`` of every span of one ``ExportTraceServiceRequest``."""
    groups = record.get("resourceSpans") if type(record) is dict else None
    for group in groups if type(groups) is list else ():
        if type(group) is not dict:
            continue
        resource = span_attributes(group.get("resource"))
        scopes = group.get("scopeSpans")
        for scope in scopes if type(scopes) is list else ():
            spans = scope.get("spans") if type(scope) is dict else None
            for span in spans if type(spans) is list else ():
                if type(span) is dict:
                    yield span, resource


def span_outcome(span: dict[str, Any], attributes: dict[str, Any]) -> tuple[str, str | None]:
    """The outcome of an ``execute_tool`` span (``docs/formats.md``): never a stage."""
    status = span.get("status")
    code = status.get("code") if type(status) is dict else None
    code = code if type(code) in (int, str) else None
    error = attributes.get("error.type")
    if code in _ERROR_CODES or (type(error) is str and error):
        if type(error) is str and _TIMEOUT.search(error):
            return "timed_out", None
        return "failed", None
    return "succeeded", None


def _start(span: dict[str, Any]) -> int:
    try:
        return int(span.get("startTimeUnixNano") or 0)
    except (TypeError, ValueError):
        return 0


@dataclass(slots=True)
class _Event:
    """What one GenAI span contributes: a model change or a call, at its start time."""

    start: int
    order: int
    model: str | None = None
    name: str | None = None
    arguments: Any = None
    call_id: str | None = None
    outcome: tuple[str, str | None] = ("succeeded", None)


@dataclass(slots=True)
class _Trace:
    first: int
    order: int
    key: str
    events: list[_Event] = field(default_factory=list)


def _model(attributes: dict[str, Any]) -> str | None:
    model = attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model")
    if type(model) is not str or not model:
        return None
    if "/" in model.strip("/"):
        return model
    provider = attributes.get("gen_ai.provider.name") or attributes.get("gen_ai.system")
    return f"{provider if type(provider) is str and provider else 'otel'}/{model}"


def read_otel_genai(
    path: Path, options: ReadOptions, diagnostics: ScanDiagnostics
) -> Iterator[bytes]:
    """Native lines of one OTLP/JSON file of GenAI spans."""
    where = str(path)
    traces: dict[str, _Trace] = {}
    order = 0
    for number, record in iter_json_values(path, diagnostics, name=where):
        if type(record) is not dict or type(record.get("resourceSpans")) is not list:
            diagnostics.unknown_records += 1
            diagnostics.note(f"{where}:{number}", "not an OTLP/JSON trace export")
            continue
        for span, _resource in iter_spans(record):
            order += 1
            attributes = span_attributes(span)
            operation = attributes.get("gen_ai.operation.name")
            if type(operation) is not str:
                diagnostics.unknown_records += 1
                continue
            trace_id = span.get("traceId")
            key = trace_id if type(trace_id) is str and trace_id else "(none)"
            trace = traces.get(key)
            if trace is None:
                trace = traces[key] = _Trace(_start(span), order, key)
            trace.first = min(trace.first, _start(span))
            conversation = attributes.get("gen_ai.conversation.id")
            if type(conversation) is str and conversation:
                trace.key = conversation
            event = _Event(_start(span), order)
            if operation in _MODEL_OPERATIONS:
                event.model = _model(attributes)
                if event.model is not None:
                    trace.events.append(event)
            elif operation == "execute_tool":
                name = attributes.get("gen_ai.tool.name")
                if type(name) is not str or not name:
                    # The conventions name the span "execute_tool <tool name>".
                    span_name = span.get("name")
                    name = None
                    if type(span_name) is str and span_name.startswith("execute_tool "):
                        name = span_name.removeprefix("execute_tool ").strip() or None
                if not name:
                    diagnostics.unknown_records += 1
                    continue
                event.name = name
                event.arguments = attributes.get("gen_ai.tool.call.arguments")
                call_id = attributes.get("gen_ai.tool.call.id")
                event.call_id = call_id if type(call_id) is str and call_id else None
                event.outcome = span_outcome(span, attributes)
                trace.events.append(event)
    writer = NativeWriter(options, diagnostics)
    for trace in sorted(traces.values(), key=lambda item: (item.first, item.order)):
        runs = RunBuilder(writer, trace.key)
        model: str | None = None
        for event in sorted(trace.events, key=lambda item: (item.start, item.order)):
            if event.name is None:
                model = event.model
                continue
            args, decoded = decode_arguments(event.arguments)
            yield from runs.call(
                event.name,
                args,
                call_id=event.call_id,
                model=model,
                outcome=event.outcome[0],
                stage=event.outcome[1],
                decoded=decoded,
                answered=True,
            )
        yield from runs.finish()


def otel_files(root: Path) -> list[Path]:
    """A directory's ``*.json`` and ``*.jsonl`` files (and ``.gz``), by name."""
    return sorted_files(
        root, lambda name: is_json_name(name) or is_jsonl_name(name), recursive=False
    )


FORMAT: Final = SessionFormat(
    "otel-genai", read_otel_genai, detector=detect_otel_genai, directory_files=otel_files
)
