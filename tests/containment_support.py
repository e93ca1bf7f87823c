"""A containment corpus: schema edits of every kind applied to real MCP tool schemas.

Each edit kind takes a real ``inputSchema`` and returns ``(looser, tighter, path, rule)`` for
the first parameter it applies to (``None`` when the tool has no such parameter): ``looser``
accepts a call ``tighter`` refuses, and ``rule`` is the keyword that says so. A loosening
case is ``tighter → looser``, a tightening case the reverse. Neutral edits return a schema
that accepts exactly the same calls. Used by ``tests/corpora/test_containment_corpus.py``
and ``bench/containment_table.py`` (the table in ``docs/ratchet.md``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Edit = tuple[dict[str, Any], dict[str, Any], str, str]


def _props(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def _first(schema: dict[str, Any], kind: str) -> str | None:
    """The first (sorted) property whose own schema is a plain ``kind`` without combinators."""
    for name in sorted(_props(schema)):
        sub = _props(schema)[name]
        if (
            isinstance(sub, dict)
            and sub.get("type") == kind
            and not any(k in sub for k in ("anyOf", "oneOf", "allOf", "$ref", "enum", "const"))
        ):
            return name
    return None


def _with(schema: dict[str, Any], name: str, change: Callable[[dict[str, Any]], Any]) -> Any:
    out = copy.deepcopy(schema)
    out["properties"][name] = change(copy.deepcopy(out["properties"][name]))
    return out


def _set(**keys: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda sub: {**sub, **keys}


_NUMERIC = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf", "enum")
_NEIGHBOURS = {
    "minimum": _NUMERIC,
    "maximum": _NUMERIC,
    "exclusiveMinimum": _NUMERIC,
    "multipleOf": _NUMERIC,
    "minLength": ("minLength", "pattern", "format", "enum"),
    "maxLength": ("maxLength", "pattern", "format", "enum"),
    "pattern": ("pattern", "format", "enum"),
    "format": ("pattern", "format", "enum"),
    "const": ("const", "enum", "pattern", "format"),
}


def _keyword_edit(kind: str, rule: str, **keys: Any) -> Callable[[dict[str, Any]], Edit | None]:
    """Looser: the real schema; tighter: the first ``kind`` parameter with ``keys`` added."""

    def edit(schema: dict[str, Any]) -> Edit | None:
        name = _first(schema, kind)
        # A parameter already bounded by a neighbour keyword would make the edit a no-op.
        neighbours = _NEIGHBOURS.get(rule, (rule,))
        if name is None or any(k in _props(schema)[name] for k in neighbours):
            return None
        return schema, _with(schema, name, _set(**keys)), name, rule

    return edit


def _widen_type(schema: dict[str, Any]) -> Edit | None:
    name = _first(schema, "string")
    if name is None:
        return None
    return _with(schema, name, _set(type=["string", "number"])), schema, name, "type"


def _untype(schema: dict[str, Any]) -> Edit | None:
    name = _first(schema, "string")
    if name is None:
        return None
    looser = _with(schema, name, lambda sub: {k: v for k, v in sub.items() if k != "type"})
    return looser, schema, name, "type"


def _enum_value(schema: dict[str, Any]) -> Edit | None:
    for name in sorted(_props(schema)):
        sub = _props(schema)[name]
        if isinstance(sub, dict) and isinstance(sub.get("enum"), list) and sub["enum"]:
            looser = _with(schema, name, lambda s: {**s, "enum": [*s["enum"], "zz-new-value"]})
            return looser, schema, name, "enum"
    name = _first(schema, "string")
    if name is None:
        return None
    return schema, _with(schema, name, _set(enum=["alpha", "beta"])), name, "enum"


def _required(schema: dict[str, Any]) -> Edit | None:
    required = schema.get("required")
    if isinstance(required, list) and required:
        name = sorted(required)[0]
        looser = copy.deepcopy(schema)
        looser["required"] = [n for n in required if n != name]
        if not looser["required"]:
            del looser["required"]
        return looser, schema, name, "required"
    names = sorted(_props(schema))
    if not names:
        return None
    tighter = {**copy.deepcopy(schema), "required": [names[0]]}
    return schema, tighter, names[0], "required"


def _closed(schema: dict[str, Any]) -> dict[str, Any]:
    return {**copy.deepcopy(schema), "additionalProperties": False}


def _additional(schema: dict[str, Any]) -> Edit | None:
    if schema.get("additionalProperties") is False:
        looser = {k: v for k, v in copy.deepcopy(schema).items() if k != "additionalProperties"}
        return looser, schema, "*", "additionalProperties"
    if "additionalProperties" in schema or "patternProperties" in schema:
        return None
    return schema, _closed(schema), "*", "additionalProperties"


def _new_property(schema: dict[str, Any]) -> Edit | None:
    if "zz_extra" in _props(schema) or "patternProperties" in schema:
        return None
    tighter = _closed(schema)
    looser = copy.deepcopy(tighter)
    looser.setdefault("properties", {})["zz_extra"] = {"type": "string"}
    return looser, tighter, "zz_extra", "additionalProperties"


def _pattern_properties(schema: dict[str, Any]) -> Edit | None:
    if "patternProperties" in schema:
        return None
    tighter = _closed(schema)
    looser = {**copy.deepcopy(tighter), "patternProperties": {"^x-": {"type": "string"}}}
    return looser, tighter, "~^x-", "patternProperties"


def _items(schema: dict[str, Any]) -> Edit | None:
    name = _first(schema, "array")
    if name is None:
        return None
    items = _props(schema)[name].get("items")
    if not isinstance(items, dict) or not isinstance(items.get("type"), str):
        return None
    rule = "enum" if "enum" in items else "const" if "const" in items else "type"
    return _with(schema, name, _set(items={})), schema, f"{name}[]", rule


def _tuple(schema: dict[str, Any]) -> Edit | None:
    name = _first(schema, "array")
    if name is None:
        return None
    tighter = _with(schema, name, _set(prefixItems=[{"type": "string"}], items=False))
    looser = _with(schema, name, _set(prefixItems=[{"type": "string"}], items={}))
    return looser, tighter, f"{name}[]", "items"


def _any_of(schema: dict[str, Any]) -> Edit | None:
    name = _first(schema, "string")
    if name is None:
        return None
    looser = _with(schema, name, lambda sub: {"anyOf": [sub, {"type": "null"}]})
    return looser, schema, name, "type"


def _one_of(schema: dict[str, Any]) -> Edit | None:
    name = _first(schema, "integer") or _first(schema, "number")
    if name is None:
        return None
    kind = _props(schema)[name]["type"]
    tighter = _with(schema, name, lambda sub: {"oneOf": [sub, {"type": "string"}]})
    looser = _with(
        schema, name, lambda sub: {"oneOf": [{**sub, "type": kind}, {"type": ["string", "null"]}]}
    )
    return looser, tighter, name, "type"


def _all_of(schema: dict[str, Any]) -> Edit | None:
    name = _first(schema, "string")
    if name is None or "maxLength" in _props(schema)[name]:
        return None
    tighter = _with(schema, name, lambda sub: {"allOf": [sub, {"maxLength": 64}]})
    return schema, tighter, name, "maxLength"


def _ref(schema: dict[str, Any]) -> Edit | None:
    name = _first(schema, "string")
    if name is None or "$defs" in schema or "maxLength" in _props(schema)[name]:
        return None

    def through_ref(definition: dict[str, Any]) -> dict[str, Any]:
        out = _with(schema, name, lambda _sub: {"$ref": "#/$defs/value"})
        out["$defs"] = {"value": definition}
        return out

    sub = _props(schema)[name]
    return through_ref(sub), through_ref({**sub, "maxLength": 64}), name, "maxLength"


def _in_optional_model(
    edit: Callable[[dict[str, Any]], Edit | None],
) -> Callable[[dict[str, Any]], Edit | None]:
    """The same edit on the tool's schema moved into a model behind ``Optional[...]``, as
    pydantic writes it: ``opt: {anyOf: [{$ref: #/$defs/M}, {type: null}]}``. The text around
    the ``$ref`` is the same on both sides; only the definition changed."""

    def wrap(schema: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"opt": {"anyOf": [{"$ref": "#/$defs/M"}, {"type": "null"}]}},
            "$defs": {"M": schema},
        }

    def nested(schema: dict[str, Any]) -> Edit | None:
        if "$defs" in schema or "definitions" in schema:
            return None  # its own references would point past the new root
        made = edit(schema)
        if made is None:
            return None
        looser, tighter, path, rule = made
        return wrap(looser), wrap(tighter), f"opt.{path}", rule

    return nested


LOOSENING_KINDS: dict[str, Callable[[dict[str, Any]], Edit | None]] = {
    "type widened": _widen_type,
    "type dropped": _untype,
    "enum value added": _enum_value,
    "const dropped": _keyword_edit("string", "const", const="fixed"),
    "required dropped": _required,
    "additionalProperties opened": _additional,
    "property added to a closed object": _new_property,
    "patternProperties added to a closed object": _pattern_properties,
    "minimum dropped": _keyword_edit("integer", "minimum", minimum=1),
    "maximum dropped": _keyword_edit("integer", "maximum", maximum=100),
    "exclusiveMinimum dropped": _keyword_edit("number", "exclusiveMinimum", exclusiveMinimum=0),
    "multipleOf dropped": _keyword_edit("integer", "multipleOf", multipleOf=5),
    "minLength dropped": _keyword_edit("string", "minLength", minLength=1),
    "maxLength dropped": _keyword_edit("string", "maxLength", maxLength=256),
    "pattern dropped": _keyword_edit("string", "pattern", pattern="^[a-z0-9_./-]+$"),
    "format dropped": _keyword_edit("string", "format", format="uri"),
    "items untyped": _items,
    "tuple rest opened": _tuple,
    "minItems dropped": _keyword_edit("array", "minItems", minItems=1),
    "maxItems dropped": _keyword_edit("array", "maxItems", maxItems=10),
    "uniqueItems dropped": _keyword_edit("array", "uniqueItems", uniqueItems=True),
    "anyOf branch added": _any_of,
    "oneOf branch widened": _one_of,
    "allOf part dropped": _all_of,
    "$ref target loosened": _ref,
    "enum value added in an Optional model": _in_optional_model(_enum_value),
    "required dropped in an Optional model": _in_optional_model(_required),
    "maxLength dropped in an Optional model": _in_optional_model(
        _keyword_edit("string", "maxLength", maxLength=256)
    ),
}


def _described(schema: dict[str, Any]) -> dict[str, Any] | None:
    names = sorted(_props(schema))
    if not names or not isinstance(_props(schema)[names[0]], dict):
        return None
    return _with(schema, names[0], _set(description="reworded: " + names[0], title="T"))


def _reordered(schema: dict[str, Any]) -> dict[str, Any] | None:
    if len(_props(schema)) < 2:
        return None
    out = copy.deepcopy(schema)
    out["properties"] = dict(reversed(list(out["properties"].items())))
    if isinstance(out.get("required"), list):
        out["required"] = list(reversed(out["required"]))
    return out


def _enum_reordered(schema: dict[str, Any]) -> dict[str, Any] | None:
    for name in sorted(_props(schema)):
        sub = _props(schema)[name]
        if isinstance(sub, dict) and isinstance(sub.get("enum"), list) and len(sub["enum"]) > 1:
            return _with(schema, name, lambda s: {**s, "enum": list(reversed(s["enum"]))})
    return None


def _integer_bound_respelled(schema: dict[str, Any]) -> dict[str, Any] | None:
    """``minimum: k`` on an integer written ``exclusiveMinimum: k - 1`` (pydantic's ``gt``)."""
    for name in sorted(_props(schema)):
        sub = _props(schema)[name]
        if (
            isinstance(sub, dict)
            and sub.get("type") == "integer"
            and type(sub.get("minimum")) is int
            and "exclusiveMinimum" not in sub
        ):
            respelled = {k: v for k, v in sub.items() if k != "minimum"}
            respelled["exclusiveMinimum"] = sub["minimum"] - 1
            return _with(schema, name, lambda _sub, new=respelled: new)
    return None


NEUTRAL_KINDS: dict[str, Callable[[dict[str, Any]], dict[str, Any] | None]] = {
    "description and title reworded": _described,
    "properties and required reordered": _reordered,
    "enum values reordered": _enum_reordered,
    "integer minimum respelled as exclusiveMinimum": _integer_bound_respelled,
}


@dataclass(frozen=True, slots=True)
class RealTool:
    source: str
    ref: str
    schema: dict[str, Any]


def real_tools(corpora: Path) -> Iterator[RealTool]:
    """Every object ``inputSchema`` of the MCP captures and the GitHub server's toolsnaps."""
    for path in sorted((corpora / "mcp-servers-tools-list/servers").glob("*.tools.json")):
        for tool in json.loads(path.read_text(encoding="utf-8"))["tools"]:
            if isinstance(tool.get("inputSchema"), dict):
                yield RealTool(path.name, tool["name"], tool["inputSchema"])
    for path in sorted((corpora / "github-mcp-server-toolsnaps/head").glob("*.snap")):
        tool = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(tool.get("inputSchema"), dict):
            yield RealTool("github-mcp-server", tool["name"], tool["inputSchema"])


def snapshot(ref: str, schema: Any) -> dict[str, Any]:
    return {"version": 1, "actions": [{"ref": ref, "inputSchema": schema}]}


@dataclass(frozen=True, slots=True)
class KindRow:
    """One edit kind over the corpus: how many edits, how many classified right, how many a
    freedom-only ratchet would have caught (its total rose)."""

    kind: str
    edits: int
    correct: int
    freedom_caught: int
    misses: tuple[str, ...]


def _has(changes: Any, path: str, rule: str) -> bool:
    return any(change.path == path and change.rule == rule for change in changes)


def evaluate(corpora: Path, *, limit: int | None = None) -> tuple[list[KindRow], list[KindRow]]:
    """``(loosening rows, tightening and neutral rows)`` over the real tools."""
    from pytest_entropy.core.surface_diff import diff_snapshots

    tools = list(real_tools(corpora))
    loosening: list[KindRow] = []
    other: list[KindRow] = []
    for kind, edit in LOOSENING_KINDS.items():
        counts = {"edits": 0, "loose": 0, "tight": 0, "freedom": 0}
        misses: list[str] = []
        for tool in tools:
            made = edit(tool.schema)
            if made is None:
                continue
            if limit is not None and counts["edits"] >= limit:
                break
            looser, tighter, path, rule = made
            counts["edits"] += 1
            forward = diff_snapshots(snapshot(tool.ref, tighter), snapshot(tool.ref, looser))
            if _has(forward.loosened, path, rule):
                counts["loose"] += 1
            else:
                misses.append(f"loosen {tool.source}:{tool.ref} {forward.to_json()['loosened']}")
            if forward.freedom_after > forward.freedom_before:
                counts["freedom"] += 1
            back = diff_snapshots(snapshot(tool.ref, looser), snapshot(tool.ref, tighter))
            if not back.loosened and _has(back.tightened, path, rule):
                counts["tight"] += 1
            else:
                misses.append(f"tighten {tool.source}:{tool.ref} {back.to_json()}")
        loosening.append(
            KindRow(kind, counts["edits"], counts["loose"], counts["freedom"], tuple(misses[:3]))
        )
        other.append(KindRow(f"reverse: {kind}", counts["edits"], counts["tight"], 0, ()))
    for kind, neutral in NEUTRAL_KINDS.items():
        edits = correct = 0
        misses = []
        for tool in tools:
            changed = neutral(tool.schema)
            if changed is None:
                continue
            if limit is not None and edits >= limit:
                break
            edits += 1
            result = diff_snapshots(snapshot(tool.ref, tool.schema), snapshot(tool.ref, changed))
            if not result.loosened and not result.tightened:
                correct += 1
            else:
                misses.append(f"{tool.source}:{tool.ref} {result.to_json()}")
        other.append(KindRow(kind, edits, correct, 0, tuple(misses[:3])))
    return loosening, other
