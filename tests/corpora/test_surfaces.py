"""Real tool surfaces in every foreign format: tool counts from the corpus READMEs."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_entropy.core.fingerprint import static_freedom, surface_freedom_report
from pytest_entropy.ingest.surfaces import load_surface


def test_mcp_tools_list_captures(shared_corpora: Path) -> None:
    servers = sorted((shared_corpora / "mcp-servers-tools-list/servers").glob("*.tools.json"))
    assert len(servers) == 27
    surfaces = {path.name.removesuffix(".tools.json"): load_surface(path) for path in servers}
    assert sum(len(surface["actions"]) for surface in surfaces.values()) == 370
    # The GitLab server advertises empty schemas: maximal static freedom for every tool.
    gitlab = surfaces["mcp-server-gitlab"]["actions"]
    assert len(gitlab) == 9
    assert {static_freedom(action["inputSchema"]) for action in gitlab} == {0.75}
    # File order is kept (the surface hash depends on it).
    playwright = json.loads(
        (shared_corpora / "mcp-servers-tools-list/servers/playwright-mcp.tools.json").read_bytes()
    )
    assert [action["ref"] for action in surfaces["playwright-mcp"]["actions"]] == [
        tool["name"] for tool in playwright["tools"]
    ]


def test_github_toolsnaps_directory(shared_corpora: Path) -> None:
    head = load_surface(
        shared_corpora / "github-mcp-server-toolsnaps/head", ref_prefix="mcp.github."
    )
    removed = load_surface(shared_corpora / "github-mcp-server-toolsnaps/removed")
    assert len(head["actions"]) == 117 and len(removed["actions"]) == 47
    refs = [action["ref"] for action in head["actions"]]
    assert refs[0] == "mcp.github.actions_get" and refs == sorted(refs)
    multiplexed = [
        action["ref"]
        for action in head["actions"]
        if "enum" in action["inputSchema"].get("properties", {}).get("method", {})
    ]
    assert len(multiplexed) == 15


def test_agent_and_benchmark_tool_lists(shared_corpora: Path) -> None:
    expected = {
        "pi-sessions/surface/pi-coding-agent-0.27.9.tools.json": 7,
        "claude-code-sessions-spotter/surface/claude-code-2.1.39.tools.json": 17,
        "tau-bench-historical/tools_at_HEAD_59a200c.json": 30,
        "openhands-trajectories/surface/openhands-codeact-tools@3d22520.json": 7,
        "api-bank/pr229-toolsearcher-free/data/processed/openai_tools.json": 67,
        "toolbench-data-example/data_example/answer/G1_answer/10_ChatGPT_DFS_woFilter_w2.json": 3,
    }
    for path, count in expected.items():
        surface = load_surface(shared_corpora / path)
        assert len(surface["actions"]) == count, path
        assert surface_freedom_report(surface)["total"] > 0


def test_bfcl_function_docs_in_standard_json_schema(shared_corpora: Path) -> None:
    surface = load_surface(shared_corpora / "bfcl-v4-data/BFCL_v4_live_multiple.json")
    assert len(surface["actions"]) == 455  # 457 names, two of which only differ by "." vs "_"
    text = json.dumps(surface)
    for dialect in ('"dict"', '"float"', '"tuple"', '"any"'):
        assert f'"type": {dialect}' not in text
