"""Rebuilding a nested schema without recursion.

The dialect mappings (BFCL's Python-style types, Gemini's upper-case OpenAPI subset) and the
annotation stripping of the containment check copy a schema tree while changing some of its
values. A surface file may nest far beyond Python's recursion limit (a 35 KB file holds a
thousand levels) and the parsers take any depth, so these copies walk the tree with an
explicit stack.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    # A node's copy, and the places its children's copies go: (container, key, child).
    Pending = list[tuple[Any, Any, Any]]


__all__ = ["later_list", "later_map", "map_tree"]


def map_tree(root: Any, copy_node: Callable[[Any, Pending], Any]) -> Any:
    """The copy of ``root`` that ``copy_node`` builds node by node.

    ``copy_node(node, pending)`` returns the node's own copy, holding placeholders where
    children go, and appends ``(container, key, child)`` for each child to copy; the child's
    copy is then stored as ``container[key]``. Key order is the copy's own, so a node's
    copy keeps the order its ``copy_node`` wrote.
    """
    holder: list[Any] = [None]
    stack: Pending = [(holder, 0, root)]
    while stack:
        container, key, node = stack.pop()
        pending: Pending = []
        container[key] = copy_node(node, pending)
        stack.extend(pending)
    return holder[0]


def later_list(items: list[Any], pending: Pending) -> list[Any]:
    """Placeholders for ``items``, each queued in ``pending`` to be copied into its place."""
    out: list[Any] = [None] * len(items)
    pending.extend((out, index, item) for index, item in enumerate(items))
    return out


def later_map(mapping: dict[str, Any], pending: Pending) -> dict[str, Any]:
    """Placeholders for a map of names (in its key order), each value queued as above."""
    out: dict[str, Any] = dict.fromkeys(mapping)
    pending.extend((out, name, item) for name, item in mapping.items())
    return out
