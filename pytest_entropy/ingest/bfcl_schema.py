"""BFCL's schema dialect -> JSON Schema.

BFCL function docs look like JSON Schema but name types the Python (and Java, JavaScript)
way. The mapping, applied to every ``type`` in the tree (``properties``, ``items``,
``additionalProperties``, ``anyOf``/``oneOf``/``allOf`` branches):

========================================  ==========================================
BFCL ``type``                              JSON Schema
========================================  ==========================================
``dict``, ``HashMap``, ``Hashtable``,      ``object``
``Map``, ``object``
``float``, ``double``, ``Double``,         ``number``
``Float``, ``number``
``integer``, ``int``, ``long``, ``Long``,  ``integer``
``short``, ``byte``, ``Integer``
``tuple``, ``Array``, ``ArrayList``,       ``array``
``List``, ``list``, ``array``
``String``, ``char``, ``str``, ``string``  ``string``
``Boolean``, ``bool``, ``boolean``         ``boolean``
``any``, ``Any``, ``""``, anything else    no ``type`` (any value)
========================================  ==========================================

Every other keyword is kept as written (BFCL's own ``optional`` and misspelt ``requried``
keys are unknown keywords, which validators and static freedom ignore).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, Final


__all__ = ["BFCL_TYPES", "bfcl_to_json_schema", "uses_bfcl_dialect"]

BFCL_TYPES: Final = {
    **dict.fromkeys(("dict", "HashMap", "Hashtable", "Map", "object"), "object"),
    **dict.fromkeys(("float", "double", "Double", "Float", "number"), "number"),
    **dict.fromkeys(("integer", "int", "long", "Long", "short", "byte", "Integer"), "integer"),
    **dict.fromkeys(("tuple", "Array", "ArrayList", "List", "list", "array"), "array"),
    **dict.fromkeys(("String", "char", "str", "string"), "string"),
    **dict.fromkeys(("Boolean", "bool", "boolean"), "boolean"),
}
_STANDARD: Final = frozenset({"object", "number", "integer", "array", "string", "boolean", "null"})
_SCHEMA_LISTS: Final = ("anyOf", "oneOf", "allOf")
_SCHEMA_VALUES: Final = ("items", "additionalProperties")


def bfcl_to_json_schema(schema: Any) -> Any:
    """A copy of a BFCL parameter schema in standard JSON Schema types (see the table),
    at any nesting depth."""
    from pytest_entropy.core.tree_map import map_tree

    return map_tree(schema, _copy_bfcl_node)


def _copy_bfcl_node(schema: Any, pending: list[tuple[Any, Any, Any]]) -> Any:
    from pytest_entropy.core.tree_map import later_list, later_map

    if type(schema) is not dict:
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            mapped = BFCL_TYPES.get(value) if type(value) is str else None
            if mapped is not None:
                out[key] = mapped
            elif type(value) is list:
                kinds = [
                    BFCL_TYPES.get(item, item)
                    for item in value
                    if type(item) is str and (item in BFCL_TYPES or item == "null")
                ]
                if kinds:
                    out[key] = kinds
        elif key == "properties" and type(value) is dict:
            out[key] = later_map(value, pending)
        elif key in _SCHEMA_VALUES:
            out[key] = None
            pending.append((out, key, value))
        elif key in _SCHEMA_LISTS and type(value) is list:
            out[key] = later_list(value, pending)
        else:
            out[key] = value
    return out


def uses_bfcl_dialect(schema: Any) -> bool:
    """Whether a schema names a type outside JSON Schema's (``dict``, ``float``, ...)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if type(node) is not dict:
            continue
        kind = node.get("type")
        if type(kind) is str and kind not in _STANDARD:
            return True
        properties = node.get("properties")
        if type(properties) is dict:
            stack.extend(properties.values())
        for key in _SCHEMA_VALUES:
            stack.append(node.get(key))
        for key in _SCHEMA_LISTS:
            if type(node.get(key)) is list:
                stack.extend(node[key])
    return False
