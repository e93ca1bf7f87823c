"""The issue 28 benchmark's corpus builder and arithmetic (``bench/real_call_corpus.py``,
``bench/issue28_goals.py``): no timing is asserted, only what is computed from numbers."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
TRACE_MARK = b'"kind":"pi-fabric.execution"'


def _bench_module(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(name)


@pytest.fixture(scope="module")
def goals() -> ModuleType:
    return _bench_module("issue28_goals")


@pytest.fixture(scope="module")
def builder() -> ModuleType:
    return _bench_module("real_call_corpus")


# ------------------------------------------------------------------------------ arithmetic


def test_ratio_is_ours_over_the_floor_and_judged_against_the_commands_goal(
    goals: ModuleType,
) -> None:
    measure = goals.judge_ratio("measure", 0.9, 2.0)
    assert measure["ratio"] == pytest.approx(0.45)
    assert (measure["goal"], measure["passed"]) == (0.5, True)
    propose = goals.judge_ratio("propose", 1.7, 2.0)
    assert propose["ratio"] == pytest.approx(0.85)
    assert (propose["goal"], propose["passed"]) == (0.8, False)
    # the goal itself is met (≤), just above it is not
    assert goals.judge_ratio("trial", 3.0, 2.0)["passed"] is True
    assert goals.judge_ratio("trial", 3.02, 2.0)["passed"] is False
    assert goals.judge_ratio("compile", 2.4, 2.0)["passed"] is True
    assert goals.judge_ratio("pool", 1.7, 2.0)["passed"] is False
    with pytest.raises(ValueError, match="parse floor"):
        goals.judge_ratio("measure", 1.0, 0.0)


def test_the_goals_are_the_issues(goals: ModuleType) -> None:
    assert goals.RATIO_GOALS == {
        "measure": 0.5,
        "propose": 0.8,
        "compile": 1.2,
        "trial": 1.5,
        "pool": 0.8,
    }
    assert goals.RSS_GOALS_MB == {
        "measure": 64,
        "propose": 64,
        "compile": 64,
        "trial": 96,
        "pool": 64,
    }
    assert (goals.LINEAR_FACTOR, goals.LINEAR_TOLERANCE) == (10, 0.15)


def test_peak_rss_must_stay_under_the_goal_at_every_size_and_flat(goals: ModuleType) -> None:
    flat = goals.judge_rss("measure", {288: 43_000_000, 36: 40_000_000, 160: 41_000_000})
    assert flat["peak_mb"] == {"36": 40.0, "160": 41.0, "288": 43.0}
    assert flat["growth"] == pytest.approx(0.075)
    assert (flat["within_goal"], flat["flat"], flat["passed"]) == (True, True, True)
    growing = goals.judge_rss("measure", {36: 40_000_000, 288: 45_000_000})
    assert growing["growth"] == pytest.approx(0.125)
    assert (growing["within_goal"], growing["flat"], growing["passed"]) == (True, False, False)
    # 90 MB: under the trial's goal, over the others'
    assert goals.judge_rss("trial", {36: 90_000_000, 288: 90_000_000})["passed"] is True
    over = goals.judge_rss("pool", {36: 90_000_000, 288: 90_000_000})
    assert (over["within_goal"], over["flat"], over["passed"]) == (False, True, False)
    with pytest.raises(ValueError, match="no peak RSS"):
        goals.judge_rss("measure", {})


def test_linearity_is_ten_times_the_time_within_fifteen_percent(goals: ModuleType) -> None:
    exact = goals.judge_linearity(1.5, 15.0)
    assert exact["ratio"] == pytest.approx(10.0)
    assert (exact["low"], exact["high"]) == (pytest.approx(8.5), pytest.approx(11.5))
    assert exact["passed"] is True
    assert goals.judge_linearity(1.0, 8.5)["passed"] is True
    assert goals.judge_linearity(1.0, 8.4)["passed"] is False
    assert goals.judge_linearity(1.0, 11.5)["passed"] is True
    assert goals.judge_linearity(1.0, 11.6)["passed"] is False
    # another factor moves the band with it
    assert goals.judge_linearity(1.0, 4.0, factor=4)["passed"] is True
    assert goals.judge_linearity(1.0, 10.0, factor=4)["passed"] is False
    with pytest.raises(ValueError, match="small corpus"):
        goals.judge_linearity(0.0, 1.0)


def _row(goals: ModuleType, command: str, seconds: float, peak: int) -> dict[str, Any]:
    return {
        "time": goals.judge_ratio(command, seconds, 1.0),
        "wall_ratio": seconds,
        "rss": goals.judge_rss(command, {36: peak, 288: peak}),
        "linearity": goals.judge_linearity(1.0, 10.0),
    }


def test_a_run_passes_only_when_every_judged_goal_is_met(goals: ModuleType) -> None:
    commands = {name: _row(goals, name, 0.4, 50_000_000) for name in goals.COMMANDS}
    results = {"corpora": {"generated": {"commands": commands}}}
    judged = goals.verdicts(results)
    assert len(judged) == 15
    assert judged[0] == ("generated measure time", True)
    assert goals.all_passed(results) is True
    commands["trial"] = _row(goals, "trial", 1.6, 50_000_000)
    failed = [label for label, passed in goals.verdicts(results) if not passed]
    assert failed == ["generated trial time"]
    assert goals.all_passed(results) is False
    assert goals.all_passed({"corpora": {}}) is False


def test_the_table_prints_each_verdict(goals: ModuleType) -> None:
    measured = {
        "summary": "2 files",
        "floor": {"cpu": 1.0, "wall": 1.2},
        "commands": {
            "measure": _row(goals, "measure", 0.4, 50_000_000),
            "propose": _row(goals, "propose", 1.2, 70_000_000),
        },
    }
    lines = goals.table_lines("real-calls", measured)
    measure = next(line for line in lines if line.startswith("| measure |"))
    propose = next(line for line in lines if line.startswith("| propose |"))
    assert "| 0.40 | ≤ 0.5 | pass |" in measure
    assert "| 1.20 | ≤ 0.8 | FAIL |" in propose
    assert "| 70 / 70 | ≤ 64 | FAIL |" in propose
    assert measure.endswith("| 10.00 | pass |")


# ------------------------------------------------------------------------------ the builder


def _codex_spec(builder: ModuleType) -> Any:
    return next(spec for spec in builder.REAL_CALL_CORPORA if spec.name == "codex-rollouts")


def test_call_less_trace_lines_are_left_out(builder: ModuleType) -> None:
    empty = b'{"details":{"trace":{"kind":"pi-fabric.execution","operations":[]},"audits":[]}}\n'
    full = b'{"details":{"trace":{"kind":"pi-fabric.execution","operations":[{"ref":"a"}]}}}\n'
    other = b'{"type":"model_change","modelId":"m"}\n'
    assert builder.call_lines(other + empty + full + empty) == other + full


def test_one_pass_packs_every_session_once_into_groups_of_about_equal_size(
    builder: ModuleType,
) -> None:
    assert builder.packed_rotation([10, 10, 10, 10, 10, 10], 3) == [[0, 1], [2, 3], [4, 5]]
    # a big session fills its group; no group is left empty
    assert builder.packed_rotation([100, 1, 1, 1], 3) == [[0], [1], [2, 3]]
    assert builder.packed_rotation([1, 1, 1, 100], 3) == [[0, 1], [2], [3]]
    with pytest.raises(SystemExit, match="fewer than"):
        builder.packed_rotation([1, 2], 3)
    sessions = [b"a", b"bb", b"ccc"]
    groups = [[0, 1], [2]]
    assert [builder.rotated_file(sessions, groups, i) for i in range(5)] == [
        b"abb",
        b"ccc",
        b"abb",
        b"ccc",
        b"abb",
    ]


def test_the_real_call_corpus_is_deterministic_and_a_prefix_of_a_bigger_one(
    builder: ModuleType, tmp_path: Path
) -> None:
    spec = _codex_spec(builder)
    sizes = {"rotation_files": 2, "megabytes": 0.11, "specs": [spec]}
    missing = tmp_path / "no-corpora"
    small = builder.build_real_calls(tmp_path / "a", missing, files=4, **sizes)
    big = builder.build_real_calls(tmp_path / "b", missing, files=6, **sizes)
    small_files = sorted(small.pool.glob("*.jsonl"))
    big_files = sorted(big.pool.glob("*.jsonl"))
    assert [p.name for p in small_files] == [f"session-{i:04d}.jsonl" for i in range(4)]
    assert len(big_files) == 6
    assert [p.read_bytes() for p in small_files] == [p.read_bytes() for p in big_files[:4]]
    # one pass over the sessions fills two files, then it repeats
    assert small_files[2].read_bytes() == small_files[0].read_bytes()
    assert small.stats["rotation"]["files"] == 2
    rotation = small.stats["rotation"]["bytes"]
    assert rotation == sum(len(p.read_bytes()) for p in small_files[:2])
    # the main corpus is the number of files nearest to the size asked for
    assert small.main_files == round(0.11e6 * 2 / rotation) == 4
    # a view is the first files of the pool; the stats count the main corpus's lines
    view = sorted(big.view(4).glob("*.jsonl"))
    assert [p.read_bytes() for p in view] == [p.read_bytes() for p in big_files[:4]]
    view = sorted(small.view(2).glob("*.jsonl"))
    assert [p.read_bytes() for p in view] == [p.read_bytes() for p in small_files[:2]]
    data = b"".join(p.read_bytes() for p in big_files[:4])
    stats = small.stats["main_corpus"]
    assert stats["bytes"] == len(data)
    assert stats["lines"] == len([line for line in data.splitlines() if line])
    assert stats["trace_lines"] == data.count(TRACE_MARK) > 0
    assert stats["operations"] > stats["trace_lines"]  # several calls to a line
    assert small.stats["sources"] == {"codex-rollouts": 2}
    # every trace line holds a call or an audit
    for line in data.splitlines():
        if TRACE_MARK in line:
            assert b'"operations":[]' not in line or b'"audits":[]' not in line
    # growing a pool keeps its files; a second build reuses the cache
    grown = builder.build_real_calls(tmp_path / "a", missing, files=6, **sizes)
    assert [p.read_bytes() for p in sorted(grown.pool.glob("*.jsonl"))] == [
        p.read_bytes() for p in big_files
    ]
    assert json.loads(small.surface.read_text(encoding="utf-8")) == {
        "version": 1,
        "actions": [],
    }


def test_the_real_call_corpus_says_when_the_shared_corpora_are_absent(
    builder: ModuleType, tmp_path: Path
) -> None:
    with pytest.raises(builder.CorporaMissingError, match="shared corpora are not here"):
        builder.build_real_calls(tmp_path / "cache", tmp_path / "absent", files=2)
    assert builder.main(["--cache", str(tmp_path / "c"), "--corpora", str(tmp_path / "x")]) == 2


def test_the_generated_corpus_is_deterministic_with_a_surface_of_its_refs(
    builder: ModuleType, tmp_path: Path
) -> None:
    first = builder.build_generated(tmp_path / "a", files=3, main_files=2, megabytes=0.02)
    second = builder.build_generated(tmp_path / "b", files=2, main_files=2, megabytes=0.02)
    first_bytes = [p.read_bytes() for p in sorted(first.pool.glob("*.jsonl"))]
    second_bytes = [p.read_bytes() for p in sorted(second.pool.glob("*.jsonl"))]
    assert len(first_bytes) == 3
    assert first_bytes[:2] == second_bytes
    assert first_bytes[0] != first_bytes[1]
    surface = json.loads(first.surface.read_text(encoding="utf-8"))
    refs = [action["ref"] for action in surface["actions"]]
    corpus_gen = _bench_module("corpus_gen")
    assert refs == list(corpus_gen.ACTIONS)
    read = next(a["inputSchema"] for a in surface["actions"] if a["ref"] == "pi.read")
    assert read["properties"] == {
        "limit": {"type": "integer"},
        "offset": {"type": "integer"},
        "path": {"type": "string"},
    }


def test_the_docs_table_keeps_corpus_sizes_in_numeric_order_after_json(
    goals: ModuleType,
) -> None:
    row = _row(goals, "measure", 0.4, 50_000_000)
    row["rss"] = goals.judge_rss("measure", {36: 40_000_000, 115: 41_000_000, 288: 42_000_000})
    run = {
        "machine": {
            "date": "2026-12-02T08:00:00Z",
            "commit": "0123456789abcdef",
            "path": "python (no native core)",
            "load_average_start": [1.0, 2.0, 3.0],
            "load_average_end": [1.5, 2.0, 3.0],
        },
        "corpora": {
            "real-calls": {
                "summary": "115 files",
                "floor": {"cpu": 0.2, "wall": 0.3},
                "commands": {"measure": row},
            }
        },
    }
    lines = goals.docs_lines([json.loads(json.dumps(run, sort_keys=True))] * 2)
    assert "peak RSS MB (36 / 115 / 288 files)" in next(line for line in lines if "RSS" in line)
    measure = next(line for line in lines if line.startswith("| measure |"))
    assert measure.startswith("| measure | 0.40 / 0.40 | ≤ 0.5 | **yes** | 2.4 |")
    assert "| 40 / 41 / 42; 40 / 41 / 42 | ≤ 64 | **yes** |" in measure
    assert lines[0].startswith("- run 1: 2026-12-02T08:00:00Z, commit 0123456789,")
