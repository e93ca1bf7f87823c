"""Stable JSON hashing and the reference's JSON text forms (spec §2.7-§2.8).

Three writers share one escaping and number formatter:

* :func:`canonical_json` - keys collated by ICU (root/en-US, as JavaScript
  ``localeCompare``), array-index keys first; this is the text every digest hashes.
* :func:`js_stringify` - compact ``JSON.stringify`` in own-key order (trace size bound,
  review keys).
* :func:`file_text` - ``JSON.stringify(value, null, 2) + "\\n"`` in own-key order, the byte
  format of artifact, pool, snapshot and certification files.

Where the Rust core is in use (:func:`~pytest_entropy.core.native_core.core`) each
writer first asks it (``native/src/python_writer.rs``), which writes exact dicts, lists,
tuples and JSON scalars (asking :func:`_icu_positions` for a key set only ICU orders) and
returns ``None`` for anything else (subclasses, cycles, deep nesting). The Python below is
the specification and writes the rest; it walks the value with an explicit stack, so
hostile nesting cannot exhaust Python's recursion limit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

from pytest_entropy.core.ascii_collation import ascii_collation_key
from pytest_entropy.core.jscompat import (
    is_array_index_key,
    is_finite_number,
    js_own_keys,
    js_string,
)
from pytest_entropy.core.native_core import core
from pytest_entropy.core.versions import icu_version

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, Final, Protocol

    class Hasher(Protocol):
        """What :func:`sha256` gives: ``hashlib``'s interface, as far as it is used."""

        def update(self, data: bytes, /) -> None: ...

        def copy(self) -> Hasher: ...

        def hexdigest(self) -> str: ...


__all__ = [
    "EMPTY_ARRAY_DIGEST",
    "EXPORT_INDENT_DEPTH",
    "ArrayHasher",
    "CanonicalError",
    "array_fragment",
    "canonical_json",
    "collation_sort_key",
    "file_bytes",
    "file_text",
    "icu_version",
    "js_stringify",
    "json_copy",
    "json_string",
    "schema_digest",
    "sha256",
    "stable_json_hash",
    "stable_json_hash_array",
]

EMPTY_ARRAY_DIGEST = "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"


class CanonicalError(ValueError):
    """A value that has no JSON form (a set, an object of another type, a cycle)."""


# ------------------------------------------------------------------------ collation


@lru_cache(maxsize=1)
def _get_collator() -> Any:
    import icu  # provided by the pyicu-wheels distribution

    collator = icu.Collator.createInstance(icu.Locale("en_US"))
    # V8 turns normalisation on for localeCompare (ECMA-402: canonically equivalent
    # strings compare equal), so "A\u030a" and "\u00c5" tie and keep their order.
    collator.setAttribute(icu.UCollAttribute.NORMALIZATION_MODE, icu.UCollAttributeValue.ON)
    return collator


@lru_cache(maxsize=65536)
def collation_sort_key(key: str) -> bytes:
    """ICU sort key of an object key, as ``localeCompare`` orders it."""
    return bytes(_get_collator().getSortKey(key))


def _canonical_keys(obj: dict[str, Any] | tuple[str, ...]) -> Sequence[str]:
    keys = tuple(obj)
    if len(keys) <= 1:
        return keys
    if len(keys) <= _CACHED_KEY_SET_SIZE:
        # Objects of one kind share their key set: order each distinct set once.
        return _ordered_key_set(keys)
    return _order_keys(keys)


_CACHED_KEY_SET_SIZE = 16


def _icu_positions(keys: tuple[str, ...]) -> list[int]:
    """The positions of ``keys`` in canonical order: what the Rust core asks for a key set
    it cannot order itself (not all printable ASCII), so that ICU stays here."""
    position = {key: at for at, key in enumerate(keys)}
    return [position[key] for key in _canonical_keys(keys)]


@lru_cache(maxsize=4096)
def _ordered_key_set(keys: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(_order_keys(keys))


def _order_keys(keys: tuple[str, ...]) -> list[str]:
    index_keys = [k for k in keys if k[:1].isdigit() and is_array_index_key(k)]
    if index_keys:
        index_set = set(index_keys)
        rest = [k for k in keys if k not in index_set]
        index_keys.sort(key=int)
    else:
        rest = list(keys)
    joined = "".join(rest)
    if joined.isascii() and joined.isprintable():
        # Printable ASCII only: ICU's order without loading ICU (distinct keys never tie;
        # tests/property/test_canonical_routes.py compares the two keys).
        rest.sort(key=ascii_collation_key)
    else:
        # A stable sort: keys that collate equal keep their own-key (insertion) order.
        rest.sort(key=collation_sort_key)
    return index_keys + rest if index_keys else rest


# ------------------------------------------------------------------------- escaping

# Quote, backslash and the controls; lone surrogates are found apart (_has_surrogate): a
# character class that spans the surrogates costs millions of instructions to compile, on
# every command that writes JSON (issue 32).
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')


def _has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point: the only characters UTF-8 cannot encode."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _escape_surrogates(text: str) -> str:
    """Escape lone surrogates as ``\\udxxx``; a high+low pair is one character (JavaScript)."""
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        cp = ord(ch)
        if 0xD800 <= cp <= 0xDBFF and i + 1 < n and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
            low = ord(text[i + 1])
            out.append(chr(0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)))
            i += 2
            continue
        if 0xD800 <= cp <= 0xDFFF:
            out.append(f"\\u{cp:04x}")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def json_string(s: str) -> str:
    """A JSON string literal exactly as ``JSON.stringify`` writes it."""
    if _NEEDS_ESCAPE.search(s) or _has_surrogate(s):
        return _plain_json_string(s)
    return '"' + s + '"'


def _plain_json_string(s: str) -> str:
    # The json module escapes as JSON.stringify does (quote, backslash, the short forms and
    # lowercase \u00XX for the other controls) but passes lone surrogates through.
    import json  # here: where the core writes, a command may never escape a string here

    text = json.dumps(s, ensure_ascii=False)
    if _has_surrogate(text):
        text = _escape_surrogates(text)
    return text


def _number_text(value: Any) -> str:
    if type(value) is float and not math.isfinite(value):
        return "null"
    if type(value) is int and not is_finite_number(value):
        return "null"  # JSON.stringify(Infinity): an int beyond the double range
    return js_string(value)


# -------------------------------------------------------------------------- writers

_CANONICAL = 0
_OWN = 1


# Values nested deeper than this are written by the iterative writer (hostile inputs nest
# 10**4 deep; ordinary records rarely pass 10).
_FAST_DEPTH = 48


class _Fallback(Exception):
    """The fast writer met something only the general writer handles."""


def _write_fast(value: Any, order: int, append: Callable[[str], None], depth: int) -> None:
    """The common case, recursively: plain dicts, lists and primitives, shallow."""
    t = type(value)
    if t is str:
        append(json_string(value))
    elif t is dict:
        if not value:
            append("{}")
            return
        if depth >= _FAST_DEPTH:
            raise _Fallback
        keys = tuple(value)
        if len(keys) <= _CACHED_KEY_SET_SIZE:
            entries = _key_entries(keys, order)
        else:
            entries = _entries(_order_keys(keys) if order == _CANONICAL else js_own_keys(value))
        for key, prefix in entries:
            append(prefix)
            _write_fast(value[key], order, append, depth + 1)
        append("}")
    elif t is list:
        if not value:
            append("[]")
            return
        if depth >= _FAST_DEPTH:
            raise _Fallback
        separator = "["
        for item in value:
            append(separator)
            _write_fast(item, order, append, depth + 1)
            separator = ","
        append("]")
    elif value is None:
        append("null")
    elif value is True:
        append("true")
    elif value is False:
        append("false")
    elif t is int or t is float:
        append(_number_text(value))
    else:
        raise _Fallback


def _entries(keys: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``(key, text written before its value)`` for keys in writing order."""
    return tuple(
        (key, ("," if index else "{") + json_string(key) + ":") for index, key in enumerate(keys)
    )


@lru_cache(maxsize=4096)
def _key_entries(keys: tuple[str, ...], order: int) -> tuple[tuple[str, str], ...]:
    """:func:`_entries` of one key set in either order, computed once per distinct set."""
    if order == _CANONICAL:
        return _entries(_order_keys(keys) if len(keys) > 1 else keys)
    return _entries(js_own_keys(dict.fromkeys(keys)))


def _write_compact(value: Any, order: int) -> str:
    fast: list[str] = []
    try:
        _write_fast(value, order, fast.append, 0)
    except _Fallback:
        return _write_general(value, order)
    return "".join(fast)


def _write_general(value: Any, order: int) -> str:
    parts: list[str] = []
    append = parts.append
    # Stack items: ("v", value) to write a value, or ("s", text) to write literal text.
    stack: list[tuple[bool, Any]] = [(True, value)]
    seen: set[int] = set()
    # The plain copies of subclassed containers, alive until the end: a freed copy's id
    # could be taken by the next copy while still in ``seen`` (a cycle that is not there).
    copies: list[Any] = []
    pop = stack.pop
    push = stack.append
    while stack:
        is_value, item = pop()
        if not is_value:
            if type(item) is int:  # leaving a container
                seen.discard(item)
                continue
            append(item)
            continue
        t = type(item)
        if t is str:
            append(json_string(item))
        elif item is None:
            append("null")
        elif item is True:
            append("true")
        elif item is False:
            append("false")
        elif t is int or t is float:
            append(_number_text(item))
        elif t is dict:
            ident = id(item)
            if ident in seen:
                raise CanonicalError("cannot serialise a cyclic structure")
            if not item:
                append("{}")
                continue
            seen.add(ident)
            keys = _canonical_keys(item) if order == _CANONICAL else js_own_keys(item)
            push((False, ident))
            push((False, "}"))
            for index in range(len(keys) - 1, -1, -1):
                key = keys[index]
                push((True, item[key]))
                push((False, ("," if index else "{") + json_string(key) + ":"))
        elif t is list or t is tuple:
            ident = id(item)
            if ident in seen:
                raise CanonicalError("cannot serialise a cyclic structure")
            if not item:
                append("[]")
                continue
            seen.add(ident)
            push((False, ident))
            push((False, "]"))
            for index in range(len(item) - 1, -1, -1):
                push((True, item[index]))
                push((False, "," if index else "["))
        elif isinstance(item, bool):
            append("true" if item else "false")
        elif isinstance(item, int | float):
            append(_number_text(item))
        elif isinstance(item, str):
            append(json_string(item))
        elif isinstance(item, dict):
            copies.append(dict(item))
            push((True, copies[-1]))
        elif isinstance(item, list | tuple):
            copies.append(list(item))
            push((True, copies[-1]))
        else:
            raise CanonicalError(f"{type(item).__name__} has no JSON form")
    return "".join(parts)


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON value without recursion (hostile schemas nest 10**4 deep)."""
    if type(value) is not dict and type(value) is not list:
        return value
    root: Any = {} if type(value) is dict else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if type(source) is dict else enumerate(source)
        for key, item in items:
            if type(item) is dict or type(item) is list:
                child: Any = {} if type(item) is dict else []
                stack.append((item, child))
            else:
                child = item
            if type(target) is dict:
                target[key] = child
            else:
                target.append(child)
    return root


def _native_text(writer: str, value: Any, *options: Any) -> Any:
    """The Rust core's ``writer`` (``python_writer.rs``) applied to ``value``, or ``None``
    where the Python writer must run: no core in use, or a value the core leaves to it."""
    native = core()
    if native is None:
        return None
    return getattr(native, writer)(value, *options)


def canonical_json(value: Any) -> str:
    """``JSON.stringify(canon(value))``: the exact text :func:`stable_json_hash` hashes."""
    text = _native_text("canonical_json", value, _icu_positions)
    return _write_compact(value, _CANONICAL) if text is None else text


def js_stringify(value: Any) -> str:
    """Compact ``JSON.stringify(value)`` in JavaScript own-key order."""
    text = _native_text("js_stringify", value)
    return _write_compact(value, _OWN) if text is None else text


def stable_json_hash(value: Any) -> str:
    """Lowercase hex SHA-256 of the canonical JSON text (spec §2.7).

    >>> stable_json_hash([])
    '4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945'
    """
    # The core hashes what it writes: a command that hashes nothing else never loads
    # hashlib (and with it OpenSSL's libcrypto), a tenth of a demo measure's start (issue 32).
    digest = _native_text("stable_json_hash", value, _icu_positions)
    if digest is not None:
        return digest  # type: ignore[no-any-return]
    return sha256(_canonical_bytes(value)).hexdigest()


def sha256(data: bytes = b"") -> Hasher:
    """A SHA-256 hasher (``update``, ``hexdigest``) holding ``data``: the Rust core's where
    it is in use, so a command never loads hashlib (and OpenSSL's libcrypto, about 4 MB of
    its peak memory) to hash, else hashlib's."""
    native = core()
    if native is not None:
        return native.Sha256(data)  # type: ignore[no-any-return]
    import hashlib

    return hashlib.sha256(data)


def _canonical_bytes(value: Any) -> bytes:
    """``canonical_json(value)`` in UTF-8."""
    data = _native_text("canonical_json_bytes", value, _icu_positions)
    return _write_compact(value, _CANONICAL).encode("utf-8") if data is None else data


def stable_json_hash_array(items: Any) -> str:
    """Hash of a large array written item by item; equals ``stable_json_hash(list(items))``."""
    digest = sha256()
    digest.update(b"[")
    first = True
    for item in items:
        if not first:
            digest.update(b",")
        first = False
        digest.update(_canonical_bytes(item))
    digest.update(b"]")
    return digest.hexdigest()


class ArrayHasher:
    """``stable_json_hash`` of an array fed in pieces: canonical JSON fragments of
    consecutive items (``canonical_json(a) + "," + canonical_json(b)``), so the items can be
    serialised where they are read and hashed, in order, elsewhere.

    >>> hasher = ArrayHasher()
    >>> hasher.add_fragment(canonical_json(1) + "," + canonical_json("a"))
    >>> hasher.hexdigest() == stable_json_hash([1, "a"])
    True
    """

    __slots__ = ("_digest", "_empty")

    def __init__(self) -> None:
        self._digest = sha256(b"[")
        self._empty = True

    def add_fragment(self, fragment: str) -> None:
        """Append one or more items (canonical JSON joined by ``,``); ``""`` adds nothing."""
        if not fragment:
            return
        if not self._empty:
            self._digest.update(b",")
        self._empty = False
        self._digest.update(fragment.encode("utf-8"))

    def hexdigest(self) -> str:
        digest = self._digest.copy()
        digest.update(b"]")
        return digest.hexdigest()


def array_fragment(items: Iterable[Any]) -> str:
    """The canonical JSON of ``items`` joined by ``,``: an :class:`ArrayHasher` fragment."""
    return ",".join(canonical_json(item) for item in items)


def schema_digest(schema: Any) -> str:
    """``schema_digest``: the stable hash of a JSON Schema (spec §2.7.4)."""
    return stable_json_hash(schema)


# `export` indents this many levels and writes any container nested deeper compact: two
# spaces per level make indented bytes grow with the square of the depth (docs/decisions.md).
EXPORT_INDENT_DEPTH: Final = 32


def file_text(value: Any, *, indent_depth: int | None = None) -> str:
    """``JSON.stringify(value, null, 2) + "\\n"`` in own-key order (spec §2.8).

    With ``indent_depth``, a container inside ``indent_depth`` others is written compact
    (``JSON.stringify(container)``), so the text grows linearly with the depth beyond it;
    a value nested no deeper keeps exactly the indented bytes.
    """
    text = _native_text("file_text", value, indent_depth)
    return _plain_file_text(value, indent_depth) if text is None else text


def file_bytes(value: Any, *, indent_depth: int | None = None) -> bytes:
    """:func:`file_text` in UTF-8 (what a state file holds), written as bytes by the core."""
    data = _native_text("file_bytes", value, indent_depth)
    if data is None:
        return _plain_file_text(value, indent_depth).encode("utf-8")
    return data  # type: ignore[no-any-return]


def _plain_file_text(value: Any, indent_depth: int | None) -> str:
    parts: list[str] = []
    append = parts.append
    stack: list[tuple[bool, Any, int]] = [(True, value, 0)]
    seen: set[int] = set()
    while stack:
        is_value, item, depth = stack.pop()
        if not is_value:
            if type(item) is int:
                seen.discard(item)
            else:
                append(item)
            continue
        t = type(item)
        if t is dict or t is list or t is tuple:
            ident = id(item)
            if ident in seen:
                raise CanonicalError("cannot serialise a cyclic structure")
            if not item:
                append("{}" if t is dict else "[]")
                continue
            if indent_depth is not None and depth >= indent_depth:
                append(_write_compact(item, _OWN))
                continue
            seen.add(ident)
            inner = "\n" + "  " * (depth + 1)
            stack.append((False, ident, depth))
            stack.append((False, "\n" + "  " * depth + ("}" if t is dict else "]"), depth))
            if t is dict:
                keys = js_own_keys(item)
                for index in range(len(keys) - 1, -1, -1):
                    key = keys[index]
                    stack.append((True, item[key], depth + 1))
                    opener = ("," if index else "{") + inner
                    stack.append((False, opener + json_string(key) + ": ", depth))
            else:
                for index in range(len(item) - 1, -1, -1):
                    stack.append((True, item[index], depth + 1))
                    stack.append((False, ("," if index else "[") + inner, depth))
        else:
            append(_write_compact(item, _OWN))
    append("\n")
    return "".join(parts)
