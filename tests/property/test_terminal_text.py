"""``terminal_text`` lets printable text through without its patterns (issue 32: they are
compiled at the first text that needs them); the shortcut changes no output. The oracle
below always searches with the patterns, as the function did before."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from pytest_entropy.report import names

_UNSAFE = re.compile(names._UNSAFE_CLASS)
_SURROGATE = re.compile(names._SURROGATE_CLASS)


def _always_searched(text: str) -> str:
    if _UNSAFE.search(text):
        text = _UNSAFE.sub(names._visible, names._join_pairs(text))
    return text.replace("##[", "##\\x5b")


_PIECES = st.one_of(
    st.characters(min_codepoint=0, max_codepoint=0x7F),
    st.sampled_from(["\x85", "\u061c", "\u200e", "\u2028", "\u202e", "\u2066", "é"]),
    st.sampled_from(["\ud800", "\udc00", "\U0001f600", "##[", "::"]),
)
_TEXT = st.lists(_PIECES, max_size=12).map("".join)


@given(_TEXT)
@example("plain ascii, nothing to escape")
@example("tab\there")
@example("\x7f")
@example("")
def test_the_shortcut_changes_no_text(text: str) -> None:
    assert names.terminal_text(text) == _always_searched(text)
    expected = text
    if _SURROGATE.search(text):
        expected = _SURROGATE.sub(names._visible, names._join_pairs(text))
    assert names.repair_surrogates(text) == expected
