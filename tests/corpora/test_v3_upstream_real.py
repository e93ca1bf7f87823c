"""Metric v3 on real third-party corpora against the upstream's own outputs.

Each corpus is converted to native trace lines by our ``convert`` (the upstream reads only
its native format) exactly as ``tests/data/v3_upstream_cases.py`` did when it ran the
upstream on them; ``tests/data/v3-upstream-real/<name>.json`` keeps the upstream's hashes
(report, proposals, compile, trial, pool, merge, file bytes), never the data.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.v3_upstream_support import assert_matches_upstream, our_outputs

DATA = Path(__file__).parent.parent / "data"


def _cases_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "v3_upstream_cases", DATA / "v3_upstream_cases.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CASES = _cases_module()
NAMES = sorted([*CASES.REAL_CASES, *CASES.REAL_SURFACES])


@pytest.mark.parametrize("name", NAMES)
def test_real_corpus_matches_the_upstream(name: str, shared_corpora: Path, tmp_path: Path) -> None:
    upstream: dict[str, Any] = json.loads(
        (DATA / "v3-upstream-real" / f"{name}.json").read_text(encoding="utf-8")
    )
    case = tmp_path / "case"
    case.mkdir()
    CASES.prepare_real_case(name, shared_corpora, case)
    work = tmp_path / "work"
    work.mkdir()
    ours = our_outputs(case, work)
    summary = upstream["summary"]
    assert ours["report"]["totals"]["traces"] == summary["traces"]
    assert ours["report"]["score"] == summary["score"]
    assert [proposal["kind"] for proposal in ours["proposals"]] == summary["proposals"]
    assert_matches_upstream(ours, upstream)
