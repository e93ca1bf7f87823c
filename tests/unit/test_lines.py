"""The streaming line reader: ``\\n`` only, bounded line length, any chunking."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from pytest_entropy.ingest.lines import OVERSIZED, LineRead, iter_line_batches, iter_lines


def _expected(data: bytes, cap: int) -> list[bytes]:
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    return [OVERSIZED if len(part) > cap else part for part in parts]


@given(
    data=st.binary(max_size=200).map(lambda b: b.replace(b"\x00", b"\n")),
    cap=st.integers(1, 40),
    chunk=st.integers(1, 50),
)
def test_any_chunking_yields_the_same_lines(data: bytes, cap: int, chunk: int) -> None:
    info = LineRead()
    got = list(iter_lines(io.BytesIO(data), line_cap=cap, chunk_size=chunk, info=info))
    expected = _expected(data, cap)
    assert [line is OVERSIZED for line in got] == [line is OVERSIZED for line in expected]
    assert [line for line in got if line is not OVERSIZED] == [
        line for line in expected if line is not OVERSIZED
    ]
    assert info.bytes_read == len(data)
    assert info.terminated == (not data or data.endswith(b"\n"))


def test_carriage_returns_stay_inside_lines() -> None:
    assert list(iter_lines(io.BytesIO(b"a\r\nb\rc\n"))) == [b"a\r", b"b\rc"]


def test_an_oversized_line_is_never_accumulated() -> None:
    # 8 MiB line with a 1 MiB cap streams through 64 KiB chunks: the reader must hold at
    # most one chunk of it at a time, and report it as one oversized line.
    line = b"x" * (8 << 20)
    stream = io.BytesIO(b"first\n" + line + b"\nlast\n")
    batches = list(iter_line_batches(stream, line_cap=1 << 20, chunk_size=64 << 10))
    lines = [item for batch in batches for item in batch]
    assert lines[0] == b"first"
    assert lines[1] is OVERSIZED
    assert lines[2] == b"last"
    assert max(len(item) for item in lines) == 5
