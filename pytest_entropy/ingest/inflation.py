"""A cap on the bytes a compressed session file may inflate to (issue 26, item 18).

A few megabytes of gzip can inflate to gigabytes (4.3 MB to 4 GiB took 146 s of CPU before
anything bounded it). Every ``.gz`` stream a reader opens is wrapped by
:func:`bounded_inflation`, which raises :class:`InflatedSizeError` as soon as more than the
cap has come out of the decompressor; the scan counts the file as oversized (and so as
unreadable: it contributes nothing) and goes on with the next file.

The cap is part of the :class:`~pytest_entropy.ingest.base.ReadOptions` (``--max-inflated-bytes``,
``max-inflated-bytes`` in the configuration), which travel to every worker; the scan of one
source sets it for the readers it calls (:func:`inflation_limit`), so foreign readers that
open their own files obey it too without taking it as an argument.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from pytest_entropy.core.typing_lite import cast

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import IO, Any, Final

__all__ = [
    "DEFAULT_MAX_INFLATED_BYTES",
    "InflatedSizeError",
    "bounded_inflation",
    "current_inflation_limit",
    "inflation_limit",
]

# Generous: no real session file comes near it, and a bomb stops after about 1 GiB of work.
DEFAULT_MAX_INFLATED_BYTES: Final = 1 << 30

_LIMIT: ContextVar[int] = ContextVar("max_inflated_bytes", default=DEFAULT_MAX_INFLATED_BYTES)


class InflatedSizeError(OSError):
    """A compressed file inflated beyond the cap; nothing of it is used."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"inflates beyond {limit:,} bytes (--max-inflated-bytes)")
        self.limit = limit


def current_inflation_limit() -> int:
    """The cap in force for the readers called from here."""
    return _LIMIT.get()


@contextmanager
def inflation_limit(limit: int) -> Iterator[None]:
    """Set the cap for every compressed stream opened inside the block."""
    token = _LIMIT.set(limit)
    try:
        yield
    finally:
        _LIMIT.reset(token)


class _Counted(io.RawIOBase):
    """The inflated bytes of ``stream``, counted; past ``limit`` a read raises."""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        self._stream = stream
        self._limit = limit
        self._total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        # Never ask for more than one byte past the cap: a bomb is not inflated further.
        room = self._limit - self._total + 1
        wanted = min(len(view), room)
        count = self._stream.readinto(view[:wanted])  # type: ignore[attr-defined]
        if not count:
            return 0
        self._total += count
        if self._total > self._limit:
            raise InflatedSizeError(self._limit)
        return int(count)

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            super().close()


def bounded_inflation(stream: IO[bytes], limit: int | None = None) -> IO[bytes]:
    """``stream`` (a decompressing reader) with at most ``limit`` bytes coming out
    (default: :func:`current_inflation_limit`); one byte more raises
    :class:`InflatedSizeError`."""
    cap = current_inflation_limit() if limit is None else limit
    return cast("IO[bytes]", io.BufferedReader(_Counted(stream, cap), 1 << 16))
