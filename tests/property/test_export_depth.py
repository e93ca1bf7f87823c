"""``export`` keeps the reference's indented bytes to depth 32, compact below (item 9)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_entropy.cli.app import main
from pytest_entropy.core.canonical import (
    EXPORT_INDENT_DEPTH,
    file_text,
    js_stringify,
    json_string,
)
from pytest_entropy.core.jscompat import js_own_keys
from pytest_entropy.testing import strategies as es


def depth_of(value: Any) -> int:
    """Containers on the deepest path (a scalar or an empty container counts 0 or 1)."""
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    return 0


def limited(value: Any, limit: int, depth: int = 0) -> str:
    """The specification, recursively: indented as JSON.stringify(v, null, 2) while a
    non-empty container sits inside fewer than ``limit`` others, compact from there."""
    if isinstance(value, dict | list) and value and depth >= limit:
        return js_stringify(value)
    pad = "\n" + "  " * (depth + 1)
    if isinstance(value, dict) and value:
        members = [
            pad + json_string(key) + ": " + limited(value[key], limit, depth + 1)
            for key in js_own_keys(value)
        ]
        return "{" + ",".join(members) + "\n" + "  " * depth + "}"
    if isinstance(value, list) and value:
        items = [pad + limited(item, limit, depth + 1) for item in value]
        return "[" + ",".join(items) + "\n" + "  " * depth + "]"
    return js_stringify(value)


@given(value=es.json_values(30), limit=st.integers(0, 6))
def test_limited_text_is_the_specification(value: Any, limit: int) -> None:
    text = file_text(value, indent_depth=limit)
    assert text == limited(value, limit) + "\n"
    assert json.loads(text) == json.loads(file_text(value))
    if depth_of(value) <= limit:
        assert text == file_text(value)  # shallow enough: the reference's bytes


def chain(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


@pytest.mark.parametrize("depth", [1, 14, 15, 16])
def test_export_keeps_the_reference_bytes_to_depth_32(depth: int) -> None:
    # chain(d) nests 2 * d + 1 containers; the snapshot adds three above it.
    snapshot = {"version": 1, "actions": [{"ref": "a", "inputSchema": chain(depth)}]}
    expected = file_text(snapshot)
    limited_text = file_text(snapshot, indent_depth=EXPORT_INDENT_DEPTH)
    assert (limited_text == expected) is (3 + 2 * depth + 1 <= EXPORT_INDENT_DEPTH)


def test_deep_schema_exports_in_linear_bytes(tmp_path: Path) -> None:
    schema = chain(2000)
    surface = tmp_path / "deep.json"
    snapshot = {"version": 1, "actions": [{"ref": "deep.tool", "inputSchema": schema}]}
    surface.write_text(js_stringify(snapshot), encoding="utf-8")  # json.dumps recurses
    out = tmp_path / "out.json"
    assert main(["export", "--surface", str(surface), "--out", str(out)]) == 0
    size = out.stat().st_size
    # Indented at every level this would be about 16 MB (two spaces times the depth, per
    # line); compact below depth 32 it stays near the input's size.
    assert size < 2 * surface.stat().st_size
    text = out.read_text(encoding="utf-8")
    assert "".join(text.split()) == js_stringify(snapshot)  # no string here holds a space
    lines = text.splitlines()
    assert max(len(line) - len(line.lstrip(" ")) for line in lines) == 2 * EXPORT_INDENT_DEPTH
