"""JavaScript values as TypeBox 1.3.8 sees them: numbers, equality, string length, hashing.

The reference judges a recorded call with TypeBox's ``Value.Check`` on the value
``JSON.parse`` produced. Python's decoded JSON differs from that value in three ways these
helpers undo: an integer is exact where JavaScript holds a double (``9007199254740993`` is
``9007199254740992`` there), a string is code points where JavaScript counts UTF-16 code units,
and an object's missing key may still be "in" a JavaScript object through its prototype.
Each function names the TypeBox behaviour it reproduces (``guard/guard.mjs``,
``guard/string.mjs``, ``system/hashing/hash.mjs`` of the published package).
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable
from typing import Any, Final

__all__ = [
    "JS_FUNCTION",
    "PROTOTYPE_KEYS",
    "enum_check",
    "has_property_key",
    "is_integer",
    "is_number",
    "js_equal",
    "js_number",
    "max_length",
    "min_length",
    "multiple_of",
    "property_value",
    "unique_items",
]


class _JsFunction:
    """What ``value[key]`` is in JavaScript for a key that only the prototype has
    (``toString``, ``valueOf``, ...): a function, which no JSON schema keyword accepts as a
    string, number, object or array."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<JavaScript function>"


JS_FUNCTION: Final = _JsFunction()

# Object.getOwnPropertyNames(Object.prototype) in Node 20, less `constructor` and
# `__proto__`, which TypeBox's HasPropertyKey checks as own keys (IsUnsafePropertyKey).
# Every other name is found by its `key in value` through the prototype chain.
PROTOTYPE_KEYS: Final = frozenset(
    {
        "__defineGetter__",
        "__defineSetter__",
        "__lookupGetter__",
        "__lookupSetter__",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "toLocaleString",
        "toString",
        "valueOf",
    }
)


def has_property_key(value: dict[str, Any], key: str) -> bool:
    """TypeBox ``Guard.HasPropertyKey`` on a parsed JSON object: ``key in value``, so the
    inherited ``Object.prototype`` methods are present on every object."""
    return key in value or key in PROTOTYPE_KEYS


def property_value(value: dict[str, Any], key: str) -> Any:
    """``value[key]`` for a key :func:`has_property_key` found."""
    if key in value:
        return value[key]
    return JS_FUNCTION


def js_number(value: int | float) -> float:
    """The double JavaScript's ``JSON.parse`` holds for a decoded number: an integer is
    rounded to the nearest double (ties to even, as both parsers do); one beyond the double
    range is ``±Infinity``."""
    if type(value) is float:
        return value
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def is_number(value: Any) -> bool:
    """TypeBox ``IsNumber`` (``Number.isFinite``): a finite number, never a boolean."""
    kind = type(value)
    if kind is float:
        return math.isfinite(value)
    if kind is int:
        return math.isfinite(js_number(value))
    return False


def is_integer(value: Any) -> bool:
    """TypeBox ``IsInteger`` (``Number.isInteger``): a finite number without a fraction."""
    kind = type(value)
    if kind is int:
        return math.isfinite(js_number(value))
    if kind is float:
        return math.isfinite(value) and value.is_integer()
    return False


def multiple_of(dividend: float, divisor: float) -> bool:
    """TypeBox ``IsMultipleOf`` on doubles: an integer dividend passes when ``1 / divisor``
    is an integer (so every integer is a multiple of ``0.1``); otherwise the remainder
    (JavaScript's ``%``, which keeps the dividend's sign) must be within ``1e-10`` of 0 or
    of ``±divisor``. A zero divisor gives NaN on both tests: nothing passes."""
    if not math.isfinite(dividend):
        return True  # `!IsNumber(dividend)` passes (unreachable from CheckSchema)
    if divisor == 0:
        return False  # 1/0 % 1 and x % 0 are NaN
    if dividend.is_integer():
        inverse = 1.0 / divisor
        if math.isfinite(inverse) and math.fmod(inverse, 1.0) == 0:
            return True
    # x % Infinity is x
    remainder = dividend if math.isinf(divisor) else math.fmod(dividend, divisor)
    return min(abs(remainder), abs(remainder - divisor), abs(remainder + divisor)) < 1e-10


def js_equal(left: Any, right: Any) -> bool:
    """TypeBox's ``IsEqual``/``IsDeepEqual`` as ``enum`` and ``const`` use them on JSON values:
    ``===`` on primitives (numbers as doubles, so ``-0`` equals ``0`` and integers beyond
    2**53 meet their double), element by element on arrays, key by key on objects (an
    object never equals an array: an array's own keys include ``length``)."""
    kind = type(left)
    if kind is str or left is None:
        return left == right and type(right) is kind
    if kind is bool:
        return type(right) is bool and left is right
    if kind is int or kind is float:
        other = type(right)
        if other is not int and other is not float:
            return False
        return js_number(left) == js_number(right)
    if kind is list:
        if type(right) is not list or len(right) != len(left):
            return False
        return all(js_equal(a, b) for a, b in zip(left, right, strict=True))
    if kind is dict:
        if type(right) is list:
            return _object_equals_array(left, right)
        if type(right) is not dict or len(right) != len(left):
            return False
        return all(key in right and js_equal(item, right[key]) for key, item in left.items())
    return left is right


def _object_equals_array(left: dict[str, Any], right: list[Any]) -> bool:
    # DeepEqualObject(value, option) only asks that the option be an object: an array's own
    # keys are its indices and `length`, so {"0": 1, "length": 1} equals [1] (not the reverse).
    if len(left) != len(right) + 1:
        return False
    for key, item in left.items():
        if key == "length":
            expected: Any = len(right)
        elif _INDEX.match(key) and int(key) < len(right):
            expected = right[int(key)]
        else:
            return False
        if not js_equal(item, expected):
            return False
    return True


_INDEX: Final = re.compile(r"(?:0|[1-9][0-9]*)\Z")


# ----------------------------------------------------------------- string length
#
# TypeBox counts maxLength/minLength in its own approximation of grapheme clusters
# (guard/string.mjs), over UTF-16 code units. A string without any code unit of the
# "grapheme" set below takes its fast path: its length in code units. Python strings are code
# points, so an astral character (two code units in JavaScript) is in the set through its
# high surrogate.
_GRAPHEME_UNITS: Final = re.compile(
    "[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\ufe00-\ufe0f\ufe20-\ufe2f\u200d"
    "\ud800-\udbff\U00010000-\U0010ffff]"
)


def _is_combining_mark(point: int) -> bool:
    # TypeBox IsCombiningMark: four blocks of combining diacritics, nothing else.
    return (
        0x0300 <= point <= 0x036F
        or 0x1AB0 <= point <= 0x1AFF
        or 0x1DC0 <= point <= 0x1DFF
        or 0xFE20 <= point <= 0xFE2F
    )


def _is_modifier(point: int) -> bool:
    # TypeBox ConsumeModifiers: combining marks and variation selectors U+FE00..U+FE0F.
    return _is_combining_mark(point) or 0xFE00 <= point <= 0xFE0F


def _code_units(text: str) -> list[int]:
    data = text.encode("utf-16-le", "surrogatepass")
    return list(struct.unpack(f"<{len(data) // 2}H", data))


def _code_point_at(units: list[int], index: int) -> int:
    # String.prototype.codePointAt: a surrogate pair is one code point, a lone half itself.
    unit = units[index]
    if 0xD800 <= unit <= 0xDBFF and index + 1 < len(units):
        low = units[index + 1]
        if 0xDC00 <= low <= 0xDFFF:
            return 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
    return unit


def _width(point: int) -> int:
    return 2 if point > 0xFFFF else 1


def _consume_modifiers(units: list[int], index: int) -> int:
    while index < len(units):
        point = _code_point_at(units, index)
        if not _is_modifier(point):
            break
        index += _width(point)
    return index


def _next_cluster(units: list[int], start: int) -> int:
    """TypeBox NextGraphemeClusterIndex: one code point, its modifiers, any chain of ZWJ +
    code point (+ modifiers), and a second regional indicator after a first."""
    first = _code_point_at(units, start)
    end = _consume_modifiers(units, start + _width(first))
    while end < len(units) - 1 and units[end] == 0x200D:
        joined = _code_point_at(units, end + 1)
        end = _consume_modifiers(units, end + 1 + _width(joined))
    if 0x1F1E6 <= first <= 0x1F1FF and end < len(units):
        second = _code_point_at(units, end)
        if 0x1F1E6 <= second <= 0x1F1FF:
            end += _width(second)
    return end


def grapheme_count(text: str) -> int:
    """TypeBox's count of ``text``: code units on its fast path, its clusters otherwise."""
    if _GRAPHEME_UNITS.search(text) is None:
        return len(text)
    units = _code_units(text)
    count = index = 0
    while index < len(units):
        index = _next_cluster(units, index)
        count += 1
    return count


def max_length(text: str, limit: float) -> bool:
    """TypeBox ``IsMaxLengthFast``: the empty string always passes (its loop never runs)."""
    if not text:
        return True
    if len(text) <= limit and _GRAPHEME_UNITS.search(text) is None:
        return True
    return grapheme_count(text) <= limit


def min_length(text: str, limit: float) -> bool:
    """TypeBox ``IsMinLengthFast``: a limit of 0 always passes, the empty string never
    passes another limit (not even a negative one), any other string passes a limit <= 1."""
    if limit == 0:
        return True
    if not text:
        return False
    return grapheme_count(text) >= limit


# ----------------------------------------------------------------- uniqueItems
#
# TypeBox's uniqueItems compares FNV-1a hashes of a byte stream per item (Hashing.Hash).
# Two items are "equal" exactly when their streams are (a 64-bit collision aside), so the
# stream itself is compared here. What the stream makes equal that JSON does not:
# arrays carry no length ([[1], 2] and [[1, 2]] collide), an object's `constructor` key is
# left out, lone surrogates are encoded as U+FFFD; what it keeps apart: -0 and 0 (their
# float64 bytes differ). Keys are sorted in UTF-16 code-unit order (Array.prototype.sort).

_ARRAY, _BOOLEAN, _NULL, _NUMBER, _OBJECT, _STRING = (
    b"\x00",
    b"\x02",
    b"\x06",
    b"\x07",
    b"\x08",
    b"\n",
)


def _utf16_key(text: str) -> bytes:
    return text.encode("utf-16-be", "surrogatepass")


def _stream(value: Any, out: list[bytes]) -> None:
    kind = type(value)
    if kind is str:
        out.append(_STRING)
        out.append(value.encode("utf-8", "replace") if value.isascii() else _utf8(value))
    elif kind is bool:
        out.append(_BOOLEAN + (b"\x01" if value else b"\x00"))
    elif kind is int or kind is float:
        out.append(_NUMBER + struct.pack("<d", js_number(value)))
    elif value is None:
        out.append(_NULL)
    elif kind is list:
        out.append(_ARRAY)
        for item in value:
            _stream(item, out)
    elif kind is dict:
        out.append(_OBJECT)
        for key in sorted((key for key in value if key != "constructor"), key=_utf16_key):
            out.append(_STRING)
            out.append(_utf8(key))
            _stream(value[key], out)
    else:
        raise TypeError(f"not a JSON value: {kind.__name__}")


def _utf8(text: str) -> bytes:
    # TextEncoder: a lone surrogate becomes U+FFFD.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").encode("utf-8")


def unique_items(items: list[Any]) -> bool:
    """TypeBox ``CheckUniqueItems``: as many distinct hash streams as items."""
    seen: set[bytes] = set()
    for item in items:
        out: list[bytes] = []
        _stream(item, out)
        seen.add(b"".join(out))
    return len(seen) == len(items)


def enum_check(options: tuple[Any, ...]) -> Callable[[Any, Any], bool]:
    """``enum``: ``js_equal`` to some option. A string equals exactly the options that are
    the same string, so it is looked up in a set: a long enum checked value by value (as
    ``lint --fix`` verifies every value of it) was quadratic in its length."""
    strings = frozenset(option for option in options if type(option) is str)

    def check(value: Any, context: Any) -> bool:
        if type(value) is str:
            return value in strings
        return any(js_equal(value, option) for option in options)

    return check
