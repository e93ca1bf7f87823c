"""Loading the spec's conformance vectors (copied from ``../shared/spec/vectors``).

Vector files are data produced by executing the reference implementation; see
``tests/vectors/README.md`` for the case schemas.
"""

from __future__ import annotations

import json
import struct
from functools import cache
from pathlib import Path
from typing import Any

VECTOR_DIR = Path(__file__).parent / "vectors"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(text: str) -> Any:
    """Parse a vector's embedded JSON text the way the reference parsed it."""
    return json.loads(text, parse_constant=_reject_constant)


@cache
def cases(file: str) -> tuple[dict[str, Any], ...]:
    with open(VECTOR_DIR / f"{file}.json", encoding="utf-8") as stream:
        return tuple(json.load(stream)["cases"])


def cases_of(file: str, fn: str | None = None, *, key: str = "fn") -> list[dict[str, Any]]:
    return [case for case in cases(file) if fn is None or case.get(key) == fn]


def bits(hex_text: str) -> float:
    return float(struct.unpack(">d", bytes.fromhex(hex_text))[0])


def number_input(case: dict[str, Any], prefix: str = "input") -> Any:
    """An input or expected value; the IEEE-754 bits are authoritative when present."""
    if case.get(prefix + "Bits"):
        return bits(case[prefix + "Bits"])
    if prefix + "Text" in case:
        return strict_json(case[prefix + "Text"])
    return case[prefix]


def same_float(a: float, b: float) -> bool:
    """Exact equality including the sign of zero and NaN identity."""
    if a != a and b != b:
        return True
    return struct.pack(">d", a) == struct.pack(">d", b)


def ids(items: list[dict[str, Any]]) -> list[str]:
    return [case["id"] for case in items]
