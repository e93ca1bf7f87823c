"""Fewer garbage-collector passes while a corpus is read.

A corpus read allocates millions of short-lived containers (decoded lines, operation
tuples) while the meter and the evidence keep a growing set of long-lived ones; with
CPython's default first-generation threshold (700 allocations) the collector runs thousands
of times per command and each pass walks the young objects again: 0.4 s of a 5 s
``propose`` on the benchmark corpus. Nothing a read builds is cyclic garbage worth chasing
that often, so for its duration the first threshold is raised; the collector still runs, and
the old thresholds come back when the block ends. It changes no result, only when the
collector looks.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Final

__all__ = ["READ_THRESHOLD", "relaxed_collector"]

# Allocations between first-generation collections during a read (CPython's default: 700).
READ_THRESHOLD: Final = 100_000


@contextmanager
def relaxed_collector() -> Iterator[None]:
    """Raise the collector's first threshold for the block (nested blocks leave it alone)."""
    first, second, third = gc.get_threshold()
    if first == 0 or first >= READ_THRESHOLD:  # disabled by the caller, or already raised
        yield
        return
    gc.set_threshold(READ_THRESHOLD, second, third)
    try:
        yield
    finally:
        if gc.get_threshold()[0] == READ_THRESHOLD:  # unless the block chose otherwise
            gc.set_threshold(first, second, third)
