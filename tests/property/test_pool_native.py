"""The pool's window summaries and files: what a scan hands the window tally one field at a
time equals the summary of the records (counts in first-seen order, digests, dropped and
oversized counts), numbers are identified by their JavaScript text, a loaded pool judges
its counts one by one, and the ``pool`` command writes the same bytes on the Rust core and
on the plain path. (The C kernel these were first written for is gone; the Rust core's
window tally is compared in ``test_native_tallies.py``.)"""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_entropy.cli import main
from pytest_entropy.core.jscompat import is_safe_integer_at_least, value_key
from pytest_entropy.core.pool import (
    POOL_MAX_VALUE_BYTES,
    PoolMerger,
    WindowSummary,
    merge_observation_window,
    parse_observation_pool,
    summarize_window,
    tally_summary,
)
from pytest_entropy.core.pool_window import window_tally
from pytest_entropy.core.records import ValueObservation
from pytest_entropy.ingest.native_pool import NativePoolMerger
from pytest_entropy.run.corpus import CorpusPlan, read_corpus, source_files
from tests.native_core_support import native_core_module
from tests.native_support import paths
from tests.sessions_support import write_native_sessions

PATHS = ("native", "plain")


class Text(str):
    """A str subclass (a caller's own string type)."""


ASTRAL = "\U0001f600"
# Strings whose UTF-16 order differs from code-point order, lone surrogates (the same code
# units as an astral character), JavaScript white space at the edges, U+0000.
TEXTS = st.one_of(
    st.sampled_from(
        [
            "a",
            "b",
            "",
            " a",
            "a ",
            "\ufeffa",
            "a\u3000",
            "a\x00b",
            "é",
            ASTRAL,
            "\uffff",
            "\ue000",
            "\ud83d\ude00",
            "\ud83d",
            "\ude00",
            "z" + ASTRAL,
            "z\uffff",
            "10",
            "A",
        ]
    ),
    st.text(max_size=6),
    st.text(alphabet=st.characters(min_codepoint=0xD000, max_codepoint=0x1F64F), max_size=4),
)
NUMBERS = st.one_of(
    st.integers(-50, 50),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**53, 2**53 + 1, -(2**53), -(2**53) - 1, 2**63, -(2**63) - 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        [
            0.0,
            -0.0,
            1.0,
            -3.0,
            0.1,
            1e21,
            1e-7,
            1.5e-7,
            123456789012345680000.0,
            5e-324,
            1.7976931348623157e308,
            1e16,
            2.0**53,
            0.000001,
            1e-6,
            100.5,
            float("nan"),
        ]
    ),
)
VALUES = st.one_of(
    TEXTS,
    NUMBERS,
    st.booleans(),
    st.text(min_size=9, max_size=40),  # long enough to pass small value bounds
    st.builds(Text, st.text(max_size=4)),
)
REFS = st.one_of(st.sampled_from(["mcp.a", "mcp.b", " mcp.c", ""]), TEXTS)
KEYS = st.one_of(st.sampled_from(["k", "q", "k\x00", "\u2028k"]), TEXTS)
BOUNDS = st.one_of(st.none(), st.integers(-2, 60), st.just(POOL_MAX_VALUE_BYTES))


def _summary_of(records: list[ValueObservation], drop: bool, bound: int | None) -> WindowSummary:
    return summarize_window("f", records, drop_unloadable=drop, max_value_bytes=bound)


def _same(summaries: list[WindowSummary]) -> None:
    first = summaries[0]
    for other in summaries[1:]:
        assert other == first
        assert list(other.counts.items()) == list(first.counts.items())  # first-seen order


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(REFS, KEYS, VALUES), max_size=30), BOUNDS)
def test_the_fields_tally_equals_the_records(
    fields: list[tuple[Any, Any, Any]], bound: Any
) -> None:
    """What the scan hands the tally (``add``) equals the summary of the records."""
    records = [ValueObservation(ref, key, value) for ref, key, value in fields]
    expected = _summary_of(records, True, bound)
    tally = window_tally(True, bound)
    for ref, key, value in fields:
        tally.add(ref, key, value)
    _same([expected, tally_summary("f", tally)])


def test_numbers_that_differ_only_in_javascript_text() -> None:
    """1 and 1.0 are one identity; 2**53+1 arrives as 2**53; 1e21 is written 1e+21."""
    values: list[Any] = [1, 1.0, True, 2**53 + 1, 2.0**53, 1e21, 10.0**21, -0.0, 0, 1e-7, 5e-324]
    records = [ValueObservation("mcp.a", "k", value) for value in values]
    identities = [identity.split("\x00")[2] for identity in _summary_of(records, True, None).counts]
    assert identities == [
        "number:1",
        "boolean:true",
        "number:9007199254740992",
        "number:1e+21",
        "number:0",
        "number:1e-7",
        "number:5e-324",
    ]


# ------------------------------------------------------------------- end to end


def _pool_bytes(
    capsys: pytest.CaptureFixture[str], kind: str, sessions: Path, out: Path, *more: str
) -> tuple[bytes, str]:
    capsys.readouterr()
    with paths(kind):
        code = main(["pool", "--sessions", str(sessions), "--out", str(out), *more])
    assert code == 0
    return out.read_bytes(), capsys.readouterr().out


def _hostile_traces() -> list[dict[str, Any]]:
    values: list[Any] = [
        "é",
        ASTRAL,
        "\uffff",
        " pad ",
        1,
        1.0,
        2**53 + 1,
        1e21,
        0.1,
        True,
        False,
        "x" * 70_000,
        *range(40),
    ]
    traces = []
    for index, value in enumerate(values):
        args = {"k": value, "q": f"v{index % 3}", "\u3000": 1, "n": [1]}
        traces.append({"taskKey": "t", "operations": [{"ref": "mcp.a", "args": args}]})
    return traces


def test_the_pool_command_writes_the_same_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    traces = _hostile_traces()
    for index in range(3):
        write_native_sessions(sessions / f"s{index}.jsonl", traces[index * 5 :])
    results = [
        _pool_bytes(capsys, kind, sessions, tmp_path / f"{kind}.json", "--json") for kind in PATHS
    ]
    texts = [
        text.replace(str(tmp_path / f"{kind}.json"), "OUT")
        for kind, (_, text) in zip(PATHS, results, strict=True)
    ]
    assert results[0][0] == results[1][0]
    assert texts[0] == texts[1]
    pool = json.loads(results[0][0])
    assert pool["entries"] and json.loads(texts[0])["oversizedValues"] == 3


def test_the_pool_command_on_a_real_corpus(
    shared_corpora: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = shared_corpora / "pi-sessions" / "sessions"
    if not sessions.is_dir():
        pytest.skip(f"{sessions} is missing")
    results = [_pool_bytes(capsys, kind, sessions, tmp_path / f"{kind}.json") for kind in PATHS]
    assert results[0][0] == results[1][0]
    assert json.loads(results[0][0])["entries"]


COUNT_VALUES = st.one_of(
    st.integers(-2, 5),
    st.sampled_from([2**53 - 1, 2**53, 2**70, True, 1.0, 2.5, float("nan"), "1", None]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=3), COUNT_VALUES, max_size=5), max_size=4))
def test_a_loaded_pool_judges_its_counts_one_by_one(counts: list[dict[str, Any]]) -> None:
    value = {
        "version": 1,
        "entries": [],
        "tracked": [
            {"file": f"s{i}", "digest": f"d{i}", "counts": c} for i, c in enumerate(counts)
        ],
        "baked": [],
    }
    parsed = parse_observation_pool(value)
    every_count_safe = all(
        is_safe_integer_at_least(count, 1) for tracked in counts for count in tracked.values()
    )
    assert (parsed is not None) == every_count_safe
    if parsed is not None:
        assert [session["counts"] for session in parsed["tracked"]] == counts


# ----------------------------------------------------------------------- the merge

# Identities as windows spell them, and spellings no window makes (no NUL, a NUL inside the
# key, a number text no String(number) gives) that a loaded pool's tracked counts may hold.
IDENTITIES = st.one_of(
    st.builds(lambda ref, key, value: f"{ref}\x00{key}\x00{value_key(value)}", REFS, KEYS, VALUES),
    st.sampled_from(
        [
            "mcp.a",
            "mcp.a\x00k",
            "mcp.a\x00k\x00number:1e+21",
            "mcp.a\x00k\x00number:-0",
            "mcp.a\x00k\x00boolean:false",
            "mcp.a\x00k\x00string:x\x00y",
            "mcp.a\x00k\x00string:" + ASTRAL,
            "mcp.a\x00k\x00string:\ud83d\ude00",
        ]
    ),
    # One ref and key with many values: more than the sixteen an entry keeps.
    st.integers(0, 40).map(lambda n: f"mcp.b\x00k\x00number:{n}"),
)
COUNTS = st.dictionaries(IDENTITIES, st.integers(1, 6), max_size=24)
LOADED_VALUES = st.lists(
    st.fixed_dictionaries({"value": VALUES, "count": st.integers(1, 9)}), max_size=20
)
LOADED_POOLS = st.fixed_dictionaries(
    {
        "version": st.just(1),
        "entries": st.lists(
            st.fixed_dictionaries(
                {
                    "ref": st.sampled_from(["mcp.a", "mcp.b", "mcp.a\x00k", "\ud83d"]),
                    "key": st.sampled_from(["k", "", "k\x00"]),
                    "total": st.integers(0, 60),
                    "values": LOADED_VALUES,
                }
            ),
            max_size=4,
        ),
        "tracked": st.lists(
            st.builds(
                lambda file, digest, counts: {"file": file, "digest": digest, "counts": counts},
                st.sampled_from(["f0", "f1", "f2"]),
                st.sampled_from(["d0", "d1", "d2"]),
                COUNTS,
            ),
            max_size=3,
        ),
        "baked": st.lists(st.sampled_from(["d3", "d4"]), max_size=2),
    }
)
WINDOWS = st.lists(
    st.builds(
        WindowSummary,
        st.sampled_from(["f0", "f1", "f2", "f3"] + [f"g{n}" for n in range(18)]),
        COUNTS,
        st.sampled_from(["d0", "d1", "d2", "d3", "d5", "d6", "d7"]) | st.text(max_size=3),
        st.integers(0, 2),
        st.integers(0, 2),
    ),
    max_size=24,
)


@settings(max_examples=200, deadline=None)
@given(st.none() | LOADED_POOLS, WINDOWS, st.lists(st.booleans(), min_size=24, max_size=24))
def test_the_merge_in_the_core_is_the_plain_merge(
    pool: dict[str, Any] | None, windows: list[WindowSummary], in_core: list[bool]
) -> None:
    """``NativePoolMerger`` (entries in the Rust core) against ``PoolMerger``, the
    specification: loaded entries and tracked counts, growing and rewritten files
    (retractions), skips by digest, eviction past sixteen values, spellings of the same code
    units, and a window's counts given as a dict or as the core's ``WindowCounts`` (pickled
    on the way, as a worker's are)."""
    core = native_core_module()
    plain = PoolMerger(copy.deepcopy(pool))
    native = NativePoolMerger(copy.deepcopy(pool), core)
    for window, wrapped in zip(windows, in_core, strict=False):
        plain.add(window)
        if wrapped:
            counts = pickle.loads(pickle.dumps(core.WindowCounts(window.counts)))
            assert counts.to_dict() == window.counts and len(counts) == len(window.counts)
            window = dataclasses.replace(window, counts=counts)
        native.add(window)
    # repr: a NaN value is the same text on both sides, and int stays apart from float.
    assert repr(native.result().to_json()) == repr(plain.result().to_json())


def test_a_scan_leaves_the_window_counts_in_the_core(tmp_path: Path) -> None:
    """What a scan gathers for the pool is a ``WindowCounts`` (in first-seen order), which the
    merge takes as it is; the plain path's window holds the same dict."""
    core = native_core_module()
    sessions = tmp_path / "s"
    sessions.mkdir()
    write_native_sessions(sessions / "a.jsonl", _hostile_traces())
    plan = CorpusPlan(meter=False, proposals=False, windows=True, audit_refs=False)
    gathered: dict[str, Any] = {}
    original = PoolMerger.add
    seen: list[WindowSummary] = []

    def add(merger: PoolMerger, summary: WindowSummary) -> PoolMerger:
        seen.append(summary)
        return original(merger, summary)

    for kind in PATHS:
        seen = []
        with paths(kind), patch.object(PoolMerger, "add", add):
            read = read_corpus(source_files([sessions / "a.jsonl"]), plan)
            merged = read.merged_pool()
        assert type(read.pool) is (NativePoolMerger if kind == "native" else PoolMerger)
        gathered[kind] = (seen, merged.to_json())
    (native_seen, native_pool), (plain_seen, plain_pool) = gathered["native"], gathered["plain"]
    assert type(native_seen[0].counts) is core.WindowCounts
    assert type(plain_seen[0].counts) is dict
    assert list(native_seen[0].counts.to_dict().items()) == list(plain_seen[0].counts.items())
    assert native_seen[0].digest == plain_seen[0].digest
    assert repr(native_pool) == repr(plain_pool) and native_pool["file"]["entries"]


def _valued(values: list[tuple[str, int]]) -> list[dict[str, Any]]:
    return [
        {"taskKey": "t", "operations": [{"ref": "mcp.a", "args": {"k": value}}]}
        for value, times in values
        for _ in range(times)
    ]


def test_a_total_that_drifts_below_zero_is_written_as_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file whose values overflowed the sixteen an entry keeps, rewritten without them:
    the retraction of the evicted values still subtracts (spec §14 #10), so the total falls
    below zero while another file's value keeps the entry. The pool's own loader rejects a
    negative total; the default writes 0 and says so (``clampedTotals``), on both paths, and
    the reference mode keeps the reference's negative total."""
    results = []
    for kind in PATHS:
        # One place for both paths: the tracked sessions name their files.
        sessions = tmp_path / "sessions"
        sessions.mkdir(exist_ok=True)
        out = tmp_path / "pool.json"
        out.unlink(missing_ok=True)
        write_native_sessions(sessions / "a.jsonl", _valued([(f"v{n}", 2) for n in range(32)]))
        write_native_sessions(sessions / "b.jsonl", _valued([("x", 3)]))
        first, _ = _pool_bytes(capsys, kind, sessions, out)
        assert (
            json.loads(first)["entries"][0]["total"] == 33
        )  # sixteen v kept (32), x (3) evicted one more v (2)
        write_native_sessions(sessions / "a.jsonl", [{"taskKey": "t", "operations": []}])
        written, text = _pool_bytes(capsys, kind, sessions, out, "--pool-in", str(out), "--json")
        report = json.loads(text)
        assert report["clampedTotals"] == 1 and report["mergedSessions"] == 1
        pool = json.loads(written)
        assert pool["entries"] == [
            {"ref": "mcp.a", "key": "k", "total": 0, "values": [{"value": "x", "count": 3}]}
        ]
        assert parse_observation_pool(pool) == pool
        results.append((written, text.replace(str(out), "OUT")))
    assert results[0] == results[1]
    # The reference mode: the same merge keeps the total of -31, which its loader rejects.
    windows = [
        {
            "file": "a",
            "observations": [
                {"ref": "mcp.a", "key": "k", "value": f"v{n}", "count": 2} for n in range(32)
            ],
        },
        {"file": "b", "observations": [{"ref": "mcp.a", "key": "k", "value": "x", "count": 3}]},
    ]
    for drop, total in ((False, -31), (True, 0)):
        once = merge_observation_window(None, windows, drop_unloadable=drop)
        again = merge_observation_window(
            once.file, [{"file": "a", "observations": []}], drop_unloadable=drop
        )
        assert again.file["entries"][0]["total"] == total
        assert again.clamped_totals == (1 if drop else 0)
        assert (parse_observation_pool(again.file) is not None) == drop
