"""Validation of parsed input values: surface snapshots and repair tables (spec §1.6-§1.7).

These functions take already-parsed JSON values (no I/O) and return the exact structures
the meter and the hashes use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.jscompat import code_unit_key, js_string
from pytest_entropy.core.records import RepairRow

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "SURFACE_SHAPE_ERROR",
    "TOOL_FIELDS",
    "entropy_repair_rows",
    "live_surface_snapshot",
    "normalise_repair_rows",
    "repair_rows_from_value",
    "repair_table_rows",
    "surface_from_value",
    "without_tool_fields",
]

SURFACE_SHAPE_ERROR = "surface snapshot must be { version: 1, actions: [...] }"

# What an MCP tool carries besides its name and input schema. ``export`` writes them on each
# action (lint reads the descriptions); no hash ever reads them, so every loader drops them
# unless its caller asks (a named exception, docs/decisions.md).
TOOL_FIELDS: Final = (
    "title",
    "description",
    "annotations",
    "outputSchema",
    "icons",
    "execution",
    "_meta",
)


def without_tool_fields(actions: list[Any]) -> list[Any]:
    """``actions`` with :data:`TOOL_FIELDS` removed from each (the list itself, unchanged,
    when no action has one; an action without one is kept as the same object)."""

    def carries(action: Any) -> bool:
        return type(action) is dict and not action.keys().isdisjoint(TOOL_FIELDS)

    if not any(map(carries, actions)):
        return actions
    return [
        {key: item for key, item in action.items() if key not in TOOL_FIELDS}
        if carries(action)
        else action
        for action in actions
    ]


def surface_from_value(
    value: Any, *, source: str | None = None, tool_fields: bool = False
) -> dict[str, Any]:
    """A surface snapshot as the certification loader accepts it (spec §1.6).

    Keeps, in file order and without re-sorting, the entries that are objects with a
    string ``ref``; the surface hash covers exactly the result. An entry without an
    ``inputSchema`` is refused (spec §14 #16). The MCP tool fields (:data:`TOOL_FIELDS`,
    which our ``export`` writes) are dropped from each entry unless ``tool_fields`` asks
    for them, so they never reach a hash.
    """
    if (
        type(value) is not dict
        or type(value.get("version")) not in (int, float)
        or value.get("version") != 1
        or type(value.get("actions")) is not list
    ):
        raise EntropyInputError(SURFACE_SHAPE_ERROR, source=source)
    actions = []
    for position, entry in enumerate(value["actions"]):
        if type(entry) is not dict or type(entry.get("ref")) is not str:
            continue
        if "inputSchema" not in entry:
            raise EntropyInputError(
                f"action {position} ({entry['ref']}) has no inputSchema", source=source
            )
        actions.append(entry)
    return {"version": 1, "actions": actions if tool_fields else without_tool_fields(actions)}


def live_surface_snapshot(
    actions: Iterable[Mapping[str, Any]], *, tool_fields: bool = False
) -> dict[str, Any]:
    """``{version: 1, actions: [{ref, inputSchema}]}`` sorted by ref in code-unit order;
    with ``tool_fields`` each action also keeps the :data:`TOOL_FIELDS` it has, after those
    two keys (what ``export`` writes)."""
    rows = []
    for action in actions:
        row = {"ref": action["ref"], "inputSchema": action.get("inputSchema")}
        if tool_fields:
            row.update((key, action[key]) for key in TOOL_FIELDS if key in action)
        rows.append(row)
    rows.sort(key=lambda row: code_unit_key(row["ref"]))
    return {"version": 1, "actions": rows}


def _js_text(row: Mapping[str, Any], name: str) -> str:
    """``String(row[name])`` as a template literal spells it (``undefined`` when absent)."""
    if name not in row:
        return "undefined"
    value = row[name]
    if type(value) is str:
        return value
    try:
        return js_string(value)
    except TypeError:
        return "[object Object]" if isinstance(value, Mapping) else ",".join(map(str, value))


def _plain_text(row: Mapping[str, Any], name: str) -> str:
    value = row.get(name)
    return value if type(value) is str else ""


def _row_oddities(row: Mapping[str, Any]) -> list[str]:
    kind = row.get("kind")
    odd = []
    if kind not in ("keyAlias", "actionAlias"):
        odd.append(f"kind {kind!r} is neither keyAlias nor actionAlias")
    names = ("from", "to", "provider" if kind == "actionAlias" else "ref")
    for name in names:
        value = row.get(name)
        if name not in row:
            odd.append(f"no {name!r}")
        elif type(value) is not str or not value:
            odd.append(f"{name!r} is not a non-empty string")
    return odd


def normalise_repair_rows(
    rows: Iterable[Mapping[str, Any]], *, source: str | None = None
) -> tuple[list[RepairRow], list[str]]:
    """Meter rows of a repair table (spec §1.7) and a note naming each row the reference
    counts although it is not a well-formed alias: a row without ``from``/``to``, with an
    empty one, or of an unknown kind is still a lexicon row (an ``actionAlias`` row counts
    for ``provider + "." + to``, any other for its ``ref``, spelled as JavaScript's template
    literal spells a missing value: ``undefined``). A row that is not an object is an input
    error."""
    out: list[RepairRow] = []
    notes: list[str] = []
    for position, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise EntropyInputError(f"repair row {position} is not an object", source=source)
        kind = row.get("kind")
        if kind == "actionAlias":
            ref = _js_text(row, "provider") + "." + _js_text(row, "to")
        else:
            ref = _js_text(row, "ref")
        kind_text = kind if type(kind) is str else _js_text(row, "kind")
        out.append(RepairRow(kind_text, ref, _plain_text(row, "from"), _plain_text(row, "to")))
        odd = _row_oddities(row)
        if odd:
            where = f"{source}: " if source else ""
            notes.append(
                f"{where}repair row {position}: {'; '.join(odd)}: counted as a lexicon row"
                f" of {ref!r}, as the reference counts it"
            )
    return out, notes


def entropy_repair_rows(
    rows: Iterable[Mapping[str, Any]], *, source: str | None = None
) -> list[RepairRow]:
    """Normalise repair-table rows to meter rows, order and duplicates kept (spec §1.7);
    :func:`normalise_repair_rows` also says which rows are not well-formed aliases."""
    return normalise_repair_rows(rows, source=source)[0]


def repair_table_rows(value: Any, *, source: str | None = None) -> list[Any]:
    """The rows of a stored repair table (``{"repairs": [...]}``) or a bare array of rows."""
    if type(value) is dict:
        rows = value.get("repairs")
        if type(rows) is not list:
            raise EntropyInputError(
                "repair table must be { repairs: [...] } or an array of rows", source=source
            )
        return rows
    if type(value) is list:
        return value
    raise EntropyInputError(
        "repair table must be { repairs: [...] } or an array of rows", source=source
    )


def repair_rows_from_value(value: Any, *, source: str | None = None) -> list[RepairRow]:
    """Rows from a stored repair table (``{"repairs": [...]}``) or a bare array of rows."""
    return entropy_repair_rows(repair_table_rows(value, source=source), source=source)
