"""One session window's observation tally: how :func:`pool.summarize_window` counts.

A tally hears a window's value observations one at a time - ``add(ref, key, value)`` as the
scan finds them (no observation record is built), or ``add_records`` for value observation
records or their JSON objects - and ``summary()`` gives the per-identity counts
(first-seen order), the identities in UTF-16 code-unit order (one per observation: the
window's digest hashes them), and the dropped and oversized counts.

This is the plain Python's window summary (spec §6.2); the Rust core's window tally
(``native/src/pool.rs``) stands in for it where the pipeline reads a file natively, and
``tests/property/test_native_tallies.py`` compares the two.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pytest_entropy.core.canonical import stable_json_hash
from pytest_entropy.core.jscompat import code_unit_key, is_finite_number, js_trim, value_key
from pytest_entropy.core.records import ValueObservation, observation_fields
from pytest_entropy.core.typing_lite import Protocol

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "Tally",
    "WindowTally",
    "identities_digest",
    "loadable_text",
    "oversized_text",
    "unwritable_number",
    "window_tally",
]


def unwritable_number(value: Any) -> bool:
    """A number JSON cannot write: a non-finite float, or an int beyond the double range
    (JavaScript reads ``1`` and 400 zeros as Infinity; issue 26, item 2)."""
    t = type(value)
    return (t is float or t is int) and not is_finite_number(value)


_NUL = "\u0000"

# The longest value (UTF-8 bytes of the string) the pool stores; a longer one is counted in
# `oversizedValues` and left out (docs/decisions.md, "The pool does not store a value
# longer than 64 KiB"). Such a value would never be proposed as an enum member in practice,
# and storing it verbatim let one 50 MB audit value make a 105 MB pool.
# (Here rather than in core/pool.py, which re-exports it: the Rust scanner is told it on
# every file, and a command that keeps no pool does not load the pool's module.)
POOL_MAX_VALUE_BYTES = 64 * 1024


def loadable_text(text: Any) -> bool:
    """Whether a ref or key survives the reference's pool loader: not blank, no U+0000, no
    JavaScript white space around it."""
    return bool(text) and _NUL not in text and js_trim(text) == text


class Tally(Protocol):
    def add(self, ref: str, key: str, value: Any) -> None: ...

    def add_records(self, items: Iterable[ValueObservation | Mapping[str, Any]]) -> None: ...

    def summary(self) -> tuple[dict[str, int], list[str], int, int]: ...


def oversized_text(value: str, limit: int) -> bool:
    """Whether ``value`` is longer than ``limit`` UTF-8 bytes (a lone surrogate counts 3)."""
    if len(value) * 4 <= limit:  # at most 4 UTF-8 bytes a character
        return False
    return len(value) > limit or len(value.encode("utf-8", "surrogatepass")) > limit


class WindowTally:
    """One window's observations tallied as they are heard (see the module's comment)."""

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

    def add_records(self, items: Iterable[ValueObservation | Mapping[str, Any]]) -> None:
        """Hear observation records (or their ``{ref, key, value, count}`` objects), each of
        its own weight."""
        take = self._take
        for item in items:
            take(*observation_fields(item))

    def _take(self, ref: str, key: str, value: Any, count: int) -> None:
        if self._drop:
            texts = self._loadable.get((ref, key))
            if texts is None:
                texts = self._loadable[(ref, key)] = loadable_text(ref) and loadable_text(key)
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
    """A fresh tally of one window."""
    return WindowTally(drop_unloadable, max_value_bytes)


def identities_digest(identities: list[str]) -> str:
    """``stable_json_hash`` of a list of strings (identities in their order)."""
    return stable_json_hash(identities)
