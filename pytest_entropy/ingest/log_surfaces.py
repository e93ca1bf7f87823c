"""Surfaces a session log carries: the tools an Inspect AI log's ``model`` events offered and
the ``gen_ai.tool.definitions`` of OpenTelemetry GenAI spans (``--surface LOG``).

Both list the same tools again at every model call, so each reader keeps one action per
tool name, at its first position, with its last declaration (as the BFCL reader does); the
declarations are OpenAI-style function tools, read by the OpenAI surface reader.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.ingest.base import SurfaceFormat
from pytest_entropy.ingest.jsonparse import JSONParseError, parse_json_text
from pytest_entropy.ingest.otel_genai import iter_spans, span_attributes
from pytest_entropy.ingest.tool_lists import is_inspect_log, is_otel_export, read_openai

__all__ = [
    "INSPECT_SURFACE",
    "OTEL_SURFACE",
    "is_inspect_log",
    "is_otel_export",
    "read_inspect_tools",
    "read_otel_tools",
]


def _one_per_name(tools: Iterator[Any]) -> list[Any]:
    positions: dict[str, int] = {}
    kept: list[Any] = []
    for tool in tools:
        name = tool.get("name") if type(tool) is dict else None
        if type(tool) is dict and type(tool.get("function")) is dict:
            name = tool["function"].get("name")
        if type(name) is not str:
            kept.append(tool)  # the OpenAI reader names the problem
        elif name in positions:
            kept[positions[name]] = tool
        else:
            positions[name] = len(kept)
            kept.append(tool)
    return kept


def _inspect_tools(value: Any) -> Iterator[Any]:
    samples = value.get("samples")
    for sample in samples if type(samples) is list else ():
        events = sample.get("events") if type(sample) is dict else None
        for event in events if type(events) is list else ():
            if type(event) is dict and event.get("event") == "model":
                tools = event.get("tools")
                yield from tools if type(tools) is list else ()


def read_inspect_tools(value: Any, source: str) -> dict[str, Any]:
    """The tools an Inspect ``.json`` log's ``model`` events offered."""
    if not is_inspect_log(value):
        raise EntropyInputError("not an Inspect eval log (no eval and samples)", source=source)
    return read_openai(_one_per_name(_inspect_tools(value)), source)


def _otel_tools(value: Any) -> Iterator[Any]:
    for record in value if type(value) is list else [value]:
        for span, _resource in iter_spans(record):
            definitions = span_attributes(span).get("gen_ai.tool.definitions")
            if type(definitions) is str:
                try:
                    definitions = parse_json_text(definitions)
                except JSONParseError:
                    continue
            yield from definitions if type(definitions) is list else ()


def read_otel_tools(value: Any, source: str) -> dict[str, Any]:
    """The ``gen_ai.tool.definitions`` of an OTLP/JSON file's spans."""
    if not is_otel_export(value):
        raise EntropyInputError("not an OTLP/JSON trace export (no resourceSpans)", source=source)
    return read_openai(_one_per_name(_otel_tools(value)), source)


INSPECT_SURFACE: Final = SurfaceFormat("inspect", read_inspect_tools)
OTEL_SURFACE: Final = SurfaceFormat("otel-genai", read_otel_tools)
