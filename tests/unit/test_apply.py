"""apply: the artifact applied to the declared surface file, in its own format or as patches."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import pytest

from pytest_entropy.core.apply import json_patch, json_pointer, plan_apply
from pytest_entropy.core.artifact import apply_compiled_surface
from pytest_entropy.core.canonical import schema_digest
from pytest_entropy.core.fingerprint import surface_freedom_report
from pytest_entropy.ingest.surface_writers import rewrite_surface, surface_patches, tool_slots
from pytest_entropy.ingest.surfaces import surface_from_parsed

FORMAT_SCHEMA = {
    "type": "object",
    "properties": {"format": {"type": "string", "enum": ["pdf", "html", "md"]}},
}
FLAKY_SCHEMA = {"type": "object", "properties": {"n": {"type": "string"}}}
QUIET_SCHEMA = {"type": "object", "properties": {}}
TIGHT = {"type": "object", "properties": {"format": {"type": "string", "enum": ["pdf", "html"]}}}


def _documents() -> dict[str, Any]:
    tools = [("render", FORMAT_SCHEMA), ("flaky", FLAKY_SCHEMA), ("quiet", QUIET_SCHEMA)]
    return {
        "snapshot": {
            "version": 1,
            "actions": [{"ref": n, "inputSchema": s, "description": "d"} for n, s in tools],
        },
        "mcp": {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "tools": [{"name": n, "description": f"{n}!", "inputSchema": s} for n, s in tools]
            },
        },
        "openai": {
            "tools": [
                {"type": "function", "function": {"name": n, "parameters": s, "strict": False}}
                for n, s in tools
            ]
        },
        "anthropic": [{"name": n, "input_schema": s} for n, s in tools],
    }


def _artifact(surface: dict[str, Any]) -> dict[str, Any]:
    declared = {a["ref"]: a["inputSchema"] for a in surface["actions"]}
    return {
        "version": 1,
        "metricVersion": 2,
        "actions": [
            {
                "ref": "render",
                "inputSchema": TIGHT,
                "baseSchemaDigest": schema_digest(declared["render"]),
            }
        ],
        "quarantined": [{"ref": "flaky", "baseSchemaDigest": schema_digest(declared["flaky"])}],
        "applied": [],
        "gate": {"passed": True, "beforeScore": 1, "afterScore": 0.5, "reasons": []},
        "evidenceDigest": "x",
    }


def _tools(surface: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(a["ref"], a["inputSchema"]) for a in surface["actions"]]


@pytest.mark.parametrize("surface_format", ["snapshot", "mcp", "openai", "anthropic"])
def test_rewrite_reads_back_as_the_effective_surface(surface_format: str) -> None:
    document = _documents()[surface_format]
    original = copy.deepcopy(document)
    surface = surface_from_parsed(document, source="t", surface_format=surface_format)
    artifact = _artifact(surface)
    plan = plan_apply(surface, artifact)
    assert plan.overlays == {"render": TIGHT} and plan.removed == {"flaky"}
    assert plan.stale == ()
    slots = tool_slots(document, surface_format)
    assert slots is not None
    written = rewrite_surface(document, slots, plan)
    assert document == original  # the declared file is never changed in place
    back = surface_from_parsed(written, source="t", surface_format=surface_format)
    effective = apply_compiled_surface(surface, artifact)
    assert _tools(back) == _tools(effective)
    assert surface_freedom_report(back) == surface_freedom_report(effective)
    # Everything the author wrote besides the schemas stays.
    if surface_format == "mcp":
        assert written["result"]["tools"][0]["description"] == "render!"
    if surface_format == "openai":
        assert written["tools"][0]["function"]["strict"] is False
    # The patches, applied in order by an independent RFC 6902 implementation, give the
    # same file.
    patches = surface_patches(document, slots, plan)
    assert [p["ref"] for p in patches] == ["render", "flaky"]
    patched = copy.deepcopy(document)
    for entry in patches:
        patched = jsonpatch.apply_patch(patched, entry["patch"])
    assert patched == written


def test_a_stale_entry_is_named_and_never_applied() -> None:
    document = _documents()["snapshot"]
    surface = surface_from_parsed(document, source="t", surface_format="snapshot")
    artifact = _artifact(surface)
    artifact["actions"][0]["baseSchemaDigest"] = "0" * 64
    artifact["quarantined"].append({"ref": "gone", "baseSchemaDigest": "1" * 64})
    plan = plan_apply(surface, artifact)
    assert plan.overlays == {}
    assert plan.removed == {"flaky"}
    assert [(s.ref, s.kind) for s in plan.stale] == [("render", "overlay"), ("gone", "quarantine")]
    assert "not in the surface" in plan.stale[1].reason
    written = rewrite_surface(document, tool_slots(document, "snapshot") or [], plan)
    assert written["actions"][0]["inputSchema"] == FORMAT_SCHEMA


def test_ref_prefix_maps_names_to_refs() -> None:
    document = _documents()["mcp"]
    surface = surface_from_parsed(document, source="t", surface_format="mcp", ref_prefix="mcp.")
    declared = {a["ref"]: a["inputSchema"] for a in surface["actions"]}
    artifact = _artifact({"version": 1, "actions": []} | {"actions": [
        {"ref": "render", "inputSchema": declared["mcp.render"]},
        {"ref": "flaky", "inputSchema": declared["mcp.flaky"]},
    ]})  # fmt: skip
    for entry in (*artifact["actions"], *artifact["quarantined"]):
        entry["ref"] = "mcp." + entry["ref"]
    plan = plan_apply(surface, artifact)
    written = rewrite_surface(document, tool_slots(document, "mcp") or [], plan, "mcp.")
    assert [t["name"] for t in written["result"]["tools"]] == ["render", "quiet"]


def test_formats_without_a_writer_have_no_slots() -> None:
    assert tool_slots({"domains": {}}, "tau-bench") is None
    assert tool_slots({"name": "one", "inputSchema": {}}, "mcp") is None  # a one-tool object
    assert tool_slots([{"name": "x"}, 3], "anthropic") is None


def test_json_patch_is_minimal_and_rfc6902() -> None:
    before = {"a": 1, "b": {"c": [1, 2], "d": "x"}, "e/f": 0}
    after = {"a": 1, "b": {"c": [1], "g": True}, "e/f": 1}
    patch = json_patch(before, after)
    assert patch == [
        {"op": "remove", "path": "/b/d"},
        {"op": "replace", "path": "/b/c", "value": [1]},
        {"op": "add", "path": "/b/g", "value": True},
        {"op": "replace", "path": "/e~1f", "value": 1},
    ]
    assert jsonpatch.apply_patch(before, patch) == after
    assert json_patch(before, before) == []
    assert json_pointer(("a~b", 0)) == "/a~0b/0"
