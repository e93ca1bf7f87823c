"""Foreign tool lists as surfaces: every reader, detection, BFCL's dialect, file order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.fingerprint import static_freedom
from pytest_entropy.core.validation import accepts
from pytest_entropy.ingest.bfcl_schema import bfcl_to_json_schema, uses_bfcl_dialect
from pytest_entropy.ingest.surfaces import load_surface
from pytest_entropy.ingest.tool_lists import NO_PARAMETERS, detect_surface_format

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


def write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def refs(surface: dict[str, Any]) -> list[str]:
    return [action["ref"] for action in surface["actions"]]


CASES: list[tuple[str, Any, str]] = [
    (
        "mcp",
        {"tools": [{"name": "b", "inputSchema": SCHEMA}, {"name": "a", "inputSchema": {}}]},
        "mcp",
    ),
    ("mcp-bare", [{"name": "b", "inputSchema": SCHEMA}, {"name": "a", "inputSchema": {}}], "mcp"),
    (
        "mcp-jsonrpc",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "tools": [{"name": "b", "inputSchema": SCHEMA}, {"name": "a", "inputSchema": {}}]
            },
        },
        "mcp",
    ),
    (
        "openai-chat",
        [
            {"type": "function", "function": {"name": "b", "parameters": SCHEMA}},
            {"type": "function", "function": {"name": "a"}},
        ],
        "openai",
    ),
    (
        "openai-responses",
        {
            "tools": [
                {"type": "function", "name": "b", "parameters": SCHEMA},
                {"type": "function", "name": "a"},
            ]
        },
        "openai",
    ),
    (
        "anthropic",
        [{"name": "b", "input_schema": SCHEMA}, {"name": "a", "input_schema": {}}],
        "anthropic",
    ),
    (
        "tau-bench",
        {
            "domains": {
                "airline": [{"type": "function", "function": {"name": "b", "parameters": SCHEMA}}],
                "retail": [{"type": "function", "function": {"name": "a", "parameters": {}}}],
            }
        },
        "tau-bench",
    ),
    (
        "toolbench",
        {
            "answer_generation": {
                "function": [{"name": "b", "parameters": SCHEMA}, {"name": "a", "parameters": {}}]
            }
        },
        "toolbench",
    ),
]


@pytest.mark.parametrize(("name", "value", "expected"), CASES, ids=[case[0] for case in CASES])
def test_readers_keep_file_order(tmp_path: Path, name: str, value: Any, expected: str) -> None:
    assert detect_surface_format(value) == expected
    surface = load_surface(write(tmp_path / "tools.json", value))
    assert refs(surface) == ["b", "a"]
    assert surface["actions"][0]["inputSchema"] == SCHEMA
    assert load_surface(write(tmp_path / "t.json", value), surface_format=expected) == surface
    prefixed = load_surface(tmp_path / "t.json", ref_prefix="mcp.x.")
    assert refs(prefixed) == ["mcp.x.b", "mcp.x.a"]


def test_openai_function_without_parameters_takes_none(tmp_path: Path) -> None:
    surface = load_surface(
        write(tmp_path / "t.json", [{"type": "function", "function": {"name": "now"}}])
    )
    assert surface["actions"][0]["inputSchema"] == NO_PARAMETERS


def test_pi_tools_are_pi_refs(tmp_path: Path) -> None:
    tools = [{"name": "read", "label": "read", "description": "", "parameters": SCHEMA}]
    path = write(tmp_path / "pi.tools.json", tools)
    assert refs(load_surface(path)) == ["pi.read"]
    assert refs(load_surface(path, ref_prefix="agent.")) == ["agent.read"]


def test_snapshot_still_reads_and_errors_as_before(tmp_path: Path) -> None:
    snapshot = {"version": 1, "actions": [{"ref": "x", "inputSchema": SCHEMA}]}
    assert load_surface(write(tmp_path / "s.json", snapshot)) == snapshot
    with pytest.raises(EntropyInputError, match=r"surface snapshot must be"):
        load_surface(write(tmp_path / "bad.json", {"version": 2, "actions": []}))
    with pytest.raises(EntropyInputError, match="unknown surface format"):
        load_surface(tmp_path / "s.json", surface_format="nope")
    with pytest.raises(EntropyInputError, match="has no inputSchema"):
        load_surface(write(tmp_path / "m.json", {"tools": [{"name": "a"}]}), surface_format="mcp")


def test_directory_of_snap_files_in_name_order(tmp_path: Path) -> None:
    snaps = tmp_path / "snaps"
    snaps.mkdir()
    for name in ("b_tool", "a_tool", "B_tool"):
        write(snaps / f"{name}.snap", {"name": name, "inputSchema": SCHEMA, "annotations": {}})
    (snaps / "README.md").write_text("not a tool", encoding="utf-8")
    assert refs(load_surface(snaps)) == ["B_tool", "a_tool", "b_tool"]


@pytest.mark.parametrize(
    ("wrap", "surface_format"),
    [
        (lambda tools: {"tools": tools}, "auto"),
        (lambda tools: {"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}}, "auto"),
        (lambda tools: {"serverInfo": {"name": "s"}, "tools": tools}, "mcp"),
    ],
    ids=["tools-list-result", "json-rpc-response", "captured-listing"],
)
def test_a_directory_of_tool_list_documents_gives_their_tools(
    tmp_path: Path, wrap: Any, surface_format: str
) -> None:
    # Each document was taken as one tool ("surface snapshot must be ...", "tool 0 has no
    # name"): only directories of bare arrays or single tools worked.
    tool = {"type": "object", "properties": {}}
    write(tmp_path / "b.json", wrap([{"name": "b2", "inputSchema": tool}]))
    write(
        tmp_path / "a.json",
        wrap([{"name": "a1", "inputSchema": tool}, {"name": "a2", "inputSchema": tool}]),
    )
    assert refs(load_surface(tmp_path, surface_format=surface_format)) == ["a1", "a2", "b2"]


def test_a_directory_of_toolbench_answers_gives_their_functions(tmp_path: Path) -> None:
    function = {"name": "f", "description": "d", "parameters": {"type": "object", "properties": {}}}
    for name in ("x", "y"):
        answer = {"answer_generation": {"function": [{**function, "name": name}]}}
        write(tmp_path / f"{name}.json", answer)
    assert refs(load_surface(tmp_path, surface_format="toolbench")) == ["x", "y"]


def test_bfcl_dialect_mapping() -> None:
    schema = {
        "type": "dict",
        "properties": {
            "f": {"type": "float"},
            "t": {"type": "tuple", "items": {"type": "integer"}},
            "a": {"type": "any"},
            "m": {"type": "HashMap", "properties": {"k": {"type": "String"}}},
            "l": {"type": "long"},
            "u": {"type": ["float", "weird", "null"]},
        },
        "required": ["f"],
    }
    assert uses_bfcl_dialect(schema) and not uses_bfcl_dialect(bfcl_to_json_schema(schema))
    mapped = bfcl_to_json_schema(schema)
    assert mapped["type"] == "object"
    properties = mapped["properties"]
    assert properties["f"] == {"type": "number"}
    assert properties["t"] == {"type": "array", "items": {"type": "integer"}}
    assert properties["a"] == {}
    assert properties["m"] == {"type": "object", "properties": {"k": {"type": "string"}}}
    assert properties["l"] == {"type": "integer"}
    assert properties["u"] == {"type": ["number", "null"]}
    assert accepts(mapped, {"f": 1.5, "t": [1, 2], "a": [None], "m": {"k": "v"}, "l": 3})
    assert not accepts(mapped, {"f": "x"})
    assert static_freedom(mapped) > 0


def test_bfcl_entries_jsonl_and_name_mangling(tmp_path: Path) -> None:
    first = {
        "name": "math.factorial",
        "parameters": {"type": "dict", "properties": {"n": {"type": "integer"}}},
    }
    again = {
        "name": "math.factorial",
        "parameters": {"type": "dict", "properties": {"n": {"type": "float"}}},
    }
    other = {
        "name": "cd",
        "parameters": {"type": "dict", "properties": {"folder": {"type": "string"}}},
    }
    path = tmp_path / "BFCL_v4_simple.json"
    lines = [
        {"id": "simple_0", "question": [[]], "function": [first, other]},
        {"id": "simple_1", "question": [[]], "function": again},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    surface = load_surface(path)
    assert refs(surface) == ["math_factorial", "cd"]
    # One action per name, at its first position, with its last declaration.
    assert surface["actions"][0]["inputSchema"]["properties"]["n"] == {"type": "number"}


def test_unrecognised_list_is_refused(tmp_path: Path) -> None:
    mixed = [{"name": "a", "inputSchema": {}}, {"name": "b", "input_schema": {}}]
    assert detect_surface_format(mixed) == ""
    with pytest.raises(EntropyInputError, match="surface snapshot must be"):
        load_surface(write(tmp_path / "mixed.json", mixed))
