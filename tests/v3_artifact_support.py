"""Shared fixtures of the metric v3 tests (notes CV-30, CV-33..CV-37): the report-render
schema of the certification fixture and the upstream tests' small surfaces."""

from __future__ import annotations

import copy
from typing import Any

from pytest_entropy.core.canonical import schema_digest
from pytest_entropy.core.v3.artifact import empty_compiled_surface

REF = "mcp.report.render"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "outputFormat": {"type": "string", "enum": ["pdf", "html", "rare-format"]},
        "limit": {"type": "integer", "minimum": 1},
        "note": {"type": "string"},
    },
    "required": ["outputFormat", "limit"],
}
LIVE: dict[str, Any] = {"version": 1, "actions": [{"ref": REF, "inputSchema": SCHEMA}]}
CANONICAL: dict[str, Any] = {"outputFormat": "rare-format", "limit": 2}
SPILLED: dict[str, Any] = {"output-format": "RARE FORMAT", "limit": "2", "note": None}


def op(ref: str, args: Any, outcome: str = "succeeded", stage: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"ref": ref, "args": args, "outcome": outcome}
    if stage is not None:
        out["failureStage"] = stage
    return out


def certification_traces() -> list[dict[str, Any]]:
    """The traces of the v3 certification fixture (CV-30)."""
    return [
        {
            "model": "fixture/model",
            "operations": [
                op(REF, SPILLED, "failed", "validate"),
                op(REF, CANONICAL),
                op(REF, CANONICAL, "failed", "invoke"),
                op("fabric.discovery.search", {}),
            ],
        }
    ]


def legacy_artifact() -> dict[str, Any]:
    """A version-1 artifact pinned to SCHEMA: an enum overlay and a quarantine (CV-30)."""
    tightened = copy.deepcopy(SCHEMA)
    tightened["properties"]["outputFormat"] = {"type": "string", "enum": ["pdf"]}
    return {
        **empty_compiled_surface(),
        "version": 1,
        "metricVersion": 2,
        "actions": [
            {"ref": REF, "inputSchema": tightened, "baseSchemaDigest": schema_digest(SCHEMA)}
        ],
        "quarantined": [{"ref": REF, "baseSchemaDigest": schema_digest(SCHEMA)}],
    }
