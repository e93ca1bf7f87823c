"""One session window's observation tally: the fast path of :func:`pool.summarize_window`.

A tally hears a window's value observations one at a time - ``add(ref, key, value)`` as the
scan finds them (no observation record is built), or ``add_records`` for a list of
:class:`~pytest_entropy.core.records.ValueObservation` records - and ``summary()`` gives
the per-identity counts (first-seen order), the identities in UTF-16 code-unit order (one
per observation: the window's digest hashes them), and the dropped and oversized counts.

:func:`window_tally` returns the native kernel's ``Window`` (``core/_pool_native.c``) when
it is built and allowed, else :class:`WindowTally`, its Python twin; the plain code of
``pool.summarize_window`` stays the specification, and property tests compare the three
(``tests/property/test_pool_native.py``).
"""

from __future__ import annotations

import hashlib
from typing import Any, Protocol

import orjson

from pytest_entropy.core.canonical import stable_json_hash
from pytest_entropy.core.fastpath import kernel
from pytest_entropy.core.jscompat import code_unit_key, is_finite_number, js_trim, value_key
from pytest_entropy.core.records import ValueObservation

__all__ = [
    "Tally",
    "WindowTally",
    "identities_digest",
    "oversized_text",
    "sorted_code_units",
    "unwritable_number",
    "window_item",
    "window_tally",
]


def unwritable_number(value: Any) -> bool:
    """A number JSON cannot write: a non-finite float, or an int beyond the double range
    (JavaScript reads ``1`` and 400 zeros as Infinity; issue 26, item 2)."""
    t = type(value)
    return (t is float or t is int) and not is_finite_number(value)


_NUL = "\u0000"
# Beyond this bound the kernel refuses the limit (its length arithmetic is 64-bit).
_KERNEL_LIMIT = 1 << 60


class Tally(Protocol):
    def add(self, ref: str, key: str, value: Any) -> None: ...

    def add_records(self, items: list[ValueObservation]) -> None: ...

    def summary(self) -> tuple[dict[str, int], list[str], int, int]: ...


def oversized_text(value: str, limit: int) -> bool:
    """Whether ``value`` is longer than ``limit`` UTF-8 bytes (a lone surrogate counts 3)."""
    if len(value) * 4 <= limit:  # at most 4 UTF-8 bytes a character
        return False
    return len(value) > limit or len(value.encode("utf-8", "surrogatepass")) > limit


def window_item(
    ref: Any, key: Any, value: Any, drop_unloadable: bool, max_value_bytes: int | None
) -> tuple[str | None, bool]:
    """One observation's ``(identity, oversized)``; ``(None, False)`` when it is dropped.

    The kernel hands every observation outside its exact domain (a str subclass, an int
    beyond 2**53, a foreign value) to this, the Python code's own answer."""
    if drop_unloadable:
        if not all(text and _NUL not in text and js_trim(text) == text for text in (ref, key)):
            return None, False
        if unwritable_number(value):
            return None, False
    if type(value) is str:
        identity = ref + _NUL + key + _NUL + "string:" + value
    else:
        identity = ref + _NUL + key + _NUL + value_key(value)
    oversized = (
        max_value_bytes is not None
        and type(value) is str
        and len(value) * 4 > max_value_bytes
        and oversized_text(value, max_value_bytes)
    )
    return identity, oversized


class WindowTally:
    """The Python twin of the kernel's ``Window`` (the same answers, in Python)."""

    __slots__ = ("_drop", "_limit", "_loadable", "counts", "dropped", "identities", "oversized")

    def __init__(self, drop_unloadable: bool, max_value_bytes: int | None) -> None:
        self._drop = drop_unloadable
        self._limit = max_value_bytes
        self._loadable: dict[tuple[str, str], bool] = {}
        self.counts: dict[str, int] = {}
        self.identities: list[str] = []
        self.oversized: list[str] = []
        self.dropped = 0

    def add(self, ref: str, key: str, value: Any) -> None:
        """Hear one observation of weight 1 (the scan's ``on_value_fields``)."""
        self._take(ref, key, value, 1)

    def add_records(self, items: list[ValueObservation]) -> None:
        take = self._take
        for item in items:
            count = item.count
            take(item.ref, item.key, item.value, 1 if count is None else count)

    def _take(self, ref: str, key: str, value: Any, count: int) -> None:
        if self._drop:
            texts = self._loadable.get((ref, key))
            if texts is None:
                texts = self._loadable[(ref, key)] = all(
                    text and _NUL not in text and js_trim(text) == text for text in (ref, key)
                )
            if not texts or unwritable_number(value):
                self.dropped += 1
                return
        if type(value) is str:
            identity = ref + _NUL + key + _NUL + "string:" + value
        else:
            identity = ref + _NUL + key + _NUL + value_key(value)
        self.identities.append(identity)
        counts = self.counts
        counts[identity] = counts.get(identity, 0) + count
        limit = self._limit
        if (
            limit is not None
            and type(value) is str
            and len(value) * 4 > limit
            and oversized_text(value, limit)
        ):
            self.oversized.append(identity)

    def summary(self) -> tuple[dict[str, int], list[str], int, int]:
        """``(counts, identities in code-unit order, dropped, oversized)``; call it once, last."""
        counts = self.counts
        for identity in self.oversized:
            counts.pop(identity, None)
        return counts, sorted(self.identities, key=code_unit_key), self.dropped, len(self.oversized)


def window_tally(drop_unloadable: bool, max_value_bytes: int | None) -> Tally:
    """The kernel's tally when it may be used (and the bound is in its range), else the twin."""
    native = kernel("core._pool_native")
    if native is not None and (
        max_value_bytes is None
        or (type(max_value_bytes) is int and -_KERNEL_LIMIT <= max_value_bytes <= _KERNEL_LIMIT)
    ):

        def fallback(ref: Any, key: Any, value: Any) -> tuple[str | None, bool]:
            return window_item(ref, key, value, drop_unloadable, max_value_bytes)

        tally: Tally = native.Window(drop_unloadable, max_value_bytes, fallback)
        return tally
    return WindowTally(drop_unloadable, max_value_bytes)


def sorted_code_units(items: list[str]) -> list[str]:
    """``sorted(items, key=code_unit_key)``, by the kernel when it is built."""
    native = kernel("core._pool_native")
    if native is not None:
        ordered = native.sorted_code_units(items)
        if ordered is not NotImplemented:
            return ordered  # type: ignore[no-any-return]
    return sorted(items, key=code_unit_key)


def identities_digest(identities: list[str]) -> str:
    """``stable_json_hash`` of a list of strings (identities in their order)."""
    try:
        # The canonical JSON of an array of strings, as orjson writes it (the same bytes:
        # tests/property/test_canonical_paths.py); a lone surrogate takes the plain writer.
        return hashlib.sha256(orjson.dumps(identities)).hexdigest()
    except TypeError:
        return stable_json_hash(identities)
