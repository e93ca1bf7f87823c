"""No foreign reader crashes: arbitrary JSON in the shapes each format nests is counted
(sessions) or refused with an input error (surfaces)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.registry import session_formats, session_reader, surface_formats
from pytest_entropy.ingest.surfaces import load_surface
from pytest_entropy.testing import strategies as es

FORMATS = [name for name in session_formats() if name not in ("auto", "fabric")]

# Field names the readers look for, so generated records reach deep into each reader.
FIELDS = st.sampled_from(
    [
        "type",
        "role",
        "message",
        "content",
        "id",
        "name",
        "arguments",
        "input",
        "tool_calls",
        "function",
        "toolCallId",
        "tool_use_id",
        "isError",
        "is_error",
        "result",
        "error",
        "jsonrpc",
        "method",
        "params",
        "history",
        "action",
        "observation",
        "cause",
        "tool_call_metadata",
        "inference_log",
        "traj",
        "task_id",
        "tree",
        "children",
        "node_type",
        "description",
        "observation_code",
        "sessionId",
        "messages",
        "model",
    ]
)
VALUES = st.sampled_from(
    [
        "assistant",
        "user",
        "tool",
        "toolCall",
        "tool_use",
        "tool_result",
        "2.0",
        "tools/call",
        "session",
        "Action",
        "Action Input",
        "run",
        "error",
        "function_call",
        "message",
    ]
)


def records() -> st.SearchStrategy[Any]:
    leaves = st.one_of(es.json_values(4), VALUES)
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(FIELDS, inner, max_size=5)
        ),
        max_leaves=20,
    )


@pytest.mark.parametrize("session_format", FORMATS)
@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(records(), max_size=6), document=st.booleans())
def test_readers_never_crash(
    tmp_path: Path, session_format: str, lines: list[Any], document: bool
) -> None:
    path = tmp_path / "input.json"
    if document:
        path.write_text(json.dumps(lines), encoding="utf-8")
    else:
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    diagnostics = ScanDiagnostics()
    options = ReadOptions(session_format, {"version": 1, "actions": []})
    produced = list(session_reader(session_format)(path, options, diagnostics))
    assert all(isinstance(line, bytes) for line in produced)


SURFACE_FIELDS = st.sampled_from(
    [
        "tools",
        "name",
        "inputSchema",
        "input_schema",
        "parameters",
        "function",
        "type",
        "domains",
        "answer_generation",
        "question",
        "label",
        "version",
        "actions",
        "ref",
        "jsonrpc",
        "result",
        "properties",
        "items",
        "anyOf",
    ]
)
SURFACE_VALUES = st.sampled_from(["function", "dict", "float", "tuple", "any", "object", 1, "2.0"])


def tool_lists() -> st.SearchStrategy[Any]:
    return st.recursive(
        st.one_of(es.json_values(3), SURFACE_VALUES),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(SURFACE_FIELDS, inner, max_size=5)
        ),
        max_leaves=25,
    )


@pytest.mark.parametrize("surface_format", surface_formats())
@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=tool_lists())
def test_surface_readers_refuse_with_input_errors(
    tmp_path: Path, surface_format: str, value: Any
) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    try:
        surface = load_surface(path, surface_format=surface_format)
    except EntropyInputError:
        return
    assert surface["version"] == 1
    assert all(type(action["ref"]) is str for action in surface["actions"])
