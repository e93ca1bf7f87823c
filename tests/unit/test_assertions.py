"""Tool authors' helpers: no-increase assertions, determinism, snapshots, the meter object."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.core.compiler import compile_entropy_surface
from pytest_entropy.core.meter import measure, report_hash
from pytest_entropy.core.status import surface_hash
from pytest_entropy.ingest.surfaces import load_surface
from pytest_entropy.testing.assertions import (
    EntropyMeter,
    EntropyRatchet,
    assert_deterministic,
    assert_no_entropy_increase,
    assert_ratchet,
    compare_surfaces,
    result_hash,
    snapshot_text,
)

STR = {"type": "string"}
ENUM = {"type": "string", "enum": ["pdf", "html"]}


def closed(required: list[str] | None = None, **properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": sorted(properties) if required is None else required,
        "properties": properties,
    }


def surface(**schemas: Any) -> dict[str, Any]:
    actions = [{"ref": ref.replace("_", "."), "inputSchema": s} for ref, s in schemas.items()]
    return {"version": 1, "actions": actions}


BEFORE = surface(mcp_render=closed(format=ENUM, title=STR), mcp_ping=closed())
TRACES = [
    {
        "operations": [
            {"ref": "mcp.render", "args": {"format": "pdf", "title": "t"}, "outcome": "succeeded"},
            {"ref": "mcp.render", "args": {"format": "pdf"}, "outcome": "failed",
             "failureStage": "validate"},
        ]
    }
]  # fmt: skip


def test_a_tighter_or_equal_surface_passes() -> None:
    tighter = surface(mcp_render=closed(format={"const": "pdf"}, title=STR), mcp_ping=closed())
    comparison = assert_no_entropy_increase(BEFORE, tighter)
    assert comparison.after_total < comparison.before_total
    assert_no_entropy_increase(BEFORE, BEFORE, TRACES)


def test_a_looser_parameter_fails_naming_ref_and_parameter() -> None:
    looser = surface(mcp_render=closed(["format"], format=STR, title=STR), mcp_ping=closed())
    with pytest.raises(AssertionError) as failure:
        assert_no_entropy_increase(BEFORE, looser)
    message = str(failure.value)
    assert message.splitlines()[0] == "entropy rose: static freedom 2.166667 → 3.25 (+1.083333)"
    assert "  mcp.render: 1.166667 → 2.25 (+1.083333)" in message
    assert "    mcp.render.format: 0.166667 → 1 (+0.833333)" in message
    assert "    mcp.render.title: 1 → 1.25 (+0.25)" in message  # now optional


def test_a_new_tool_is_a_rise() -> None:
    grown = surface(**{"mcp_render": closed(format=ENUM, title=STR), "mcp_ping": closed(),
                       "mcp_new": closed(q=STR)})  # fmt: skip
    with pytest.raises(AssertionError, match=r"mcp\.new: new tool \(freedom 1\)"):
        assert_no_entropy_increase(BEFORE, grown)


def test_an_opened_object_names_additional_properties() -> None:
    opened = surface(
        mcp_render={**closed(format=ENUM, title=STR), "additionalProperties": True},
        mcp_ping=closed(),
    )
    with pytest.raises(AssertionError, match=r"mcp\.render\.\(additional properties\)"):
        assert_no_entropy_increase(BEFORE, opened)


def test_with_sessions_the_score_is_compared() -> None:
    comparison = compare_surfaces(BEFORE, BEFORE, TRACES)
    assert comparison.before_report is not None and comparison.after_report is not None
    assert comparison.before_report.catalog_digest == surface_hash(BEFORE)
    assert not comparison.rose
    looser = surface(mcp_render=closed(format=STR, title=STR), mcp_ping=closed())
    with pytest.raises(AssertionError, match="score over the sessions: "):
        assert_no_entropy_increase(BEFORE, looser, TRACES)


def test_sessions_can_be_files(demo_dir: Path) -> None:
    declared = load_surface(demo_dir / "surface.json")
    comparison = compare_surfaces(declared, declared, demo_dir / "sessions")
    assert comparison.before_report is not None
    assert comparison.before_report.totals.operations == 34


def test_assert_deterministic_returns_the_report_hash() -> None:
    digest = assert_deterministic(measure, TRACES, BEFORE)
    assert digest == report_hash(measure(TRACES, BEFORE))
    outcome = compile_entropy_surface(TRACES, BEFORE)
    assert assert_deterministic(compile_entropy_surface, TRACES, BEFORE) == result_hash(outcome)


def test_assert_deterministic_fails_on_hidden_randomness() -> None:
    rng = random.Random(3)

    def noisy() -> Any:
        return measure(TRACES, BEFORE, catalog_digest=str(rng.random()))

    with pytest.raises(AssertionError) as failure:
        assert_deterministic(noisy)
    message = str(failure.value)
    assert message.startswith("not deterministic: report hashes ")
    assert "$.catalogDigest" in message


def test_snapshot_text_is_hash_plus_canonical_json() -> None:
    report = measure(TRACES, BEFORE)
    text = snapshot_text(report)
    value = json.loads(text)
    assert list(value) == ["reportHash", "canonical"]
    assert value["reportHash"] == report_hash(report)
    assert report_hash(value["canonical"]) == report_hash(report)
    assert list(value["canonical"])[:3] == ["behavioralScore", "byModel", "catalogDigest"]
    assert snapshot_text(report) == text
    assert json.loads(snapshot_text({"a": 1}))["hash"] == result_hash({"a": 1})


def test_the_meter_measures_traces_paths_and_the_configured_default(demo_dir: Path) -> None:
    declared = load_surface(demo_dir / "surface.json")
    meter = EntropyMeter(demo_dir / "sessions", lambda: declared)
    configured = meter()
    assert configured.catalog_digest == surface_hash(declared)
    assert meter(demo_dir / "sessions") == configured
    assert meter(TRACES, surface=None).catalog_digest == ""
    assert meter.freedom()["total"] == meter.freedom(declared)["total"]
    assert EntropyMeter.hash(configured) == report_hash(configured)
    with pytest.raises(ValueError, match="no sessions configured"):
        EntropyMeter()()


def test_the_ratchet_object_records_notes_and_raises(tmp_path: Path) -> None:
    notes: list[tuple[str, object]] = []
    ratchet = EntropyRatchet(tmp_path / "b.json", default_name="t", notes=notes)
    assert ratchet.check(BEFORE).status == "created"
    assert notes == [("entropy_ratchet", f"entropy baseline created: 't' in {tmp_path / 'b.json'}")]
    looser = surface(mcp_render=closed(format=STR, title=STR), mcp_ping=closed())
    with pytest.raises(AssertionError, match="entropy rose above the baseline"):
        ratchet.check(looser)
    assert [result.status for result in ratchet.results] == ["created", "rose"]


def test_assert_ratchet_without_the_fixture(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    assert assert_ratchet(BEFORE, path, name="server", ci=False).status == "created"
    assert assert_ratchet(BEFORE, path, name="server", ci=True).status == "unchanged"
    with pytest.raises(AssertionError, match="no entropy baseline 'other'"):
        assert_ratchet(BEFORE, path, name="other", ci=True)
