"""JSON Schema keyword helpers for containment: types, bounds, references, merges.

Pure functions over parsed schemas; :mod:`pytest_entropy.core.containment` uses them.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final, TypeGuard

from pytest_entropy.core.canonical import canonical_json

ANNOTATION_KEYWORDS: Final = frozenset(
    {
        "title",
        "description",
        "examples",
        "default",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$schema",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$defs",
        "definitions",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
        "markdownDescription",
        "enumDescriptions",
    }
)
DECIDED: Final = frozenset(
    {
        "type",
        "enum",
        "const",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "items",
        "prefixItems",
        "additionalItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "minProperties",
        "maxProperties",
        "allOf",
        "anyOf",
        "oneOf",
        "$ref",
    }
)
# Keywords whose meaning depends on their neighbours: an extra one on the inner side is not
# simply one more restriction.
CONTEXTUAL: Final = frozenset({"then", "else", "unevaluatedProperties", "unevaluatedItems"})
ALL_TYPES: Final = frozenset({"null", "boolean", "object", "array", "string", "integer", "real"})
TYPE_SETS: Final = {
    "null": {"null"},
    "boolean": {"boolean"},
    "object": {"object"},
    "array": {"array"},
    "string": {"string"},
    "integer": {"integer"},
    "number": {"integer", "real"},
}
UNIVERSAL_PATTERNS: Final = frozenset({"", ".*", "^.*$", "^.*", ".*$", "[\\s\\S]*", "(.*)"})
MAX_DEPTH: Final = 48
ANY: Final[dict[str, Any]] = {}
NOTHING: Final[dict[str, Any]] = {"not": {}}


@dataclass(frozen=True, slots=True)
class Finding:
    """One reason ``inner`` ⊄ ``outer``: at ``path``, by ``rule``, with both fragments."""

    path: str
    rule: str
    decided: bool
    outer: Any
    inner: Any


def strip_annotations(schema: Any) -> Any:
    """The schema without annotation keywords at any depth (``properties`` names kept)."""
    if type(schema) is list:
        return [strip_annotations(item) for item in schema]
    if type(schema) is not dict:
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("properties", "patternProperties", "$defs", "definitions") and (
            type(value) is dict
        ):
            out[key] = {name: strip_annotations(sub) for name, sub in value.items()}
        elif key in ("enum", "const"):
            out[key] = value
        elif key not in ANNOTATION_KEYWORDS or key in ("$defs", "definitions"):
            out[key] = strip_annotations(value)
    return out


def same_schema(a: Any, b: Any) -> bool:
    return a is b or canonical_json(strip_annotations(a)) == canonical_json(strip_annotations(b))


def join_path(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def type_set(schema: dict[str, Any]) -> frozenset[str] | None:
    """The JSON types a schema's ``type`` allows (``None``: malformed)."""
    kind = schema.get("type")
    if kind is None:
        return ALL_TYPES
    names = [kind] if type(kind) is str else kind
    if type(names) is not list:
        return None
    out: set[str] = set()
    for name in names:
        if type(name) is not str or name not in TYPE_SETS:
            return None
        out |= TYPE_SETS[name]
    return frozenset(out)


def numeric_bound(
    schema: dict[str, Any], plain: str, exclusive: str
) -> tuple[Fraction, bool] | None:
    """The tightest bound (value, exclusive?) of ``minimum``-style keywords, any draft."""
    found: list[tuple[Fraction, bool]] = []
    value = schema.get(plain)
    flag = schema.get(exclusive)
    if is_finite_number(value):
        found.append((Fraction(value), flag is True))
    if is_finite_number(flag):
        found.append((Fraction(flag), True))
    if not found:
        return None
    lower = plain == "minimum"
    return (max if lower else min)(found, key=lambda item: (item[0], item[1] == lower))


def is_finite_number(value: Any) -> TypeGuard[int | float]:
    return type(value) in (int, float) and value == value and abs(value) != float("inf")


def resolve_pointer(root: Any, ref: Any) -> Any:
    """The target of a ``#/a/b`` reference inside ``root``, or ``None``."""
    if type(ref) is not str or not ref.startswith("#"):
        return None
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    from urllib.parse import unquote

    node = root
    for raw in ref[2:].split("/"):
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if type(node) is dict and part in node:
            node = node[part]
        elif type(node) is list and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def without(schema: dict[str, Any], word: str) -> dict[str, Any]:
    return {key: value for key, value in schema.items() if key != word}


def merge_all_of(schema: dict[str, Any]) -> dict[str, Any] | None:
    """``allOf`` folded into one schema when that is exact (no keyword twice, except
    ``required`` and ``type``; ``additionalProperties`` only beside all the properties)."""
    parts = [without(schema, "allOf"), *schema["allOf"]]
    if any(type(part) is not dict or "$ref" in part for part in parts):
        return None
    merged: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            if key in ANNOTATION_KEYWORDS:
                continue
            if key not in merged:
                merged[key] = value
            elif key == "required" and type(value) is list and type(merged[key]) is list:
                merged[key] = [*merged[key], *value]
            elif key == "type":
                mine, theirs = type_set({"type": merged[key]}), type_set({"type": value})
                if mine is None or theirs is None:
                    return None
                merged[key] = type_names(mine & theirs)
            elif not same_schema(merged[key], value):
                return None
    closed = [part for part in parts if "additionalProperties" in part]
    if closed and any(
        part is not closed[0] and ("properties" in part or "patternProperties" in part)
        for part in parts
    ):
        return None
    return merged


def type_names(kinds: frozenset[str]) -> list[str]:
    names: list[str] = [
        name for name in ("null", "boolean", "object", "array", "string") if name in kinds
    ]
    if {"integer", "real"} <= kinds:
        names.append("number")
    elif "integer" in kinds:
        names.append("integer")
    return names


def type_disjoint(branches: list[Any]) -> bool:
    """No two branches can accept the same value, judged by type (one branch: trivially)."""
    if len(branches) <= 1:
        return True
    seen: set[str] = set()
    for branch in branches:
        kinds = type_set(branch) if type(branch) is dict else None
        if kinds is None or kinds == ALL_TYPES or kinds & seen:
            return False
        seen |= kinds
    return True


def check_lengths(
    outer: dict[str, Any], inner: dict[str, Any], low: str, high: str, path: str, out: list[Finding]
) -> None:
    theirs, mine = outer.get(low), inner.get(low)
    if type(theirs) is int and theirs > 0 and not (type(mine) is int and mine >= theirs):
        out.append(Finding(path, low, True, theirs, mine))
    theirs, mine = outer.get(high), inner.get(high)
    if type(theirs) is int and not (type(mine) is int and mine <= theirs):
        out.append(Finding(path, high, True, theirs, mine))


def item_layout(schema: dict[str, Any]) -> tuple[list[Any], Any]:
    """``(positional item schemas, schema of the rest)`` in any draft's spelling."""
    prefix = schema.get("prefixItems")
    items = schema.get("items", True)
    if type(prefix) is list:
        return prefix, items
    if type(items) is list:
        return items, schema.get("additionalItems", True)
    return [], items


def name_set(value: Any) -> set[str]:
    return {name for name in value if type(name) is str} if type(value) is list else set()


def mapping(value: Any) -> dict[str, Any]:
    return value if type(value) is dict else {}


def member_schema(
    schema: dict[str, Any], props: dict[str, Any], patterns: dict[str, Any], name: str
) -> Any:
    """What ``schema`` demands of the property ``name`` (``None``: a pattern cannot run)."""
    from pytest_entropy.core.regex import pattern_search

    matching = []
    for pattern, sub in patterns.items():
        hit = pattern_search(pattern, name)
        if hit is None:
            return None
        if hit:
            matching.append(sub)
    if name in props:
        base = props[name]
    elif matching:
        base, matching = matching[0], matching[1:]
    else:
        return schema.get("additionalProperties", True)
    return {"allOf": [base, *matching]} if matching else base


def fragment_validator(root: Any, fragment: dict[str, Any]) -> Any:
    """The replay's validator for ``fragment`` with ``root``'s references (or ``None``)."""
    from pytest_entropy.core.validation import validator_for_schema

    try:
        base = validator_for_schema(root if type(root) is dict else {})
        return base.evolve(schema=fragment)
    except Exception:
        return None


def safe_is_valid(validator: Any, value: Any) -> bool | None:
    try:
        return bool(validator.is_valid(value))
    except Exception:
        return None
