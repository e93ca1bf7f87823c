"""``enum_check`` (a set lookup for strings) decides what ``any(js_equal(...))`` decides."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_entropy.core.typebox_values import enum_check, js_equal
from pytest_entropy.testing.strategies import json_values

TWINS = ["a", "\ud800", "", "1", 1, 1.0, -0.0, 0, True, False, None, [], {}, ["a"], {"a": "a"}]
values = st.one_of(st.sampled_from(TWINS), json_values(4))


@settings(max_examples=500, deadline=None)
@given(options=st.lists(values, max_size=8), value=values)
@example(options=["1"], value=1)
@example(options=[True], value="true")
@example(options=["\ud800"], value="\ud800")
def test_the_set_lookup_decides_as_js_equal(options: list[Any], value: Any) -> None:
    expected = any(js_equal(value, option) for option in options)
    assert enum_check(tuple(options))(value, None) is expected
