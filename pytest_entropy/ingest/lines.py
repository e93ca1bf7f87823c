"""Streaming line reader: bytes split on ``\\n`` only (spec §14 #23), bounded line length.

A file is read in fixed-size chunks and never held whole. A line longer than the cap is
skipped without being accumulated (its bytes are discarded as they stream past) and
reported as :data:`OVERSIZED`, so a 1 GB line costs time but not memory.
"""

from __future__ import annotations

from collections.abc import Iterator

from pytest_entropy.core.plain_record import Record

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import IO, Final

__all__ = [
    "CHUNK_SIZE",
    "DEFAULT_LINE_CAP",
    "OVERSIZED",
    "LineRead",
    "iter_line_batches",
    "iter_lines",
]

CHUNK_SIZE: Final = 1 << 20
# Far above the trace's 512 KiB bound: the reference still harvests audits from lines whose
# trace is too large, and tool results inside a line can be several megabytes.
DEFAULT_LINE_CAP: Final = 64 << 20


class _Oversized(bytes):
    """Marker type for a line that exceeded the cap (the instance itself is empty)."""


OVERSIZED: Final = _Oversized()


class LineRead(Record):
    """What one pass over a byte stream saw, filled in as the iterator runs."""

    bytes_read: int = 0
    terminated: bool = True  # the stream ended with "\n" (or was empty)


def iter_lines(
    stream: IO[bytes],
    *,
    line_cap: int = DEFAULT_LINE_CAP,
    chunk_size: int = CHUNK_SIZE,
    info: LineRead | None = None,
) -> Iterator[bytes]:
    """Yield each line (without its ``\\n``); an over-long line yields :data:`OVERSIZED`.

    The last line is yielded even without a trailing newline; ``info.terminated`` then
    becomes false (incremental readers must not cache such a read, spec §9.3 R13).
    """
    for batch in iter_line_batches(stream, line_cap=line_cap, chunk_size=chunk_size, info=info):
        yield from batch


def iter_line_batches(
    stream: IO[bytes],
    *,
    line_cap: int = DEFAULT_LINE_CAP,
    chunk_size: int = CHUNK_SIZE,
    info: LineRead | None = None,
) -> Iterator[list[bytes]]:
    """Like :func:`iter_lines`, one list of lines per chunk read (fewer Python steps)."""
    pending: list[bytes] = []  # pieces of a line that started in an earlier chunk
    pending_len = 0
    skipping = False  # inside a line already known to exceed the cap
    read = stream.read
    total = 0
    last_byte = b"\n"
    while True:
        chunk = read(chunk_size)
        if not chunk:
            break
        total += len(chunk)
        last_byte = chunk[-1:]
        batch: list[bytes] = []
        start = 0
        if skipping or pending:
            cut = chunk.find(b"\n")
            if cut < 0:
                if not skipping:
                    pending.append(chunk)
                    pending_len += len(chunk)
                    if pending_len > line_cap:
                        pending, pending_len, skipping = [], 0, True
                continue
            if skipping or pending_len + cut > line_cap:
                batch.append(OVERSIZED)
            else:
                pending.append(chunk[:cut])
                batch.append(b"".join(pending))
            pending, pending_len, skipping = [], 0, False
            start = cut + 1
        parts = (chunk[start:] if start else chunk).split(b"\n")
        tail = parts.pop()
        if len(chunk) > line_cap:
            parts = [OVERSIZED if len(part) > line_cap else part for part in parts]
        batch.extend(parts)
        if tail:
            if len(tail) > line_cap:
                skipping = True
            else:
                pending, pending_len = [tail], len(tail)
        if batch:
            yield batch
    if info is not None:
        info.bytes_read = total
        info.terminated = last_byte == b"\n"
    if skipping:
        yield [OVERSIZED]
    elif pending:
        yield [b"".join(pending)]
