"""The line reader's native chunk split (``ingest/_lines_native.c``) returns what
``chunk[start:].split(b"\\n")`` returns on every chunk and start (empty chunks, no newline,
only newlines, ``\\r`` kept, long lines), and ``iter_line_batches`` / ``iter_lines`` yield the
same lines, ``OVERSIZED`` markers and ``LineRead`` on the native, python and plain paths,
whatever the chunk size and the line cap."""

from __future__ import annotations

import io
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_entropy.ingest.lines import OVERSIZED, LineRead, iter_line_batches, iter_lines
from tests.native_support import paths

KERNEL = "ingest._lines_native"

# Bytes that matter to a split: the separator, "\r", NUL, high bytes, plain text.
pieces = st.one_of(
    st.sampled_from([b"\n", b"\r", b"\r\n", b"\n\n", b"\x00", b"\xff", b"\xe2\x80\xa8", b"x"]),
    st.binary(max_size=40),
    st.builds(lambda n, c: c * n, st.integers(0, 3000), st.sampled_from([b"a", b"\n", b"\r"])),
)
chunks = st.lists(pieces, max_size=30).map(b"".join)


def read(kind: str, data: bytes, chunk: int, cap: int, whole: bool) -> list[Any]:
    with paths(kind):
        info = LineRead()
        stream = io.BytesIO(data)
        if whole:
            lines = list(iter_lines(stream, line_cap=cap, chunk_size=chunk, info=info))
            batches: list[Any] = [lines]
        else:
            batches = list(iter_line_batches(stream, line_cap=cap, chunk_size=chunk, info=info))
    marks = [[line is OVERSIZED for line in batch] for batch in batches]
    types = [[type(line).__name__ for line in batch] for batch in batches]
    return [batches, marks, types, info.bytes_read, info.terminated]


@settings(max_examples=200, deadline=None)
@given(
    data=chunks,
    chunk=st.sampled_from([1, 2, 3, 7, 64, 1 << 20]),
    cap=st.sampled_from([0, 1, 5, 40, 2999, 1 << 20]),
    whole=st.booleans(),
)
def test_the_reader_yields_the_same_lines_on_every_path(
    data: bytes, chunk: int, cap: int, whole: bool
) -> None:
    results = [read(kind, data, chunk, cap, whole) for kind in ("native", "python", "plain")]
    assert results[0] == results[1] == results[2]


class ByteArrays(io.RawIOBase):
    """A stream whose read returns bytearrays (the kernel hands those back)."""

    def __init__(self, data: bytes) -> None:
        self.data = io.BytesIO(data)

    def read(self, size: int = -1) -> bytearray:  # type: ignore[override]
        return bytearray(self.data.read(size))


def test_a_stream_of_bytearrays_reads_as_in_python() -> None:
    data = b"a\nbb\r\n\n" + b"c" * 50 + b"\nd"
    seen = []
    for kind in ("native", "python", "plain"):
        with paths(kind):
            seen.append(list(iter_line_batches(ByteArrays(data), chunk_size=8, line_cap=30)))
    assert seen[0] == seen[1] == seen[2]
    assert [type(line) for batch in seen[0] for line in batch] == [
        type(line) for batch in seen[1] for line in batch
    ]
