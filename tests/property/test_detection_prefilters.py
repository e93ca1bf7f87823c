"""Format detection's cheap first tests decide as the definitions they stand before.

``document_start`` skips the copy ``bytes.lstrip`` makes when the head starts with no blank,
and ``detect_bfcl`` tests the anchored start of its pattern before anything searches the
head (once ``"result"`` was searched for in every head first). Both must give exactly the
answers of the plain definitions on any head: blanks of every kind (including ``\\x0b`` and
``\\x0c``, which ``bytes.strip`` and a bytes pattern's ``\\s`` both take, and ones neither
takes), nested and truncated entries, a head of blanks only.
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from pytest_entropy.ingest.detection import blanks_end, document_start
from pytest_entropy.ingest.detectors import _RESULT_ENTRY, detect_bfcl

_BLANK = st.sampled_from([b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c", b"\xa0", b"\x1c", b""])
_PIECE = st.sampled_from(
    [b"{", b"}", b"[", b'"id"', b'"ID"', b'"result"', b":", b",", b'"x"', b'"a\nb"', b"1"]
)
_HEAD = st.lists(st.one_of(_BLANK, _PIECE, st.binary(max_size=4)), max_size=24).map(b"".join)


def _bfcl_as_defined(head: bytes) -> bool:
    return b'"result"' in head and _RESULT_ENTRY.match(head) is not None


@given(_HEAD)
@example(b' \x0b{\x0c"id" : "t-1" ,\n "result": []}')
@example(b'{"id":"a","result":')
@example(b'{"id":"a\nb","result":1}')
@example(b'\xa0{"id":"a","result":1}')
@example(b" \t\n\r\x0b\x0c")
@example(b"")
def test_detect_bfcl_decides_as_its_definition(head: bytes) -> None:
    assert detect_bfcl("x.json", head) is _bfcl_as_defined(head)


@given(_HEAD)
@example(b"")
@example(b" \x0c\x0b[")
@example(b"\xa0{")
def test_document_start_is_the_first_byte_after_the_blanks(head: bytes) -> None:
    assert document_start(head) == head.lstrip()[:1]
    at = blanks_end(head)
    assert head[at : at + 1] == head.lstrip()[:1]
    assert head[:at].strip() == b""
