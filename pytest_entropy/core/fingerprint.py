"""Shape signatures, signature distance, Shannon entropy, static freedom, trend.

Spec §2.3-§2.6 and §4.1.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from pytest_entropy.core.jscompat import code_unit_key, round_metric, utf16_units

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "SIGNATURE_MAX_DEPTH",
    "SIGNATURE_MAX_KEYS",
    "shannon_entropy_bits",
    "shape_signature",
    "signature_distance",
    "static_freedom",
    "surface_freedom_report",
    "trend_from_scores",
]

SIGNATURE_MAX_KEYS = 32
SIGNATURE_MAX_DEPTH = 3
ENUM_SATURATION_BITS = 6


def _sorted_keys(obj: Mapping[str, Any]) -> list[str]:
    keys = sorted(obj)
    # Plain str order equals UTF-16 order unless a key holds an astral character.
    if len(keys) > 1 and not "".join(keys).isascii():
        keys.sort(key=code_unit_key)
    return keys


def _tag(value: Any, depth: int) -> str:
    if value is None:
        return "null"
    t = type(value)
    if t is str:
        return "str"
    if t is bool:
        return "bool"
    if t is int or t is float:
        return "num"
    if t is list:
        return "arr"
    if t is dict:
        if depth >= SIGNATURE_MAX_DEPTH:
            return "obj"
        return "{" + _fields(value, depth + 1) + "}"
    # Subclasses and foreign containers: classify by behaviour, booleans first (pitfall 1).
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "num"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list | tuple):
        return "arr"
    if isinstance(value, Mapping):
        if depth >= SIGNATURE_MAX_DEPTH:
            return "obj"
        return "{" + _fields(value, depth + 1) + "}"
    return "other"


def _fields(obj: Mapping[str, Any], child: int) -> str:
    """``key:tag`` for the first 32 keys in code-unit order, children tagged at ``child``."""
    keys = _sorted_keys(obj)
    parts = [key + ":" + _tag(obj[key], child) for key in keys[:SIGNATURE_MAX_KEYS]]
    if len(keys) > SIGNATURE_MAX_KEYS:
        parts.append(f"…+{len(keys) - SIGNATURE_MAX_KEYS}")
    return ",".join(parts)


def shape_signature(args: Mapping[str, Any]) -> str:
    """The canonical argument shape: sorted keys with bounded type tags (spec §2.3).

    >>> shape_signature({"path": "y", "limit": 10})
    '(limit:num,path:str)'
    """
    if not args:
        return "()"
    return "(" + _fields(args, 1) + ")"


def _levenshtein(a: Sequence[int], b: Sequence[int]) -> int:
    # Common prefixes and suffixes never change the edit distance; strip them first.
    start = 0
    limit = min(len(a), len(b))
    while start < limit and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a -= 1
        end_b -= 1
    a = a[start:end_a]
    b = b[start:end_b]
    if not a:
        return len(b)
    if not b:
        return len(a)
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        append = current.append
        for j, cb in enumerate(b, 1):
            cost = previous[j - 1] + (ca != cb)
            deletion = previous[j] + 1
            insertion = current[j - 1] + 1
            if deletion < cost:
                cost = deletion
            if insertion < cost:
                cost = insertion
            append(cost)
        previous = current
    return previous[-1]


def signature_distance(a: str, b: str) -> float:
    """Normalised Levenshtein distance over UTF-16 code units, rounded (spec §2.4).

    >>> signature_distance("(session:str)", "(entryId:str,session:str)")
    0.48
    """
    if a == b:
        return 0.0
    return _distance(a, b)


@lru_cache(maxsize=4096)
def _distance(a: str, b: str) -> float:
    units_a = utf16_units(a)
    units_b = utf16_units(b)
    longest = max(len(units_a), len(units_b))
    if longest == 0:
        return 0.0
    return round_metric(_levenshtein(units_a, units_b) / longest)


def shannon_entropy_bits(counts: Iterable[int | float]) -> float:
    """Shannon entropy in bits, summed in the given (first-seen) order, rounded (spec §2.5).

    >>> shannon_entropy_bits([3, 1])
    0.811278
    """
    values = list(counts)
    if len(values) == 1 and type(values[0]) is int:
        # One outcome: p is 1 or there is nothing, and either way the sum is 0 (spec §2.5).
        return 0.0
    total: int | float = 0
    for count in values:
        total += count
    if total <= 0:
        return 0.0
    bits = 0.0
    log2 = math.log2
    for count in values:
        if count > 0:
            p = count / total
            bits += p * log2(p)
    return round_metric(-bits)


def static_freedom(schema: Any, depth: int = 0) -> float:
    """Static freedom of a JSON Schema, every rule of spec §2.6 in order.

    >>> static_freedom({"type": "string", "enum": ["a", "b"]})
    0.166667
    """
    if depth > 3:
        return 0.5
    if type(schema) is not dict:
        return 0.5
    branches = schema.get("anyOf")
    if type(branches) is not list:
        branches = schema.get("oneOf")
    if type(branches) is list:
        best = 0.0
        for branch in branches:
            score = static_freedom(branch, depth + 1)
            if score > best:
                best = score
        return round_metric(best + 0.1 * max(0, len(branches) - 1))
    enum = schema.get("enum")
    if type(enum) is list:
        return round_metric(min(1.0, math.log2(max(1, len(enum))) / ENUM_SATURATION_BITS))
    if "const" in schema:
        return 0.0
    kind = schema.get("type")
    if type(kind) is not str:
        return 0.75
    if kind == "boolean":
        return 0.1
    if kind in ("number", "integer"):
        return 0.5
    if kind == "string":
        return 1.0
    if kind == "array":
        return round_metric(0.5 + 0.5 * static_freedom(schema.get("items"), depth + 1))
    if kind == "object":
        properties = schema.get("properties")
        if type(properties) is not dict or not properties:
            return 1.0
        required = schema.get("required")
        required_names = (
            {name for name in required if type(name) is str} if type(required) is list else set()
        )
        score = 0.0
        for key in _sorted_keys(properties):
            score += static_freedom(properties[key], depth + 1)
            if key not in required_names:
                score += 0.25
        if schema.get("additionalProperties") is not False:
            score += 0.5
        return round_metric(score)
    return 0.75


def surface_freedom_report(surface: Mapping[str, Any]) -> dict[str, Any]:
    """Per-action static freedom, worst first, with total and mean (spec §2.6)."""
    actions = surface.get("actions") or []
    rows = [
        {"ref": action["ref"], "freedom": static_freedom(action.get("inputSchema"))}
        for action in actions
    ]
    rows.sort(key=lambda row: code_unit_key(row["ref"]))
    rows.sort(key=lambda row: -row["freedom"])
    total = 0.0
    for row in rows:
        total += row["freedom"]
    total = round_metric(total)
    mean = round_metric(total / len(rows)) if rows else 0.0
    return {"actions": rows, "total": total, "mean": mean}


def trend_from_scores(scores: Sequence[float]) -> dict[str, Any]:
    """Least-squares slope of per-session scores, oldest to newest (spec §4.1)."""
    n = len(scores)
    result: dict[str, Any] = {"count": n}
    if n:
        result["first"] = round_metric(scores[0])
        result["last"] = round_metric(scores[n - 1])
    slope = 0.0
    if n >= 2:
        mx = (n - 1) / 2
        total = 0.0
        for y in scores:
            total += y
        my = total / n
        num = 0.0
        den = 0.0
        for x, y in enumerate(scores):
            num += (x - mx) * (y - my)
            den += (x - mx) * (x - mx)
        if den > 0:
            slope = num / den
    result["slopePerStep"] = round_metric(slope)
    return result
