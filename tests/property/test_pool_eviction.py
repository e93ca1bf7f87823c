"""The pool's one-pass eviction equals the reference's search per removal; long values are
counted, not stored (hardening round two, item 5)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_entropy.core import pool as pool_module
from pytest_entropy.core.canonical import file_text, stable_json_hash
from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.core.pool import (
    POOL_MAX_VALUE_BYTES,
    POOL_TRACKED_VALUES,
    WindowSummary,
    loadable_observation,
    merge_observation_window,
    parse_observation_pool,
    summarize_window,
)
from pytest_entropy.core.records import ValueObservation, observation_fields


class _Descending:
    def __init__(self, identity: str) -> None:
        self.key = code_unit_key(identity)

    def __lt__(self, other: _Descending) -> bool:
        return self.key > other.key


def simple_evict(entry: dict[str, Any]) -> None:
    """The reference's eviction, as written there: remove the minimum while too many."""
    values = entry["values"]
    while len(values) > POOL_TRACKED_VALUES:
        victim = min(values, key=lambda identity: (values[identity][1], _Descending(identity)))
        entry["total"] -= values[victim][1]
        del values[victim]


VALUES = st.one_of(
    st.integers(-3, 40),
    st.sampled_from(["a", "b", "é", "\U0001f600", "\ufb01", "z", "", "A", "10", "9"]),
    st.text(max_size=3),
    st.booleans(),
)
OBSERVATION = st.fixed_dictionaries(
    {
        "ref": st.sampled_from(["mcp.a", "mcp.b"]),
        "key": st.sampled_from(["k", "q"]),
        "value": VALUES,
        "count": st.integers(1, 5),
    }
)
WINDOW = st.fixed_dictionaries(
    {
        "file": st.sampled_from(["s1.jsonl", "s2.jsonl", "s3.jsonl"]),
        "observations": st.lists(OBSERVATION, max_size=60),
    }
)


@given(windows=st.lists(WINDOW, max_size=6), split=st.integers(0, 6))
def test_one_pass_eviction_is_the_reference_result(
    windows: list[dict[str, Any]], split: int
) -> None:
    fast_first = merge_observation_window(None, windows[:split])
    fast = merge_observation_window(fast_first.file, windows[split:])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pool_module, "_evict", simple_evict)
        slow_first = merge_observation_window(None, windows[:split])
        slow = merge_observation_window(slow_first.file, windows[split:])
    assert file_text(fast.file) == file_text(slow.file)
    assert fast == slow


def test_many_distinct_values_keep_the_top_sixteen() -> None:
    observations = [
        {"ref": "mcp.a", "key": "k", "value": f"v{n:05d}", "count": 1 + n % 7} for n in range(5000)
    ]
    merged = merge_observation_window(None, [{"file": "s.jsonl", "observations": observations}])
    (entry,) = merged.file["entries"]
    assert len(entry["values"]) == POOL_TRACKED_VALUES
    assert {item["count"] for item in entry["values"]} == {7}
    # Ties on the count keep the smallest keys: v00006, v00013, ...
    assert entry["values"][0]["value"] == "v00006"
    assert entry["total"] == 7 * POOL_TRACKED_VALUES


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("x" * POOL_MAX_VALUE_BYTES, True),
        ("x" * (POOL_MAX_VALUE_BYTES + 1), False),
        ("é" * (POOL_MAX_VALUE_BYTES // 2), True),  # two UTF-8 bytes a character
        ("é" * (POOL_MAX_VALUE_BYTES // 2 + 1), False),
    ],
)
def test_a_value_longer_than_64_kib_is_counted_not_stored(value: str, stored: bool) -> None:
    observations = [
        {"ref": "mcp.a", "key": "body", "value": value, "count": 1},
        {"ref": "mcp.a", "key": "body", "value": "short", "count": 2},
    ]
    merged = merge_observation_window(None, [{"file": "s.jsonl", "observations": observations}])
    text = file_text(merged.file)
    assert (value in text) is stored
    assert merged.oversized_values == (0 if stored else 1)
    assert ("oversizedValues" in merged.to_json()) is not stored
    assert parse_observation_pool(json.loads(text)) == merged.file  # the loader accepts it
    (entry,) = merged.file["entries"]
    assert entry["total"] == (3 if stored else 2)
    # The window is still known by the digest of everything it held: merged once.
    again = merge_observation_window(
        merged.file, [{"file": "s.jsonl", "observations": observations}]
    )
    assert (again.merged_sessions, again.skipped_sessions) == (0, 1)
    # The reference's mode stores it.
    reference = merge_observation_window(
        None, [{"file": "s.jsonl", "observations": observations}], drop_unloadable=False
    )
    assert value in file_text(reference.file)


def test_ties_break_in_utf16_code_units() -> None:
    # U+1F600 is written as surrogates (0xD83D ...), below U+FB01 in code units though above
    # it in code points: of 17 values seen once, the reference evicts U+FB01.
    values = [f"v{n:02d}" for n in range(15)] + ["\U0001f600", "\ufb01"]
    observations = [{"ref": "mcp.a", "key": "k", "value": v, "count": 1} for v in values]
    merged = merge_observation_window(None, [{"file": "s.jsonl", "observations": observations}])
    kept = {item["value"] for item in merged.file["entries"][0]["values"]}
    assert kept == set(values) - {"\ufb01"}


def test_eviction_work_is_linear_in_distinct_values(monkeypatch: pytest.MonkeyPatch) -> None:
    # Counted, not timed: the reference's search per removal computes a key for every
    # remaining value at every removal (about 12 million for 5,000 values).
    calls = 0
    original = pool_module.code_unit_key

    def counting(text: str) -> str:
        nonlocal calls
        calls += 1
        return original(text)

    monkeypatch.setattr(pool_module, "code_unit_key", counting)
    observations = [{"ref": "mcp.a", "key": "k", "value": f"v{n}", "count": 1} for n in range(5000)]
    merge_observation_window(None, [{"file": "s.jsonl", "observations": observations}])
    assert calls <= 3 * 5000  # window digest sort, eviction and the written order: each once


OBSERVATIONS = st.lists(
    st.builds(
        ValueObservation,
        st.sampled_from(["pi.read", "", " pad", "a\u0000b", "\U0001f600.tool", "\uffff.x"]),
        st.sampled_from(["path", "mode", "", "k ", "\u00e9"]),
        st.one_of(
            st.text(max_size=3),
            st.integers(-3, 3),
            st.sampled_from([1.0, 2.5, float("inf"), float("nan"), True, 2**60, "x" * 40]),
        ),
        st.one_of(st.none(), st.integers(1, 3)),
    ),
    max_size=40,
)


def _window_by_definition(
    observations: list[ValueObservation], drop: bool, limit: int | None
) -> WindowSummary:
    """Spec §6.2 read literally: drop what the pool could not load back, count each identity,
    hash the sorted identities, then take the values longer than ``limit`` out of the counts."""
    items = [o for o in observations if loadable_observation(o)] if drop else list(observations)
    counts: dict[str, int] = {}
    for observation in items:
        identity = pool_module.observation_identity(observation)
        counts[identity] = counts.get(identity, 0) + observation_fields(observation)[3]
    identities = sorted((pool_module.observation_identity(o) for o in items), key=code_unit_key)
    oversized = 0
    for observation in items:
        value = observation_fields(observation)[2]
        if (
            limit is not None
            and type(value) is str
            and len(value.encode("utf-8", "surrogatepass")) > limit
        ):
            oversized += 1
            counts.pop(pool_module.observation_identity(observation), None)
    return WindowSummary(
        "f", counts, stable_json_hash(identities), len(observations) - len(items), oversized
    )


@given(OBSERVATIONS, st.booleans(), st.sampled_from([None, 16, POOL_MAX_VALUE_BYTES]))
def test_the_window_summary_follows_its_definition(
    observations: list[ValueObservation], drop: bool, limit: int | None
) -> None:
    summary = summarize_window("f", observations, drop_unloadable=drop, max_value_bytes=limit)
    assert summary == _window_by_definition(observations, drop, limit)
    # The records' JSON objects summarise alike.
    objects = [o.to_json() for o in observations]
    assert summarize_window("f", objects, drop_unloadable=drop, max_value_bytes=limit) == summary
