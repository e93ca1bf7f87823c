"""Schemas without their annotations, and whether two schemas are the same once stripped.

An annotation (a title, a description, an example) says nothing about which values a schema
accepts, so the containment check compares schemas with them taken out
(:func:`strip_annotations`, :func:`same_schema`), and :class:`StrippedDigests` answers the
same question node by node when a check asks it about every level of a deep schema.
"""

from __future__ import annotations

from typing import Any, Final

from pytest_entropy.core.canonical import canonical_json

__all__ = ["ANNOTATION_KEYWORDS", "StrippedDigests", "same_schema", "strip_annotations"]

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
        # OpenAPI's hint for a oneOf; validators decide by the branches alone.
        "discriminator",
    }
)


# Where a value sits, for what stripping does to it: a schema (annotations go), a map of
# names to schemas (``properties``: every name stays), or a verbatim value (``enum``).
_SCHEMA, _NAMES, _VERBATIM = 0, 1, 2
_NAMED_SCHEMAS: Final = ("properties", "patternProperties", "$defs", "definitions")


def strip_annotations(schema: Any) -> Any:
    """The schema without annotation keywords at any depth (``properties`` names kept)."""
    from pytest_entropy.core.tree_map import map_tree

    return map_tree((schema, _SCHEMA), _strip_node)


def _strip_node(item: tuple[Any, int], pending: list[tuple[Any, Any, Any]]) -> Any:
    """One node's copy as :func:`_stripped_members` keeps it: a verbatim value stays the
    very object, every other member is queued with where it sits."""
    node, where = item
    members = _stripped_members(node, where)
    if members is None:
        return node
    out: Any = [None] * len(node) if type(node) is list else {}
    for key, child, inner in members:
        out[key] = child if inner == _VERBATIM else None
        if inner != _VERBATIM:
            pending.append((out, key, (child, inner)))
    return out


def same_schema(a: Any, b: Any) -> bool:
    return a is b or canonical_json(strip_annotations(a)) == canonical_json(strip_annotations(b))


class StrippedDigests:
    """Digests of schemas as :func:`same_schema` compares them (annotations stripped), each
    node hashed once however often it is asked about.

    Two schemas have the same digest exactly when their stripped canonical texts are equal
    (up to SHA-256 collisions): a map's digest hashes its members' key texts, sorted, with
    their values' digests; a list's, its items' digests in order; a scalar's, its canonical
    text. A containment check compares the same subtrees level after level; with
    :func:`same_schema` each comparison wrote both subtrees out again, so a schema nested
    10,000 levels took ten seconds to compare with itself.
    """

    __slots__ = ("_held", "_memo")

    def __init__(self) -> None:
        self._memo: dict[tuple[int, int], str] = {}
        self._held: list[Any] = []  # the ids of the memo stay those of these objects

    def same(self, a: Any, b: Any) -> bool:
        return a is b or self.of(a) == self.of(b)

    def of(self, schema: Any) -> str:
        """The digest of ``schema`` stripped of its annotations."""
        from pytest_entropy.core.canonical import json_string, sha256

        memo = self._memo
        root = (id(schema), _SCHEMA)
        stack: list[tuple[Any, int, bool]] = [(schema, _SCHEMA, False)]
        while stack:
            node, where, expanded = stack.pop()
            key = (id(node), where)
            if key in memo:
                continue
            members = _stripped_members(node, where)
            if members is None:
                text = canonical_json(node)
            elif not expanded:
                stack.append((node, where, True))
                stack.extend((child, inner, False) for _, child, inner in members)
                continue
            elif type(node) is dict:
                pairs = sorted(
                    (json_string(name), memo[(id(child), inner)]) for name, child, inner in members
                )
                text = "{" + ",".join(f"{name}:{digest}" for name, digest in pairs) + "}"
            else:
                text = "[" + ",".join(memo[(id(child), inner)] for _, child, inner in members) + "]"
            memo[key] = sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
            self._held.append(node)
        return memo[root]


def _stripped_members(node: Any, where: int) -> list[tuple[Any, Any, int]] | None:
    """What stripping keeps of a container, ``(key, value, where)`` each (``None``: not a
    container): the one statement of the rules, which :func:`strip_annotations` and
    :class:`StrippedDigests` both follow."""
    if type(node) is list:
        return [
            (index, item, _VERBATIM if where == _VERBATIM else _SCHEMA)
            for index, item in enumerate(node)
        ]
    if type(node) is not dict:
        return None
    if where == _VERBATIM:
        return [(name, value, _VERBATIM) for name, value in node.items()]
    if where == _NAMES:
        return [(name, value, _SCHEMA) for name, value in node.items()]
    kept: list[tuple[Any, Any, int]] = []
    for name, value in node.items():
        if name in _NAMED_SCHEMAS and type(value) is dict:
            kept.append((name, value, _NAMES))
        elif name in ("enum", "const"):
            kept.append((name, value, _VERBATIM))
        elif name not in ANNOTATION_KEYWORDS or name in ("$defs", "definitions"):
            kept.append((name, value, _SCHEMA))
    return kept
