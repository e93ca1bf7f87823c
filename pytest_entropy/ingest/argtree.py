"""Argument trees: the guard's JSON-value check fused with the shape signature.

Shared by the generic guard (:mod:`.fabric`) and the msgspec accelerator (:mod:`.fast`).
"""

from __future__ import annotations

from typing import Any, Final

from pytest_entropy.core.fingerprint import shape_signature
from pytest_entropy.core.jscompat import MAX_SAFE_INTEGER

__all__ = [
    "INT_OVERFLOW",
    "MAX_ARGS_DEPTH",
    "MAX_FLOAT_GROWTH",
    "SignedOperation",
    "count_float",
    "safe_count",
    "signed_args",
    "value_floats",
]

MAX_ARGS_DEPTH: Final = 14
# Integers at or beyond this magnitude are ±Infinity to JavaScript (core.jscompat.js_number).
INT_OVERFLOW: Final = 2**1024 - 2**970

# One guarded operation with its shape signature: (ref, args, outcome, failure stage, signature).
SignedOperation = tuple[str, dict[str, Any], str, str | None, str]

# The longest JavaScript text of one double ("-1.2345678901234567e-123" and the like). The
# source text of a number is at least one byte, so each float can lengthen the
# serialisation by at most this much; no other JSON value can serialise longer in
# JavaScript than in valid UTF-8 source (strings only lose escapes, integers keep digits).
MAX_FLOAT_GROWTH: Final = 24
_NONE_TYPE: Final = type(None)
_FLAT_TYPES: Final = frozenset({str, int, bool, _NONE_TYPE})

# (keys in order, value types) -> signature, for args whose values are all flat scalars.
_signature_cache: dict[tuple[tuple[str, ...], tuple[type, ...]], str] = {}
_SIGNATURE_CACHE_LIMIT: Final = 8192


def _tree_floats(container: Any, depth: int) -> int:
    """Floats in a JSON value tree, or -1 if it is not one (non-finite number, foreign type,
    or a container deeper than 14 levels below ``args``)."""
    if depth > MAX_ARGS_DEPTH:
        return -1
    floats = 0
    values = container.values() if type(container) is dict else container
    for value in values:
        t = type(value)
        if t is str or t is bool or value is None:
            continue
        if t is int:
            # JavaScript reads an integer beyond the double range as Infinity (the fast
            # decoders keep it exact): not a finite number (issue 26, item 2).
            if -INT_OVERFLOW < value < INT_OVERFLOW:
                continue
            return -1
        if t is float:
            if value - value != 0.0:  # NaN or an infinity
                return -1
            floats += 1
            continue
        if t is dict or t is list:
            if value:
                inner = _tree_floats(value, depth + 1)
                if inner < 0:
                    return -1
                floats += inner
            elif depth + 1 > MAX_ARGS_DEPTH:
                return -1
            continue
        return -1
    return floats


def value_floats(value: Any) -> int:
    t = type(value)
    if t is dict or t is list:
        return _tree_floats(value, 0)
    if t is float:
        return 1 if value - value == 0.0 else -1
    if t is int:
        return 0 if -INT_OVERFLOW < value < INT_OVERFLOW else -1
    return 0 if (t is str or t is bool or value is None) else -1


def count_float(value: Any) -> int:
    """0 or 1 for a safe-count candidate (the envelope's numbers)."""
    return 1 if type(value) is float else 0


def safe_count(value: Any) -> bool:
    t = type(value)
    if t is int:
        return bool(0 <= value <= MAX_SAFE_INTEGER)
    if t is float:
        return bool(value - value == 0.0 and value == int(value) and 0 <= value <= MAX_SAFE_INTEGER)
    return False


def signed_args(args: dict[str, Any]) -> tuple[str, int] | None:
    """``(shape signature, floats)`` of a valid ``args`` tree, ``None`` if it is invalid."""
    if not args:
        return "()", 0
    types = tuple(map(type, args.values()))
    if int in types:
        for value in args.values():
            if type(value) is int and not -INT_OVERFLOW < value < INT_OVERFLOW:
                return None
    key = (tuple(args), types)
    signature = _signature_cache.get(key)
    if signature is not None:
        return signature, 0
    if _FLAT_TYPES.issuperset(types):
        signature = shape_signature(args)
        if len(_signature_cache) >= _SIGNATURE_CACHE_LIMIT:
            _signature_cache.clear()
        _signature_cache[key] = signature
        return signature, 0
    floats = _tree_floats(args, 0)
    if floats < 0:
        return None
    return shape_signature(args), floats
