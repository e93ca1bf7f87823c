"""JSON Schema keyword helpers for containment: types, bounds, references, merges.

Pure functions over parsed schemas; :mod:`pytest_entropy.core.containment` uses them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final, TypeGuard

from pytest_entropy.core.schema_strip import (
    ANNOTATION_KEYWORDS,
    same_schema,
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
    """One reason ``inner`` ⊄ ``outer``: at ``path``, by ``rule``, with both fragments; an
    undecided one says why in ``reason``."""

    path: str
    rule: str
    decided: bool
    outer: Any
    inner: Any
    reason: str = ""


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


# How a validator reads the bound keywords. Drafts disagree on the spelling, and so do the
# validators a tool may run behind its schema, so containment holds only if it holds for every
# reader (each reading *both* schemas the same way):
# * ``modern`` (draft 6 and later, TypeBox): ``exclusiveMinimum`` is a number of its own; a
#   boolean there is not a bound and is ignored;
# * ``lenient`` (OpenAPI 3.0 and other draft-4 style producers without ``$schema``): both
#   spellings, ``exclusiveMinimum: true`` making ``minimum`` strict;
# * ``draft4`` (a root that declares draft 3 or 4): only ``minimum``, made strict by a truthy
#   ``exclusiveMinimum`` (a number there is no bound of its own).
READERS: Final = ("lenient", "modern")
DRAFT4_READERS: Final = ("lenient", "modern", "draft4")

Bound = tuple[Fraction, bool]  # (value, inclusive)


def readers_for(*roots: Any) -> tuple[str, ...]:
    """The bound readers that apply to schemas under these roots."""
    for root in roots:
        declared = root.get("$schema") if type(root) is dict else None
        if type(declared) is str and ("draft-04" in declared or "draft-03" in declared):
            return DRAFT4_READERS
    return READERS


def numeric_bound(
    schema: dict[str, Any], lower: bool, reader: str = "lenient"
) -> tuple[Bound, str] | None:
    """The tightest lower (or upper) bound ``schema`` puts on numbers under ``reader``:
    ``((value, inclusive), keyword that set it)``, or ``None`` for no bound."""
    plain, exclusive = ("minimum", "exclusiveMinimum") if lower else ("maximum", "exclusiveMaximum")
    found: list[tuple[Bound, str]] = []
    value = schema.get(plain)
    flag = schema.get(exclusive)
    if is_finite_number(value):
        strict = bool(flag) if reader == "draft4" else reader == "lenient" and flag is True
        found.append(((Fraction(value), not strict), exclusive if strict else plain))
    if is_finite_number(flag) and reader != "draft4":
        found.append(((Fraction(flag), False), exclusive))
    if not found:
        return None
    # Lower: the larger value, exclusive first on a tie; upper: the smaller, exclusive first.
    if lower:
        return max(found, key=lambda item: (item[0][0], not item[0][1]))
    return min(found, key=lambda item: (item[0][0], item[0][1]))


def integer_step(schema: dict[str, Any], integral: bool) -> int | None:
    """The grid the numbers of ``schema`` lie on, when every validator agrees exactly: every
    integer (``integral``), or the multiples of an integer ``multipleOf`` among integers
    (TypeBox forgives 1e-10 on a float, so a float value stays off the grid)."""
    if not integral:
        return None
    step = schema.get("multipleOf")
    if type(step) is int and 0 < step <= 2**53:
        return step
    return 1


def snap(bound: Bound, lower: bool, step: int | None) -> Bound:
    """``bound`` moved onto the grid of multiples of ``step`` (inclusive there)."""
    if step is None:
        return bound
    value, inclusive = bound
    quotient = value / step
    if lower:
        k = math.ceil(quotient) if inclusive else math.floor(quotient) + 1
    else:
        k = math.floor(quotient) if inclusive else math.ceil(quotient) - 1
    return (Fraction(k * step), True)


def interval(
    schema: dict[str, Any], reader: str, step: int | None
) -> tuple[Bound | None, Bound | None]:
    """``schema``'s (lower, upper) bounds under ``reader``, snapped onto ``step``."""
    low = numeric_bound(schema, True, reader)
    high = numeric_bound(schema, False, reader)
    return (
        snap(low[0], True, step) if low is not None else None,
        snap(high[0], False, step) if high is not None else None,
    )


def empty_interval(low: Bound | None, high: Bound | None) -> bool:
    if low is None or high is None:
        return False
    return low[0] > high[0] or (low[0] == high[0] and not (low[1] and high[1]))


def looser_bound(ours: Bound | None, theirs: Bound, lower: bool) -> bool:
    """Whether the bound ``ours`` lets through a number ``theirs`` refuses."""
    if ours is None:
        return True
    if ours[0] != theirs[0]:
        return ours[0] < theirs[0] if lower else ours[0] > theirs[0]
    return ours[1] and not theirs[1]


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


_CARRIED_ROOT: Final = "pytest-entropy-root"


def fragment_document(root: Any, fragment: dict[str, Any]) -> dict[str, Any]:
    """``fragment`` as a schema document of its own, for a validator that only takes whole
    documents (:func:`~pytest_entropy.core.validation.accepts`): the root rides along under
    ``$defs`` and every local pointer (``#``, ``#/...``) is moved to reach it there. Values
    (``enum``, ``const``, ``default``, ``examples``) are data and stay as they are."""
    declared = root.get("$schema") if type(root) is dict else None
    if not any(ref == "#" or ref.startswith("#/") for ref in refs_in(fragment)):
        # Nothing to reach in the root (the common enum or const): the fragment as it is.
        return {**fragment, "$schema": declared} if type(declared) is str else fragment
    moved_root = "#/$defs/" + _CARRIED_ROOT

    def move(node: Any) -> Any:
        if type(node) is list:
            return [move(item) for item in node]
        if type(node) is not dict:
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and type(value) is str and (value == "#" or value.startswith("#/")):
                out[key] = moved_root + value[1:]
            elif key in ("enum", "const", "default", "examples"):
                out[key] = value
            else:
                out[key] = move(value)
        return out

    carried = move(root) if type(root) is dict else {}
    # An embedded $id would start a resource of its own and move the pointers' base.
    carried = {k: v for k, v in carried.items() if k not in ("$id", "$schema")}
    document: dict[str, Any] = {"$defs": {_CARRIED_ROOT: carried}, "allOf": [move(fragment)]}
    if type(declared) is str:
        document["$schema"] = declared
    return document


def fragment_validator(root: Any, fragment: dict[str, Any]) -> Any:
    """A python-jsonschema validator for ``fragment`` with ``root``'s references (or
    ``None``): it explains a refusal (keyword and path); :func:`fragment_document` with
    ``accepts`` decides."""
    from pytest_entropy.core.validation import validator_for_schema

    try:
        base = validator_for_schema(root if type(root) is dict else {})
        return base.evolve(schema=fragment)
    except Exception:
        return None


def _scalar_key(value: Any) -> tuple[Any, ...] | None:
    """A key equal for values JSON Schema's ``const`` calls equal (``1`` and ``1.0``, never
    ``true`` and ``1``); ``None`` for a value this module does not compare."""
    if value is None:
        return ("null",)
    if type(value) is bool:
        return ("boolean", value)
    if type(value) is str:
        return ("string", value)
    if is_finite_number(value):
        return ("number", Fraction(value))
    return None


def finite_keys(schema: Any) -> tuple[frozenset[tuple[Any, ...]], str] | None:
    """The values a ``const``/``enum`` schema allows, as keys, and the keyword."""
    if type(schema) is not dict:
        return None
    if "const" in schema:
        values, word = [schema["const"]], "const"
    elif type(schema.get("enum")) is list:
        values, word = schema["enum"], "enum"
    else:
        return None
    keys = [_scalar_key(value) for value in values]
    if any(key is None for key in keys):
        return None
    return frozenset(key for key in keys if key is not None), word


def _discriminated(required: dict[str, Any], other: dict[str, Any]) -> tuple[str, str] | None:
    """A property ``required`` demands with values ``other`` never allows there:
    ``(name, keyword)``, so no object both accept exists."""
    mine, theirs = mapping(required.get("properties")), mapping(other.get("properties"))
    for name in sorted(name_set(required.get("required")) & set(mine) & set(theirs)):
        ours, its = finite_keys(mine[name]), finite_keys(theirs[name])
        if ours is not None and its is not None and not ours[0] & its[0]:
            return name, its[1]
    return None


def accepts_nothing(schema: Any) -> bool:
    """Surely no value passes ``schema`` (a resolved schema): ``false``, an empty ``type``
    list or ``enum``, or an object schema that requires a property no value may take. Only
    what is certain: ``False`` means "may accept something"."""
    if type(schema) is not dict:
        return schema is False
    kinds = type_set(schema)
    if kinds is not None and not kinds:
        return True
    own = finite_keys(schema)
    if own is not None and not own[0]:
        return True
    if kinds != frozenset({"object"}):
        return False
    properties = mapping(schema.get("properties"))
    for name in name_set(schema.get("required")) & set(properties):
        allowed = properties[name]
        keys = finite_keys(allowed)
        if allowed is False or (keys is not None and not keys[0]):
            return True
    return False


def disjoint(a: Any, b: Any) -> tuple[str, str] | None:
    """Why no value passes both ``a`` and ``b`` (two resolved schemas), or ``None`` if they
    may overlap: ``("", "type")`` when their types do not meet, ``(name, keyword)`` when
    both are objects told apart by the ``const``/``enum`` of a property one of them requires
    (a discriminated union)."""
    if type(a) is not dict or type(b) is not dict:
        return None
    kinds_a, kinds_b = type_set(a), type_set(b)
    if kinds_a is None or kinds_b is None:
        return None
    common = kinds_a & kinds_b
    if not common:
        return "", "type"
    if common != {"object"}:
        return None
    return _discriminated(a, b) or _discriminated(b, a)


def pairwise_disjoint(branches: list[Any]) -> bool:
    """No two branches accept the same value (by type or by a discriminating property)."""
    return all(
        disjoint(branches[i], branches[j]) is not None
        for i in range(len(branches))
        for j in range(i + 1, len(branches))
    )


def definition_pointer(root: Any, schema: Any) -> str | None:
    """The ``#/$defs/NAME`` (or ``#/definitions/NAME``) pointer of ``schema`` in ``root``,
    found by identity (a resolved ``$ref`` target is the definition object itself)."""
    if type(root) is not dict:
        return None
    for group in ("$defs", "definitions"):
        for name, definition in mapping(root.get(group)).items():
            if definition is schema:
                escaped = name.replace("~", "~0").replace("/", "~1")
                return f"#/{group}/{escaped}"
    return None


def refs_in(schema: Any) -> set[str]:
    """Every ``$ref`` string anywhere inside ``schema`` (values under ``enum``/``const``
    included: more refs only make a caller more careful)."""
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            ref = node.get("$ref")
            if type(ref) is str:
                found.add(ref)
            stack.extend(node.values())
        elif type(node) is list:
            stack.extend(node)
    return found
