"""Surface snapshot and repair-table loading: shapes, order and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.inputs import SURFACE_SHAPE_ERROR, surface_from_value
from pytest_entropy.ingest.surfaces import load_repairs, load_surface


def write(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_snapshot_keeps_file_order_and_drops_non_actions(tmp_path: Path) -> None:
    surface = load_surface(
        write(
            tmp_path / "s.json",
            {
                "version": 1,
                "actions": [
                    {"ref": "z", "inputSchema": {}},
                    None,
                    {"ref": 5},
                    {"ref": "a", "inputSchema": {"type": "object"}, "note": "kept"},
                ],
            },
        )
    )
    assert [a["ref"] for a in surface["actions"]] == ["z", "a"]
    assert surface["actions"][1]["note"] == "kept"


@pytest.mark.parametrize(
    "value", [[], {"version": 2, "actions": []}, {"version": True, "actions": []}, {"version": 1}]
)
def test_wrong_shape(value: object) -> None:
    with pytest.raises(EntropyInputError, match=r"surface snapshot must be"):
        surface_from_value(value, source="s.json")
    assert SURFACE_SHAPE_ERROR == "surface snapshot must be { version: 1, actions: [...] }"


def test_action_without_schema_is_refused() -> None:
    with pytest.raises(EntropyInputError, match="has no inputSchema"):
        surface_from_value({"version": 1, "actions": [{"ref": "a"}]})


def test_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{ nope", encoding="utf-8")
    with pytest.raises(EntropyInputError) as raised:
        load_surface(bad)
    assert str(raised.value).startswith(f"{bad}: surface file is not valid JSON")
    with pytest.raises(EntropyInputError, match="not found"):
        load_surface(tmp_path / "missing.json")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EntropyInputError, match=r"holds no \.json/\.jsonl/\.snap files"):
        load_surface(empty)
    with pytest.raises(EntropyInputError, match="is a directory"):
        load_surface(tmp_path, surface_format="snapshot")


def test_repairs_stored_table_and_bare_array(tmp_path: Path) -> None:
    rows = [{"kind": "actionAlias", "provider": "memory", "from": "expandEntry", "to": "expand"}]
    table = load_repairs(write(tmp_path / "t.json", {"version": 1, "repairs": rows}))
    bare = load_repairs(write(tmp_path / "b.json", rows))
    assert table == bare
    assert table[0].to_json() == {
        "kind": "actionAlias",
        "ref": "memory.expand",
        "from": "expandEntry",
        "to": "expand",
    }


@pytest.mark.parametrize(
    "row",
    [
        {"kind": "rename", "ref": "a", "from": "x", "to": "y"},
        {"kind": "keyAlias", "from": "x", "to": "y"},
        {"kind": "actionAlias", "from": "x", "to": "y"},
        {"kind": "keyAlias", "ref": "a", "from": 1, "to": "y"},
        "row",
    ],
)
def test_invalid_repair_rows_are_input_errors(tmp_path: Path, row: object) -> None:
    with pytest.raises(EntropyInputError, match="repair row 0"):
        load_repairs(write(tmp_path / "r.json", [row]))
