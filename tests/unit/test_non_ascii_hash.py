"""What the stable hash does with non-ASCII keys (see docs/decisions.md)."""

from __future__ import annotations

import json

import pytest

from pytest_entropy.core.canonical import canonical_json, icu_version


def order(keys: list[str]) -> list[str]:
    return list(json.loads(canonical_json(dict.fromkeys(keys, 0))))


def test_icu_is_the_pinned_major_version() -> None:
    assert icu_version().split(".")[0] == "77"


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (["f", "é", "e"], ["e", "é", "f"]),
        (["c", "B", "a", "b"], ["a", "b", "B", "c"]),
        (["日本", "Ω", "я", "z"], ["z", "Ω", "я", "日本"]),
        (["a", "_", "1x", "-"], ["_", "-", "1x", "a"]),
        (["b", "10", "2", "01"], ["2", "10", "01", "b"]),
    ],
)
def test_collation_examples(keys: list[str], expected: list[str]) -> None:
    assert order(keys) == expected


def test_canonically_equivalent_keys_tie_and_keep_their_order() -> None:
    forms = ["\u212b", "\u00c5", "A\u030a"]
    assert order(forms) == forms
    assert order(list(reversed(forms))) == list(reversed(forms))


def test_ignorable_control_characters_tie() -> None:
    assert order(["a\u0000", "a"]) == ["a\u0000", "a"]
    assert order(["a", "a\u0000"]) == ["a", "a\u0000"]


def test_lone_surrogates_sort_after_letters_in_code_unit_order() -> None:
    assert order(["\udfff", "\ud800", "z"]) == ["z", "\ud800", "\udfff"]
    assert canonical_json({"\ud800": 1}) == '{"\\ud800":1}'
