"""The replay's line selection (``ingest/mentions.py``: one RE2 search per batch) equals the
plain rule (``_may_mention``) on generated batches and refs: refs that are prefixes or
suffixes of one another, empty, quote-holding and long refs, non-ASCII and invalid UTF-8
bytes, newline bytes in refs and lines, escapes, stray quotes, repeated bytes, empty and
oversized lines, one-byte needles. (The C kernel it was once compared with is gone; the Rust
core's own selection is compared in ``test_native_scan_differential.py``.)"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_entropy.ingest.lines import OVERSIZED
from pytest_entropy.ingest.mentions import mention_lines
from pytest_entropy.ingest.native import _may_mention

_ALPHABET = b'ab"\\.:,{}[] \n\xc3\xa9\xff\x00'
_piece = st.binary(max_size=8).map(lambda raw: bytes(_ALPHABET[b % len(_ALPHABET)] for b in raw))
_names = st.one_of(
    st.sampled_from(["a", "ab", "b", "ba", "aba", "", 'a"b', "\\", "\n", "é", "\U0001f600", "a.b"]),
    st.sampled_from(["aaaa", "abab", "x" * 300, "ab" * 140 + "c"]),
    st.text(max_size=6),
    st.binary(max_size=5).map(lambda raw: raw.decode("latin-1")),
)
refs = st.lists(_names, max_size=7).map(
    lambda names: tuple(sorted({b'"' + n.encode("utf-8", "surrogatepass") + b'"' for n in names}))
)


@st.composite
def batches(draw: st.DrawFn, mentions: tuple[bytes, ...]) -> list[bytes]:
    lines = []
    extras = [
        *mentions,
        *(m[1:] for m in mentions),
        *(m[:-1] for m in mentions),
        *(m[: len(m) // 2] for m in mentions),
        *(m[len(m) // 2 :] for m in mentions),
    ]
    for _ in range(draw(st.integers(0, 14))):
        parts = draw(
            st.lists(st.one_of(_piece, st.sampled_from([*extras, b"\\", b'"', b'""'])), max_size=9)
        )
        lines.append(b"".join(parts))
    if draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), OVERSIZED)
    return lines


def _selected(mentions: tuple[bytes, ...], batch: list[bytes]) -> set[int]:
    return mention_lines(mentions, _may_mention)(batch)


@settings(max_examples=250, deadline=None)
@given(st.data(), st.none())
@example(None, ((b'"\n"',), [b'"', b'"']))  # issue 26 item 21: a match across two lines
@example(None, ((b'"\n"', b'"a"'), [b'"', b'"a"', b'x"\n"', b'"\n', b'"']))
def test_the_batch_search_selects_what_the_plain_rule_selects(
    data: st.DataObject | None, case: tuple[tuple[bytes, ...], list[bytes]] | None
) -> None:
    if case is None:
        assert data is not None
        mentions = data.draw(refs)
        batch = data.draw(batches(mentions))
    else:
        mentions, batch = case
    expected = {i for i, raw in enumerate(batch) if _may_mention(raw, mentions)}
    assert _selected(mentions, batch) == expected


@pytest.mark.parametrize(
    ("mentions", "batch", "selected"),
    [
        ((b'"\n"',), [b'"', b'"'], set()),  # the ref spans the boundary of two lines
        ((b'"a\n"',), [b'x"a', b'"', b'"a\n"'], {2}),  # spans lines 0-1, is inside line 2
        ((b'"\n"', b'"b"'), [b'"', b'"b"'], {1}),  # a shorter ref right after the boundary
        ((b'"\n"', b'"z"'), [b'"', b'"', b'"z"'], {2}),
    ],
)
def test_a_match_never_spans_two_lines(
    mentions: tuple[bytes, ...], batch: list[bytes], selected: set[int]
) -> None:
    expected = {i for i, raw in enumerate(batch) if _may_mention(raw, mentions)}
    assert _selected(mentions, batch) == expected == selected


def test_a_one_byte_needle_is_selected_by_its_bytes() -> None:
    mentions = (b'"c"', b"a")
    batch = [b"xa", b'"c"', b"none", b"", b"\\"]
    expected = {i for i, raw in enumerate(batch) if _may_mention(raw, mentions)}
    assert _selected(mentions, batch) == expected == {0, 1, 4}
