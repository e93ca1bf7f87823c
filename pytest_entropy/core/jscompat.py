"""JavaScript-compatible number text, rounding, string ordering and trimming.

The reference implementation is JavaScript; every number that becomes text and every string
comparison in a digest must behave as it does there (spec §2.1-§2.2, §2.7.3 and the
"Python-specific pitfalls" list). Nothing here does I/O.
"""

from __future__ import annotations

import math

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from decimal import Decimal
    from typing import Any

__all__ = [
    "JS_WHITESPACE",
    "MAX_SAFE_INTEGER",
    "code_unit_key",
    "compare_code_units",
    "is_array_index_key",
    "is_finite_number",
    "is_safe_integer",
    "is_safe_integer_at_least",
    "js_number",
    "js_own_keys",
    "js_round",
    "js_string",
    "js_to_exponential",
    "js_to_fixed",
    "js_trim",
    "js_typeof",
    "json_number_text",
    "round_metric",
    "sort_code_units",
    "utf16_units",
    "value_key",
]

MAX_SAFE_INTEGER = 2**53 - 1
_TWO_53 = 2**53
# The smallest integer a double cannot hold: half-way between the largest double and 2**1024
# rounds (to even) up to Infinity, in JavaScript's number parsing as in Python's float().
_INT_OVERFLOW = 2**1024 - 2**970
_ARRAY_INDEX_MAX = 2**32 - 2


# --------------------------------------------------------------------------- rounding


def js_round(y: float) -> float:
    """``Math.round``: nearest integer, exact ties toward +infinity."""
    if not math.isfinite(y):
        return y
    f = math.floor(y)
    # The subtraction is exact for |y| < 2**52; above that y is already integral.
    return float(f + 1) if (y - f) >= 0.5 else float(f)


def round_metric(x: float) -> float:
    """Round to 1e-6 exactly as the reference's ``roundMetric`` (spec §2.1).

    >>> round_metric(0.8112781244591328)
    0.811278
    """
    y = float(x) * 1e6
    if not math.isfinite(y):
        # JavaScript: Math.round(±Infinity) / 1e6 stays ±Infinity, NaN stays NaN.
        return y
    f = math.floor(y)
    r = (f + 1 if (y - f) >= 0.5 else f) / 1e6
    if r == 0:
        return 0.0
    return r


# ----------------------------------------------------------------------- number text


def _shortest_digits(x: float) -> tuple[str, int]:
    """Shortest round-trip digits ``s`` and exponent ``n`` with x = 0.s * 10**n (x > 0)."""
    text = repr(x)
    if "e" in text:
        mantissa, exp_text = text.split("e")
        exponent = int(exp_text)
    else:
        mantissa, exponent = text, 0
    if "." in mantissa:
        int_part, frac_part = mantissa.split(".")
    else:
        int_part, frac_part = mantissa, ""
    raw = int_part + frac_part
    stripped = raw.lstrip("0")
    leading = len(raw) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    n = len(int_part) + exponent - leading
    return digits, n


def _float_text(x: float) -> str:
    if x == 0:
        return "0"
    if x < 0:
        return "-" + _float_text(-x)
    s, n = _shortest_digits(x)
    k = len(s)
    if k <= n <= 21:
        return s + "0" * (n - k)
    if 0 < n <= 21:
        return s[:n] + "." + s[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + s
    exp = n - 1
    sign = "+" if exp >= 0 else "-"
    head = s[0] + ("." + s[1:] if k > 1 else "")
    return f"{head}e{sign}{abs(exp)}"


def js_number(value: int | float) -> float:
    """The double JavaScript holds for a JSON number: an integer is rounded to the nearest
    double, and one beyond the double range (``1`` and 400 zeros) is read as ±Infinity."""
    if type(value) is float:
        return value
    if -_INT_OVERFLOW < value < _INT_OVERFLOW:
        return float(value)
    return math.inf if value > 0 else -math.inf


def is_finite_number(value: Any) -> bool:
    """A number JavaScript reads as finite (an int within the double range, a finite float);
    false for booleans and every other type."""
    t = type(value)
    if t is int:
        return bool(-_INT_OVERFLOW < value < _INT_OVERFLOW)
    if t is float:
        return math.isfinite(value)
    return False


def js_string(value: Any) -> str:
    """JavaScript ``String(value)`` for JSON primitives (numbers, booleans, strings, null)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        if -_TWO_53 <= value <= _TWO_53:
            return str(value)
        # JavaScript has only doubles: an integer beyond 2**53 arrives rounded, one beyond
        # the double range as ±Infinity (issue 26, item 2: float() raised OverflowError).
        return js_string(js_number(value))
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return _float_text(value)
    if isinstance(value, str):
        return value
    raise TypeError(f"no JavaScript string form for {type(value).__name__}")


def json_number_text(value: int | float) -> str:
    """``JSON.stringify`` of a number: like ``String`` but non-finite values become ``null``."""
    if type(value) is int and not -_INT_OVERFLOW < value < _INT_OVERFLOW:
        return "null"
    if isinstance(value, float) and not math.isfinite(value):
        return "null"
    return js_string(value)


def _exact_decimal(x: float) -> Decimal:
    from decimal import Decimal  # here: only the exponential form needs it

    return Decimal(x)


def js_to_fixed(x: float, digits: int) -> str:
    """``Number.prototype.toFixed``: exact decimal value, ties away from zero (spec pitfall 3).

    >>> js_to_fixed(0.0078125, 6)
    '0.007813'
    """
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if abs(x) >= 1e21 or math.isinf(x):
        return js_string(x)
    sign = ""
    if x < 0:
        sign = "-"
    x = abs(x)  # also turns -0.0 into 0.0: (-0).toFixed(6) is "0.000000"
    # A double is exactly numerator / 2**k: scale by 10**digits in integers, round half up.
    numerator, denominator = x.as_integer_ratio()
    scaled, remainder = divmod(numerator * 10**digits, denominator)
    if 2 * remainder >= denominator:
        scaled += 1
    text = str(scaled).rjust(digits + 1, "0")
    return sign + (text[:-digits] + "." + text[-digits:] if digits else text)


def js_to_exponential(x: float, digits: int) -> str:
    """``Number.prototype.toExponential(digits)``: exact value, ties toward the larger digit."""
    x = float(x)
    if not math.isfinite(x):
        return js_string(x)
    sign = ""
    if x < 0:
        sign = "-"
        x = -x
    if x == 0:
        mantissa = "0" + ("." + "0" * digits if digits else "")
        return f"{sign}{mantissa}e+0"
    from decimal import ROUND_HALF_UP, Decimal  # here: most runs never print this form

    exact = _exact_decimal(x)
    exponent = exact.adjusted()
    scaled = exact.scaleb(-exponent).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    if scaled >= 10:
        exponent += 1
        scaled = exact.scaleb(-exponent).quantize(
            Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP
        )
    text = format(scaled, "f")
    exp_sign = "+" if exponent >= 0 else "-"
    return f"{sign}{text}e{exp_sign}{abs(exponent)}"


# -------------------------------------------------------------------------- strings


def code_unit_key(s: str) -> str:
    """A sort key under which Python's ``<`` equals JavaScript's UTF-16 code-unit ``<``.

    Code-point order and code-unit order differ only for astral characters, which UTF-16
    writes as surrogates (U+D800-U+DFFF) and so sort below U+E000-U+FFFF; the key spells
    each astral character as its surrogate pair.
    """
    if s.isascii():
        return s
    if max(s) <= "\uffff":
        return s
    out = []
    for ch in s:
        cp = ord(ch)
        if cp > 0xFFFF:
            cp -= 0x10000
            out.append(chr(0xD800 + (cp >> 10)))
            out.append(chr(0xDC00 + (cp & 0x3FF)))
        else:
            out.append(ch)
    return "".join(out)


def compare_code_units(a: str, b: str) -> int:
    """-1, 0 or 1 as JavaScript's ``<`` orders the two strings."""
    ka, kb = code_unit_key(a), code_unit_key(b)
    return -1 if ka < kb else (1 if ka > kb else 0)


def sort_code_units(values: list[str]) -> list[str]:
    """Sorted copy in UTF-16 code-unit order (JavaScript's default ``Array.prototype.sort``)."""
    return sorted(values, key=code_unit_key)


def utf16_units(s: str) -> list[int]:
    """The UTF-16 code units of ``s`` (lone surrogates pass through as themselves)."""
    if s.isascii():
        return [ord(c) for c in s]
    units: list[int] = []
    for ch in s:
        cp = ord(ch)
        if cp > 0xFFFF:
            cp -= 0x10000
            units.append(0xD800 + (cp >> 10))
            units.append(0xDC00 + (cp & 0x3FF))
        else:
            units.append(cp)
    return units


# JavaScript's String.prototype.trim removes WhiteSpace and LineTerminator code points:
# TAB, VT, FF, SP, NBSP, ZWNBSP (BOM), every Zs character, LF, CR, LS and PS. Python's
# str.strip() differs (it strips U+001C-U+001F and U+0085, and keeps U+FEFF).
JS_WHITESPACE = (
    "\t\n\u000b\u000c\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(s: str) -> str:
    """JavaScript ``String.prototype.trim`` (spec pitfall 9)."""
    return s.strip(JS_WHITESPACE)


# ----------------------------------------------------------------------- values/keys


def is_safe_integer(value: Any) -> bool:
    """``Number.isSafeInteger``: integral, |x| <= 2**53-1, and not a boolean (pitfall 1, 7)."""
    t = type(value)
    if t is int:
        return bool(-MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER)
    if t is float:
        return math.isfinite(value) and value == int(value) and abs(value) <= MAX_SAFE_INTEGER
    return False


def is_safe_integer_at_least(value: Any, minimum: int) -> bool:
    """A safe integer no smaller than ``minimum`` (counts, versions, totals)."""
    return is_safe_integer(value) and bool(value >= minimum)


def js_typeof(value: Any) -> str:
    """JavaScript ``typeof`` for JSON values (booleans tested before numbers)."""
    if value is True or value is False:
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "object"
    if isinstance(value, list | dict):
        return "object"
    return "undefined"


def value_key(value: Any) -> str:
    """``typeof(v) + ":" + String(v)``: the identity of an observed primitive value (§5.2)."""
    return js_typeof(value) + ":" + js_string(value)


def is_array_index_key(key: str) -> bool:
    """A canonical array index (``"0"``, ``"7"``, ``"10"``, ... up to 2**32-2): ASCII digits
    without a leading zero (but ``"0"`` itself), at most ten of them, at most the bound."""
    return (
        0 < len(key) <= 10
        and key.isascii()
        and key.isdigit()
        and (key[0] != "0" or key == "0")
        and int(key) <= _ARRAY_INDEX_MAX
    )


def js_own_keys(obj: dict[str, Any]) -> list[str]:
    """Keys in JavaScript own-key order: array-index keys ascending, then insertion order."""
    keys = list(obj)
    index_keys = [k for k in keys if k[:1].isdigit() and is_array_index_key(k)]
    if not index_keys:
        return keys
    index_set = set(index_keys)
    index_keys.sort(key=int)
    return index_keys + [k for k in keys if k not in index_set]
