"""Surface snapshot and repair-table loading: shapes, order and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.inputs import SURFACE_SHAPE_ERROR, surface_from_value
from pytest_entropy.ingest.surfaces import load_repairs, load_repairs_with_notes, load_surface


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
    ("row", "ref"),
    [
        ({"kind": "rename", "ref": "a", "from": "x", "to": "y"}, "a"),
        ({"kind": "keyAlias", "from": "x", "to": "y"}, "undefined"),
        ({"kind": "actionAlias", "from": "x", "to": "y"}, "undefined.y"),
        ({"kind": "keyAlias", "ref": "a", "from": 1, "to": "y"}, "a"),
        ({"kind": "keyAlias", "ref": "a.b"}, "a.b"),
        ({"kind": "keyAlias", "ref": "a.b", "from": "", "to": "y"}, "a.b"),
        ({}, "undefined"),
    ],
)
def test_rows_the_reference_counts_are_counted_and_named(
    tmp_path: Path, row: dict[str, object], ref: str
) -> None:
    # Issue 27: the reference counts these rows as lexicon rows; each gets a note.
    path = write(
        tmp_path / "r.json", [row, {"kind": "keyAlias", "ref": "k", "from": "a", "to": "b"}]
    )
    rows, notes = load_repairs_with_notes(path)
    assert [r.ref for r in rows] == [ref, "k"]
    assert len(notes) == 1
    assert notes[0].startswith(f"{path}: repair row 0: ")
    assert repr(ref) in notes[0]
    assert load_repairs(path) == rows


@pytest.mark.parametrize("value", [["row"], [None], [[]], {"repairs": {}}, 5, "x"])
def test_a_table_that_is_not_a_list_of_objects_is_an_input_error(
    tmp_path: Path, value: object
) -> None:
    with pytest.raises(EntropyInputError, match=r"repair (row 0|table)"):
        load_repairs(write(tmp_path / "r.json", value))


def test_a_repair_file_that_is_not_json_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text("{ nope", encoding="utf-8")
    with pytest.raises(EntropyInputError):
        load_repairs(path)
