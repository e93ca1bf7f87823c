"""The replay's line selection: one RE2 search per batch selects exactly the lines the plain
rule (``_may_mention``: a backslash, or a quoted ref among the line's bytes) selects, on
generated lines and refs (non-ASCII and invalid UTF-8 bytes, refs that are prefixes of one
another, regex metacharacters, lines that are empty, oversized or all backslashes)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_entropy.ingest.lines import OVERSIZED
from pytest_entropy.ingest.mentions import mention_lines
from pytest_entropy.ingest.native import _may_mention

_ALPHABET = b'ab"\\.*|()[]?+\xc3\xa9\xff\x00{}:'
_piece = st.binary(max_size=6).map(lambda raw: bytes(_ALPHABET[b % len(_ALPHABET)] for b in raw))
refs = st.lists(
    st.one_of(st.sampled_from(["a", "ab", "a.b", "a|b", "(x)", "é", "get_weather"]), st.text()),
    max_size=5,
).map(
    lambda names: tuple(sorted({b'"' + n.encode("utf-8", "surrogatepass") + b'"' for n in names}))
)


@st.composite
def batches(draw: st.DrawFn, mentions: tuple[bytes, ...]) -> list[bytes]:
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        parts = draw(
            st.lists(st.one_of(_piece, st.sampled_from([*mentions, b"\\", b'"'])), max_size=8)
        )
        lines.append(b"".join(parts))
    if draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), OVERSIZED)
    return lines


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_the_batch_search_selects_what_the_plain_rule_selects(data: st.DataObject) -> None:
    mentions = data.draw(refs)
    batch = data.draw(batches(mentions))
    expected = {i for i, raw in enumerate(batch) if _may_mention(raw, mentions)}
    assert mention_lines(mentions, _may_mention)(batch) == expected


def test_a_mention_at_the_end_of_the_last_line_is_found() -> None:
    batch = [b"x", b"", b'tail "ref"']
    assert mention_lines((b'"ref"',), _may_mention)(batch) == {2}
    assert mention_lines((b'"ref"',), _may_mention)([b'"ref"', b'"ref"']) == {0, 1}
    assert mention_lines((b'"ref"',), _may_mention)([b'"re', b'f"']) == set()
