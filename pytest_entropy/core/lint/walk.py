"""Walking a JSON Schema: every subschema with its JSON pointer and nesting depth."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "SUBSCHEMA_LISTS",
    "SUBSCHEMA_MAPS",
    "SUBSCHEMA_ONE",
    "WALK_LIMIT",
    "Node",
    "anchors_of",
    "escape",
    "is_object_schema",
    "nesting_depth",
    "resolve_local",
    "subschemas",
]

# Keywords whose value is one subschema, and whether entering it adds a nesting level.
_ONE: Final = {
    "additionalProperties": True,
    "items": True,
    "contains": True,
    "unevaluatedItems": True,
    "unevaluatedProperties": True,
    "propertyNames": True,
    "additionalItems": True,
    "not": False,
    "if": False,
    "then": False,
    "else": False,
}
# Keywords whose value is an array of subschemas.
_MANY: Final = {"anyOf": False, "oneOf": False, "allOf": False, "prefixItems": True}
# Keywords whose value maps names to subschemas.
_MAP: Final = {
    "properties": True,
    "patternProperties": True,
    "dependentSchemas": False,
    "$defs": None,
    "definitions": None,
}


# Public views for the meta-schema check, which blanks exactly what the walk visits.
SUBSCHEMA_ONE: Final = frozenset(_ONE)
SUBSCHEMA_LISTS: Final = frozenset(_MANY)
SUBSCHEMA_MAPS: Final = frozenset(_MAP)


def escape(token: str) -> str:
    """One JSON-pointer reference token (RFC 6901): ``~`` → ``~0``, ``/`` → ``~1``."""
    return token.replace("~", "~0").replace("/", "~1")


# How many steps below the root the walk goes. Every node holds its whole pointer, so an
# unbounded walk of a schema nested n levels costs n² (a 1 MB file of 100,000 levels took
# gigabytes); no real tool schema comes near this, and the cut is reported (schema-too-deep).
WALK_LIMIT: Final = 128


@dataclass(frozen=True, slots=True)
class Node:
    """A subschema: its pointer from the tool's schema, its depth (the root object is 1;
    properties, items and the like add one level; combinators do not), and the keyword
    that led to it (``""`` at the root). ``cut``: the node lies :data:`WALK_LIMIT` steps
    below the root and has subschemas that the walk did not enter."""

    pointer: str
    schema: Any
    depth: int
    via: str
    cut: bool = False


def _steps(schema: Any, depth: int) -> Iterator[tuple[str, Any, int, str]]:
    """The subschemas right below ``schema`` (at ``depth``), in document order: each as
    ``(pointer suffix, subschema, depth, keyword)``; the one statement of what the walk
    enters and what adds a level."""
    if type(schema) is not dict:
        return
    for keyword, value in schema.items():
        if keyword in _ONE and type(value) in (dict, bool):
            yield f"/{escape(keyword)}", value, depth + (1 if _ONE[keyword] else 0), keyword
        elif keyword == "items" and type(value) is list:
            for index, item in enumerate(value):
                yield f"/items/{index}", item, depth + 1, "items"
        elif keyword in _MANY and type(value) is list:
            inner = depth + (1 if _MANY[keyword] else 0)
            for index, item in enumerate(value):
                yield f"/{keyword}/{index}", item, inner, keyword
        elif keyword in _MAP and type(value) is dict:
            adds = _MAP[keyword]
            inner = 1 if adds is None else depth + (1 if adds else 0)
            for name, item in value.items():
                yield f"/{escape(keyword)}/{escape(name)}", item, inner, keyword


def _children(node: Node) -> list[Node]:
    return [
        Node(node.pointer + suffix, value, depth, keyword)
        for suffix, value, depth, keyword in _steps(node.schema, node.depth)
    ]


def subschemas(root: Any) -> Iterator[Node]:
    """Every subschema of ``root`` (itself included) down to :data:`WALK_LIMIT` steps, depth
    first in document order; a node whose subschemas lie beyond comes with ``cut`` set.

    ``$defs``/``definitions`` entries start again at depth 1: a definition's depth depends
    on where it is used.
    """
    stack = [(Node("", root, 1, ""), 0)]
    while stack:
        node, steps = stack.pop()
        if steps >= WALK_LIMIT:
            yield (
                Node(node.pointer, node.schema, node.depth, node.via, cut=True)
                if _children(node)
                else node
            )
            continue
        yield node
        # The children are read after the caller saw the node: lint --fix edits it in place.
        stack.extend((child, steps + 1) for child in reversed(_children(node)))


def nesting_depth(root: Any) -> int:
    """The deepest :attr:`Node.depth` in ``root``, at any nesting (no pointers are kept)."""
    deepest = 0
    stack = [(root, 1)]
    while stack:
        schema, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((value, inner) for _, value, inner, _ in _steps(schema, depth))
    return deepest


def is_object_schema(schema: Any) -> bool:
    """A schema that describes an object: ``type`` object (alone or in a list) or, without
    a ``type``, ``properties``."""
    if type(schema) is not dict:
        return False
    kind = schema.get("type")
    if kind == "object" or (type(kind) is list and "object" in kind):
        return True
    return kind is None and type(schema.get("properties")) is dict


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


_MISSING: Final = object()


def anchors_of(nodes: Iterable[Node]) -> dict[str, Any]:
    """Each ``$anchor`` name and the first subschema (in walk order) that declares it."""
    anchors: dict[str, Any] = {}
    for node in nodes:
        if type(node.schema) is dict:
            name = node.schema.get("$anchor")
            if type(name) is str:
                anchors.setdefault(name, node.schema)
    return anchors


def resolve_local(
    root: Any, ref: str, anchors: Mapping[str, Any] | None = None
) -> tuple[bool, Any]:
    """``(found, target)`` of a ``$ref`` inside ``root``: ``#``, ``#/json/pointer`` or a plain
    ``#anchor`` (``$anchor``); any other reference is external and never resolved here.
    ``anchors`` (:func:`anchors_of` the root's subschemas) saves a walk per anchor."""
    if not ref.startswith("#"):
        return False, None
    fragment = ref[1:]
    if fragment == "":
        return True, root
    if not fragment.startswith("/"):
        known = anchors_of(subschemas(root)) if anchors is None else anchors
        if fragment in known:
            return True, known[fragment]
        return False, None
    from urllib.parse import unquote

    target: Any = root
    for raw in fragment[1:].split("/"):
        token = _unescape(unquote(raw))
        if type(target) is dict:
            target = target.get(token, _MISSING)
        elif type(target) is list and token.isdigit() and int(token) < len(target):
            target = target[int(token)]
        else:
            return False, None
        if target is _MISSING:
            return False, None
    return True, target
