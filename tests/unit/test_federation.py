"""Federation under attack: an import can tighten the local surface but never widen it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pytest_entropy.core.artifact import (
    apply_compiled_surface,
    is_tightening_overlay,
    merge_compiled_surfaces,
    parse_compiled_surface_artifact,
    without_widening_overlays,
)
from pytest_entropy.core.canonical import schema_digest
from pytest_entropy.core.enforce import validate_call

STR = {"type": "string"}
LIVE = {
    "version": 1,
    "actions": [
        {
            "ref": "mcp.render",
            "inputSchema": {
                "type": "object",
                "properties": {"format": {"type": "string", "enum": ["pdf", "html", "docx"]}},
                "required": ["format"],
            },
        },
        {"ref": "mcp.flaky", "inputSchema": {"type": "object", "properties": {"mode": STR}}},
    ],
}
RENDER = LIVE["actions"][0]["inputSchema"]
FLAKY = LIVE["actions"][1]["inputSchema"]
GATE = {"passed": True, "beforeScore": 0.3, "afterScore": 0.2, "reasons": []}


def artifact(
    actions: list[Any] | None = None,
    quarantined: list[Any] | None = None,
    applied: list[Any] | None = None,
) -> dict[str, Any]:
    return {
        "version": 1,
        "metricVersion": 2,
        "actions": actions or [],
        "quarantined": quarantined or [],
        "applied": applied or [],
        "gate": GATE,
        "evidenceDigest": "peer",
    }


def tightened(values: list[str]) -> dict[str, Any]:
    schema = copy.deepcopy(RENDER)
    schema["properties"]["format"]["enum"] = values
    return schema


def effective(file: dict[str, Any]) -> dict[str, Any]:
    return dict(apply_compiled_surface(LIVE, file))


def allowed_formats(file: dict[str, Any] | None) -> set[str]:
    return {
        f
        for f in ("pdf", "html", "docx", "web", "rtf")
        if validate_call("mcp.render", {"format": f}, LIVE, file).accepted
    }


def test_a_proven_tightening_is_adopted() -> None:
    incoming = artifact(
        [
            {
                "ref": "mcp.render",
                "inputSchema": tightened(["pdf"]),
                "baseSchemaDigest": schema_digest(RENDER),
            }
        ]
    )
    merged = merge_compiled_surfaces(None, incoming, LIVE)
    assert merged["droppedOverlays"] == 0
    assert allowed_formats(merged["file"]) == {"pdf"}


def test_a_forged_digest_is_dropped_and_counted() -> None:
    widening = copy.deepcopy(RENDER)
    widening["properties"]["format"]["enum"] = ["pdf", "html", "docx", "web", "rtf"]
    incoming = artifact(
        [{"ref": "mcp.render", "inputSchema": widening, "baseSchemaDigest": "0" * 64}]
    )
    merged = merge_compiled_surfaces(None, incoming, LIVE)
    assert merged["droppedOverlays"] == 1
    assert merged["file"]["actions"] == []
    assert allowed_formats(merged["file"]) == {"pdf", "html", "docx"}


def test_entries_for_unknown_refs_are_dropped() -> None:
    incoming = artifact(
        [
            {
                "ref": "mcp.ghost",
                "inputSchema": {"type": "object"},
                "baseSchemaDigest": schema_digest(None),
            }
        ],
        [{"ref": "mcp.ghost2", "baseSchemaDigest": schema_digest({})}],
    )
    merged = merge_compiled_surfaces(None, incoming, LIVE)
    assert (merged["droppedOverlays"], merged["droppedQuarantines"]) == (1, 1)


def test_a_local_quarantine_cannot_be_resurrected_by_an_overlay() -> None:
    local = artifact(quarantined=[{"ref": "mcp.flaky", "baseSchemaDigest": schema_digest(FLAKY)}])
    incoming = artifact(
        [
            {
                "ref": "mcp.flaky",
                "inputSchema": {"type": "object"},
                "baseSchemaDigest": schema_digest(FLAKY),
            }
        ]
    )
    merged = merge_compiled_surfaces(local, incoming, LIVE)
    assert merged["file"]["actions"] == []
    assert "mcp.flaky" not in {a["ref"] for a in effective(merged["file"])["actions"]}


def test_a_local_overlay_wins_over_a_proven_incoming_one() -> None:
    local = artifact(
        [
            {
                "ref": "mcp.render",
                "inputSchema": tightened(["pdf"]),
                "baseSchemaDigest": schema_digest(RENDER),
            }
        ]
    )
    incoming = artifact(
        [
            {
                "ref": "mcp.render",
                "inputSchema": tightened(["pdf", "html"]),
                "baseSchemaDigest": schema_digest(RENDER),
            }
        ]
    )
    merged = merge_compiled_surfaces(local, incoming, LIVE)
    assert allowed_formats(merged["file"]) == {"pdf"}


@pytest.mark.parametrize(
    "mutate",
    [
        lambda a: a.update(version=2),
        lambda a: a.update(version=True),
        lambda a: a.update(metricVersion=0),
        lambda a: a.update(applied=[{"kind": "k", "ref": "r", "detail": "d"}] * 257),
        lambda a: a.update(actions=[a["actions"][0], a["actions"][0]]),
        lambda a: a.update(evidenceDigest="  "),
        lambda a: a["gate"].update(passed="yes"),
        lambda a: a.update(actions=[{"ref": "x", "inputSchema": [], "baseSchemaDigest": "d"}]),
    ],
)
def test_malformed_artifacts_are_refused(mutate: Any) -> None:
    candidate = artifact(
        [
            {
                "ref": "mcp.render",
                "inputSchema": tightened(["pdf"]),
                "baseSchemaDigest": schema_digest(RENDER),
            }
        ]
    )
    candidate["gate"] = dict(GATE)
    mutate(candidate)
    assert parse_compiled_surface_artifact(candidate) is None


def test_an_overflowing_incoming_ledger_is_capped() -> None:
    local = artifact(
        applied=[{"kind": "enum-tighten", "ref": f"r{i}", "detail": "d"} for i in range(200)]
    )
    incoming = artifact(
        applied=[{"kind": "enum-tighten", "ref": f"s{i}", "detail": "d"} for i in range(200)]
    )
    merged = merge_compiled_surfaces(local, incoming, LIVE)
    assert len(merged["file"]["applied"]) == 256
    assert merged["file"]["applied"][:200] == local["applied"]


def test_a_proven_overlay_that_widens_is_refused() -> None:
    # The spec's merge adopts any digest-proven entry; the import path first refuses
    # overlays that are not a narrowing of a declared enum.
    widenings = [
        {"type": "object"},
        tightened(["pdf", "html", "docx", "web"]),
        {**tightened(["pdf"]), "required": []},
        {**RENDER, "additionalProperties": True},
    ]
    for schema in widenings:
        incoming = artifact(
            [
                {
                    "ref": "mcp.render",
                    "inputSchema": schema,
                    "baseSchemaDigest": schema_digest(RENDER),
                }
            ]
        )
        filtered, refused = without_widening_overlays(incoming, LIVE)
        assert refused == 1
        merged = merge_compiled_surfaces(None, filtered, LIVE)["file"]
        assert allowed_formats(merged) == {"pdf", "html", "docx"}
        assert validate_call("mcp.render", {}, LIVE, merged).stage == "validate"


def test_tightening_check() -> None:
    assert is_tightening_overlay(RENDER, tightened(["pdf"]))
    assert is_tightening_overlay(RENDER, RENDER)
    assert not is_tightening_overlay(RENDER, tightened([]))
    assert not is_tightening_overlay(RENDER, tightened(["pdf", "web"]))
    assert not is_tightening_overlay(
        FLAKY, {**FLAKY, "properties": {"mode": {"type": "string", "enum": ["a"]}}}
    )
