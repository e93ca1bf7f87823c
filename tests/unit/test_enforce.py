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


# ----------------------------------------------------------------- metric v3 (normal forms)


def v3_artifact() -> dict[str, Any]:
    from pytest_entropy.core.v3.compiler import compile_entropy_surface_v3
    from tests.v3_artifact_support import LIVE as V3_LIVE

    outcome = compile_entropy_surface_v3([], V3_LIVE)
    assert outcome.artifact is not None
    return outcome.artifact


def test_a_version_2_artifact_normalises_the_call_and_returns_the_args_to_run() -> None:
    from tests.v3_artifact_support import CANONICAL, REF, SPILLED
    from tests.v3_artifact_support import LIVE as V3_LIVE

    verdict = validate_call(REF, SPILLED, V3_LIVE, v3_artifact())
    assert verdict.accepted
    assert verdict.args == CANONICAL
    assert verdict.witness is not None
    assert [rule["kind"] for rule in verdict.witness["rules"]] == [
        "key-form", "numeric-string", "optional-null", "enum-form"
    ]  # fmt: skip
    assert verdict.to_json() == {"accepted": True, "args": CANONICAL, "witness": verdict.witness}
    # Canonical calls pass untouched: no args, no witness, the v2 JSON form.
    canonical = validate_call(REF, CANONICAL, V3_LIVE, v3_artifact())
    assert canonical.to_json() == {"accepted": True} and canonical.witness is None
    # Without the artifact the spelling is a validation failure, as before.
    assert validate_call(REF, SPILLED, V3_LIVE, None).stage == "validate"


def test_v3_never_restricts_or_hides_and_refuses_a_forged_stored_plan() -> None:
    from tests.v3_artifact_support import LIVE as V3_LIVE
    from tests.v3_artifact_support import REF, SPILLED, legacy_artifact

    legacy = legacy_artifact()
    # Under v2 the legacy quarantine hides the ref; under v3 its overlay and quarantine are
    # inert, and a plan derived from the live schema normalises the call.
    rare = {"outputFormat": "rare-format", "limit": 1}
    assert validate_call(REF, rare, V3_LIVE, legacy).stage == "resolve"
    inert = validate_call(REF, SPILLED, V3_LIVE, legacy, metric_version=3)
    assert inert.accepted and inert.witness is not None
    assert validate_call(REF, rare, V3_LIVE, legacy, metric_version=3).to_json() == {
        "accepted": True
    }
    forged = v3_artifact()
    forged["normalizations"][0]["rules"].pop()
    refused = validate_call(REF, SPILLED, V3_LIVE, forged)
    assert not refused.accepted and refused.stage == "validate" and refused.witness is None
    # An action the artifact has no plan for gets one derived on its first call.
    other = {
        "version": 1,
        "actions": [*V3_LIVE["actions"], {**V3_LIVE["actions"][0], "ref": "demo.new"}],
    }
    fresh = validate_call("demo.new", SPILLED, other, v3_artifact())
    assert fresh.accepted and fresh.witness is not None
    assert validate_call("demo.unknown", SPILLED, other, v3_artifact()).stage == "resolve"
