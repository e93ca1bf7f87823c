"""Live enforcement for tool hosts: typed rejections and digest re-proof on every call."""

from __future__ import annotations

from typing import Any

from pytest_entropy.core.compiler import compile_entropy_surface
from pytest_entropy.core.enforce import validate_call
from tests.vectors import cases_of

RATCHET = next(
    c
    for c in cases_of("compiler", "compileEntropySurface", key="kind")
    if c["id"] == "V2-CV-10:compile"
)
LIVE: dict[str, Any] = RATCHET["input"]["surface"]


def artifact() -> dict[str, Any]:
    outcome = compile_entropy_surface(RATCHET["input"]["traces"], LIVE, RATCHET["input"]["repairs"])
    assert outcome.artifact is not None
    return outcome.artifact


def test_accepts_a_call_inside_the_tightened_enum() -> None:
    verdict = validate_call("mcp.report.render", {"format": "pdf"}, LIVE, artifact())
    assert verdict.accepted
    assert verdict.to_json() == {"accepted": True}


def test_rejects_a_value_the_overlay_removed_at_validate_with_a_path() -> None:
    verdict = validate_call("mcp.report.render", {"format": "docx"}, LIVE, artifact())
    assert not verdict.accepted
    assert verdict.stage == "validate"
    assert verdict.path == "/format"
    # Without the artifact the declared schema still allows it.
    assert validate_call("mcp.report.render", {"format": "docx"}, LIVE, None).accepted


def test_quarantined_and_unknown_refs_fail_at_resolve() -> None:
    quarantined = validate_call("mcp.flaky.run", {"mode": "fast"}, LIVE, artifact())
    unknown = validate_call("mcp.nope", {}, LIVE, artifact())
    assert (quarantined.stage, unknown.stage) == ("resolve", "resolve")
    assert validate_call("mcp.flaky.run", {"mode": "fast"}, LIVE, None).accepted


def test_a_changed_declared_schema_drops_the_overlay_and_the_quarantine() -> None:
    changed = {
        "version": 1,
        "actions": [
            {**action, "inputSchema": {**action["inputSchema"], "description": "v2"}}
            for action in LIVE["actions"]
        ],
    }
    assert validate_call("mcp.report.render", {"format": "docx"}, changed, artifact()).accepted
    assert validate_call("mcp.flaky.run", {"mode": "fast"}, changed, artifact()).accepted


def test_missing_required_property_reports_the_object_path() -> None:
    verdict = validate_call("memory.expand", {}, LIVE, artifact())
    assert verdict.stage == "validate"
    assert verdict.path == ""
    assert "session" in verdict.message
