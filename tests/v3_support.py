"""Metric v3 fixtures of the upstream's tests (notes §9.3 shared fixtures and CV-30), built
as the upstream's helpers build them: ``op`` adds ``failureStage`` only when given, ``trace``
adds ``taskKey`` only when given."""

from __future__ import annotations

from typing import Any


def op(
    ref: str, args: dict[str, Any], outcome: str = "succeeded", stage: str | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"ref": ref, "args": args, "outcome": outcome}
    if stage is not None:
        out["failureStage"] = stage
    return out


def trace(operations: list[dict[str, Any]], task_key: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"operations": operations}
    if task_key is not None:
        out["taskKey"] = task_key
    return out


def closed(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """``OBJ(props, required)``: a closed object schema in the fixtures' key order."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": list(required or []),
        "properties": properties,
    }


def surface(*actions: tuple[str, Any]) -> dict[str, Any]:
    return {
        "version": 1,
        "actions": [{"ref": ref, "inputSchema": schema} for ref, schema in actions],
    }


def converged_traces() -> list[dict[str, Any]]:
    return [
        trace(
            [
                op("pi.read", {"path": "src/a.ts", "limit": 50}),
                op("pi.read", {"path": "src/b.ts", "limit": 50}),
                op("pi.edit", {"path": "src/a.ts"}),
                op("pi.bash", {"command": "bun test"}),
            ],
            "converged",
        )
    ]


def converged_surface() -> dict[str, Any]:
    return surface(
        (
            "pi.read",
            closed({"path": {"type": "string"}, "limit": {"type": "integer"}}, ["path", "limit"]),
        ),
        ("pi.edit", closed({"path": {"type": "string"}}, ["path"])),
        ("pi.bash", closed({"command": {"type": "string"}}, ["command"])),
    )


def wobble_traces() -> list[dict[str, Any]]:
    return [
        trace(
            [
                op("pi.read", {"path": "src/x.ts", "limit": 50}),
                op("pi.grep", {"path": "src", "limit": 20}),
                op("pi.edit", {"path": "src/x.ts"}),
            ],
            "flaky-edit",
        ),
        trace(
            [
                op("pi.grep", {"path": "src", "limit": 20}),
                op("pi.read", {"path": "src/x.ts", "limit": 50}),
                op("pi.edit", {"path": "src/x.ts"}),
            ],
            "flaky-edit",
        ),
        trace(
            [
                op("memory.expand", {"session": "s1"}),
                op("memory.expand", {"session": "s1"}, "failed", "validate"),
                op("memory.expand", {"session": "s1", "entryId": "e1"}, "failed", "prepare"),
                op("memory.expand", {"session": "s1"}),
                op("fabric.discovery.search", {"limit": 5}),
                op("fabric.workflow.phase", {"name": "verify", "id": "p1", "total": 1}),
                op("pi.bash", {"command": "vitest run"}, "failed", "invoke"),
                op("pi.bash", {"command": "vitest run"}),
            ],
            "wobble",
        ),
    ]


# --------------------------------------------------------------------------------- CV-30

CV30_REF = "mcp.report.render"
CV30_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "outputFormat": {"type": "string", "enum": ["pdf", "html", "rare-format"]},
        "limit": {"type": "integer", "minimum": 1},
        "note": {"type": "string"},
    },
    "required": ["outputFormat", "limit"],
}
CV30_CANONICAL: dict[str, Any] = {"outputFormat": "rare-format", "limit": 2}
CV30_SPILLED: dict[str, Any] = {"output-format": "RARE FORMAT", "limit": "2", "note": None}


def cv30_live() -> dict[str, Any]:
    return surface((CV30_REF, CV30_SCHEMA))


def cv30_traces() -> list[dict[str, Any]]:
    return [
        {
            "model": "fixture/model",
            "operations": [
                op(CV30_REF, dict(CV30_SPILLED), "failed", "validate"),
                op(CV30_REF, dict(CV30_CANONICAL)),
                op(CV30_REF, dict(CV30_CANONICAL), "failed", "invoke"),
                op("fabric.discovery.search", {}),
            ],
        }
    ]
