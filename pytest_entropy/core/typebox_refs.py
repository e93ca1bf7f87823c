"""``$ref`` resolution as TypeBox 1.3.8 does it (``schema/resolve/ref.mjs``, ``schema/pointer``).

TypeBox resolves a ref inside the schema it is given and nowhere else: it never fetches. The
target is searched by walking the whole schema (every object and array under it, in key
order): a node matches when its ``$id`` names the ref's path, its ``$anchor`` or
``$dynamicAnchor`` names the ref, or the ref's JSON-pointer fragment resolves *from that node*.
The last match of the walk wins, after the root's own match. So a ``#/$defs/a`` the root does
not hold can still resolve to a ``$defs/a`` nested deeper, and ``other.json#/$defs/a``
resolves against the schema itself. A ref that resolves to nothing fails the value.

URLs are joined with :func:`urllib.parse.urljoin` against TypeBox's ``http://unknown/`` base;
the WHATWG parser TypeBox uses gives the same joins for the refs schemas use (fragments,
relative names, absolute URLs).
"""

from __future__ import annotations

import re
from typing import Any, Final
from urllib.parse import urljoin, urlsplit

from pytest_entropy.core.typebox_values import JS_FUNCTION, PROTOTYPE_KEYS

__all__ = ["UNDEFINED", "decode_uri_component", "resolve_ref"]


class _Undefined:
    __slots__ = ()

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED: Final = _Undefined()
_DEFAULT_BASE: Final = "http://unknown/"
_UNSAFE: Final = frozenset({"__proto__", "constructor", "prototype"})
_INDEX: Final = re.compile(r"(?:0|[1-9][0-9]*)\Z")


class RefError(Exception):
    """What JavaScript throws while resolving (a malformed percent escape)."""


def decode_uri_component(text: str) -> str:
    """JavaScript's ``decodeURIComponent``: a ``%`` not starting a UTF-8 sequence throws."""
    if "%" not in text:
        return text
    out = bytearray()
    pieces: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "%":
            digits = text[index + 1 : index + 3]
            if len(digits) != 2 or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise RefError(f"URI malformed: {text!r}")
            out.append(int(digits, 16))
            index += 3
            continue
        if out:
            pieces.append(_utf8(out, text))
            out = bytearray()
        pieces.append(char)
        index += 1
    if out:
        pieces.append(_utf8(out, text))
    return "".join(pieces)


def _utf8(data: bytearray, text: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RefError(f"URI malformed: {text!r}") from error


def _is_id(node: Any) -> bool:
    return type(node) is dict and type(node.get("$id")) is str


def _hash(href: str) -> str:
    fragment = urlsplit(href).fragment
    return "#" + fragment if fragment else ""


def _pathname(href: str) -> str:
    return urlsplit(href).path or "/"


def pointer_get(value: Any, pointer: str) -> Any:
    """TypeBox ``Pointer.Get``: ``value[index]`` step by step (``undefined`` past a
    non-object or an unsafe key; an inherited method is a function)."""
    if pointer == "":
        return value
    indices = [part.replace("~1", "/").replace("~0", "~") for part in pointer.split("/")]
    if indices and indices[0] == "":
        indices = indices[1:]
    current = value
    for index in indices:
        if index in _UNSAFE:
            return UNDEFINED
        if type(current) is dict:
            if index in current:
                current = current[index]
            elif index in PROTOTYPE_KEYS:
                current = JS_FUNCTION
            else:
                return UNDEFINED
        elif type(current) is list:
            if _INDEX.match(index) and int(index) < len(current):
                current = current[int(index)]
            elif index == "length":
                current = len(current)
            else:
                return UNDEFINED
        else:
            return UNDEFINED
    return current


def _match_hash(node: dict[str, Any], href: str) -> Any:
    if href.endswith("#"):
        return node
    fragment = _hash(href)
    if not fragment.startswith("#"):
        return UNDEFINED
    pointer = decode_uri_component(fragment[1:])
    if not pointer.startswith("/"):
        return UNDEFINED
    return pointer_get(node, pointer)


def _match(node: dict[str, Any], base: str, href: str) -> Any:
    if _is_id(node):
        if node["$id"] == _hash(href):
            return node
        if _pathname(urljoin(base, node["$id"])) == _pathname(urljoin(base, href)):
            if _hash(href).startswith("#"):
                found = _match_hash(node, href)
                if found is not UNDEFINED:
                    return found
            else:
                return node
    for keyword in ("$anchor", "$dynamicAnchor"):
        anchor = node.get(keyword)
        if type(anchor) is str and urljoin(base, "#" + anchor) == href:
            return node
    return _match_hash(node, href)


def _from_value(node: Any, base: str, href: str) -> Any:
    kind = type(node)
    if kind is dict:
        if _is_id(node):
            base = urljoin(base, node["$id"])
        found = _match(node, base, href)
        if found is not UNDEFINED:
            return found
        result: Any = UNDEFINED
        for child in node.values():
            match = _from_value(child, base, href)
            if match is not UNDEFINED:
                result = match
        return result
    if kind is list:
        result = UNDEFINED
        for child in node:
            match = _from_value(child, base, href)
            if match is not UNDEFINED:
                result = match
        return result
    return UNDEFINED


def resolve_ref(schema: Any, ref: str) -> Any:
    """TypeBox ``Resolve.Ref(schema, ref)``: the node ``ref`` names inside ``schema``, or
    :data:`UNDEFINED`."""
    base = urljoin(_DEFAULT_BASE, schema["$id"]) if _is_id(schema) else _DEFAULT_BASE
    return _from_value(schema, base, _join(base, ref))


def _join(base: str, ref: str) -> str:
    # new URL(ref, base).href keeps an empty fragment ("#"), which urljoin drops.
    href = urljoin(base, ref)
    return href + "#" if ref.endswith("#") and not href.endswith("#") else href


def fragment_of(ref: str) -> str:
    """``new URL(ref, "http://unknown/").hash``."""
    return _hash(_join(_DEFAULT_BASE, ref))
