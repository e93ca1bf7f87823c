"""Writers for surface files: the declared file with a compiled artifact applied.

A writer edits the parsed declared file itself, so everything the tool author wrote
(descriptions, annotations, key order, tools the artifact does not touch) stays as it was:
an overlaid tool gets the artifact's schema in its format's schema field, a quarantined
tool is removed. The formats whose readers take the schema as it is have writers (the
snapshot, MCP ``tools/list``, OpenAI, OpenHands, Anthropic); a format whose reader
translates the schema (BFCL's dialect, Gemini's types) or adds a ref prefix of its own
(Pi) has none, and gets a snapshot instead.

Each writer finds the file's *tool slots*, the same entries its reader reads, in the same
order; :func:`rewrite_surface` and :func:`surface_patches` both work on them, so the patch
and the rewritten file always agree.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from pytest_entropy.core.apply import ApplyPlan, json_patch, json_pointer
from pytest_entropy.core.canonical import json_copy

__all__ = ["WRITABLE_FORMATS", "ToolSlot", "rewrite_surface", "surface_patches", "tool_slots"]

WRITABLE_FORMATS: Final = ("snapshot", "mcp", "openai", "openhands", "anthropic")

# format -> (where the list is under a top-level object, the name key, the schema key)
_SHAPES: Final = {
    "snapshot": (("actions",), "ref", "inputSchema"),
    "mcp": (("tools",), "name", "inputSchema"),
    "openai": (("tools", "functions"), "name", "parameters"),
    "openhands": (("tools", "functions"), "name", "parameters"),
    "anthropic": (("tools",), "name", "input_schema"),
}


@dataclass(frozen=True, slots=True)
class ToolSlot:
    """One tool of a surface file: ``entry`` is the path of its element in the tool array
    (what a removal deletes), ``holder`` the path of the object holding its schema under
    ``schema_key`` (OpenAI's ``function`` object, or the element itself)."""

    name: str
    entry: tuple[Any, ...]
    holder: tuple[Any, ...]
    schema_key: str


def _tool_array(value: Any, keys: tuple[str, ...]) -> tuple[tuple[Any, ...], list[Any]] | None:
    path: tuple[Any, ...] = ()
    if type(value) is dict and type(value.get("result")) is dict and "jsonrpc" in value:
        value, path = value["result"], ("result",)
    if type(value) is list:
        return path, value
    if type(value) is dict:
        for key in keys:
            if type(value.get(key)) is list:
                return (*path, key), value[key]
    return None


def tool_slots(value: Any, surface_format: str) -> list[ToolSlot] | None:
    """The tool slots of a parsed surface file, or ``None`` when this format (or this shape
    of it, such as a one-tool MCP object) has no writer."""
    shape = _SHAPES.get(surface_format)
    if shape is None:
        return None
    keys, name_key, schema_key = shape
    found = _tool_array(value, keys)
    if found is None:
        return None
    path, items = found
    slots = []
    for index, item in enumerate(items):
        if type(item) is not dict:
            return None
        entry = holder = (*path, index)
        if surface_format in ("openai", "openhands") and type(item.get("function")) is dict:
            item, holder = item["function"], (*entry, "function")
        name = item.get(name_key)
        if type(name) is not str:
            return None
        slots.append(ToolSlot(name, entry, holder, schema_key))
    return slots


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for token in path:
        value = value[token]
    return value


def _changes(
    slots: list[ToolSlot], plan: ApplyPlan, ref_prefix: str
) -> Iterator[tuple[ToolSlot, str, bool]]:
    """``(slot, ref, removed)`` of every slot the plan changes."""
    for slot in slots:
        ref = ref_prefix + slot.name
        if ref in plan.overlays:
            yield slot, ref, False
        elif ref in plan.removed:
            yield slot, ref, True


def rewrite_surface(
    value: Any, slots: list[ToolSlot], plan: ApplyPlan, ref_prefix: str = ""
) -> Any:
    """A copy of the parsed file with the plan applied (``value`` is not changed)."""
    out = json_copy(value)
    removals: list[tuple[Any, ...]] = []
    for slot, ref, removed in _changes(slots, plan, ref_prefix):
        if removed:
            removals.append(slot.entry)
        else:
            _at(out, slot.holder)[slot.schema_key] = json_copy(plan.overlays[ref])
    for entry in sorted(removals, key=lambda path: path[-1], reverse=True):
        del _at(out, entry[:-1])[entry[-1]]
    return out


def surface_patches(
    value: Any, slots: list[ToolSlot], plan: ApplyPlan, ref_prefix: str = ""
) -> list[dict[str, Any]]:
    """One RFC 6902 patch per changed tool, ``[{ref, patch}]``, against the declared file.

    Applied one after the other in the order given they yield :func:`rewrite_surface`'s
    result: schema changes first (in file order), then removals from the last index down,
    so every patch's paths hold when it is applied.
    """
    changed: list[dict[str, Any]] = []
    removals: list[tuple[ToolSlot, str]] = []
    for slot, ref, removed in _changes(slots, plan, ref_prefix):
        if removed:
            removals.append((slot, ref))
            continue
        holder = _at(value, slot.holder)
        path = (*slot.holder, slot.schema_key)
        if slot.schema_key in holder:
            patch = json_patch(holder[slot.schema_key], plan.overlays[ref], path)
        else:
            patch = [{"op": "add", "path": json_pointer(path), "value": plan.overlays[ref]}]
        changed.append({"ref": ref, "patch": patch})
    removals.sort(key=lambda item: item[0].entry[-1], reverse=True)
    for slot, ref in removals:
        changed.append({"ref": ref, "patch": [{"op": "remove", "path": json_pointer(slot.entry)}]})
    return changed
