"""A ratchet baseline of one metric generation never judges a report of the other."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_entropy.core.meter import measure
from pytest_entropy.testing.ratchet import check_baseline
from tests.v3_support import wobble_traces


def test_a_v3_entry_records_its_generation_and_refuses_v2(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    v3 = measure(wobble_traces(), metric_version=3)
    assert check_baseline(path, "sessions", v3).status == "created"
    entry = json.loads(path.read_text())["entries"]["sessions"]
    assert entry["metricVersion"] == 3
    assert check_baseline(path, "sessions", v3).status == "unchanged"
    assert check_baseline(path, "sessions", v3.to_json()).status == "unchanged"
    result = check_baseline(path, "sessions", measure(wobble_traces()))
    assert (result.status, result.passed) == ("kind-mismatch", False)
    assert "tracks a metric v3 report, not a metric v2 one" in result.lines()[0]


def test_a_v2_entry_keeps_its_bytes_and_refuses_v3(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    v2 = measure(wobble_traces())
    check_baseline(path, "sessions", v2)
    assert "metricVersion" not in json.loads(path.read_text())["entries"]["sessions"]
    before = path.read_bytes()
    result = check_baseline(path, "sessions", measure(wobble_traces(), metric_version=3))
    assert (result.status, result.passed) == ("kind-mismatch", False)
    assert "tracks a metric v2 report, not a metric v3 one" in result.lines()[0]
    assert path.read_bytes() == before
    assert check_baseline(path, "sessions", v2).passed
