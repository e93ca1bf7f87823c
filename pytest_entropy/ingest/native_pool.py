"""The pool's merge with its entries in the Rust core (``pytest_entropy._core.PoolEntries``).

:class:`NativePoolMerger` is :class:`~pytest_entropy.core.pool.PoolMerger` (the
specification: the tracked sessions, the baked digests and the skips stay there, in Python)
whose entries the core keeps and changes: a window's counts, which a scan leaves in the core
(a ``WindowCounts``), are merged without becoming Python objects, and a file's tracked counts
stay in the core until the pool is written. A plain window's counts (a dict) merge alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pytest_entropy.core.jscompat import value_key
from pytest_entropy.core.pool import PoolMerger

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["NativePoolMerger"]


class NativePoolMerger(PoolMerger):
    """:class:`~pytest_entropy.core.pool.PoolMerger` over the Rust core's ``PoolEntries``."""

    def __init__(self, pool: Mapping[str, Any] | None, core: Any, *, loadable: bool = True) -> None:
        self._native = core.PoolEntries()
        super().__init__(pool, loadable=loadable)

    def _load(self, entries: Iterable[Mapping[str, Any]]) -> None:
        native = self._native
        for entry in entries:
            values = [
                (value_key(item["value"]), item["value"], int(item["count"]))
                for item in entry["values"]
            ]
            native.load(entry["ref"], entry["key"], int(entry["total"]), values)

    def _apply(self, fresh_counts: Any, existing_counts: Any) -> None:
        self._native.apply(fresh_counts, existing_counts)

    def _rows(self) -> list[dict[str, Any]]:
        return [
            {
                "ref": ref,
                "key": key,
                "total": total,
                "values": [{"value": value, "count": count} for value, count in values],
            }
            for ref, key, total, values in self._native.rows()
        ]
