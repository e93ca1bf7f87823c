"""ToolBench DFSDT answer trees (``toolbench-data-example``), every branch."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.formats_support import corpus, corpus_operations, damage, round_trip

ANSWERS = "toolbench-data-example/data_example/answer"


def test_every_tree_call_with_its_status_code(shared_corpora: Path) -> None:
    files, diagnostics = corpus([shared_corpora / ANSWERS], "toolbench")
    assert len(files) == 15
    ops = corpus_operations(files)
    assert diagnostics.foreign_calls == len(ops) == 328
    assert len({op.ref for op in ops}) == 42
    # README: code 0 x209, 3 x9, 4 x19 (succeeded); 1 x14 (no such function: resolve);
    # 11 x42 and 12 x34 (API and HTTP errors: invoke); 5 x1 (timeout).
    assert Counter((op.outcome, op.failure_stage) for op in ops) == {
        ("succeeded", None): 237,
        ("failed", "resolve"): 14,
        ("failed", "invoke"): 76,
        ("timed_out", None): 1,
    }
    assert damage(diagnostics) == {}


def test_converted_trees_measure_the_same(shared_corpora: Path, tmp_path: Path) -> None:
    direct, native = round_trip([shared_corpora / ANSWERS], tmp_path, "toolbench")
    assert direct == native
