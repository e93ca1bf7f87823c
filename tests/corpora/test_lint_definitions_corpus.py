"""Notion's MCP server (generated from its OpenAPI document): every tool carries the same
nine ``$defs``; lint reports each definition's findings once (issue 26, item 14)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pytest_entropy.core.lint import lint_surface
from pytest_entropy.ingest.surfaces import load_surface
from pytest_entropy.report.lint import MARKDOWN_ROWS_PER_RULE, lint_markdown_lines
from pytest_entropy.sources.lint_profiles import load_profiles, profile_names


def test_notion_definitions_are_reported_once(shared_corpora: Path) -> None:
    path = shared_corpora / "mcp-servers-tools-list/servers/notion-mcp-server.tools.json"
    surface = load_surface(path, surface_format="mcp", descriptions=True)
    refs = [action["ref"] for action in surface["actions"]]
    for profiles in ([], load_profiles(profile_names())):
        findings = lint_surface(surface, profiles)
        inside = [f for f in findings if f.definition is not None]
        assert inside
        # No definition finding repeats across tools, and each names tools of the surface,
        # the first of them being where it is reported.
        assert Counter((f.rule, f.pointer, f.message) for f in inside).most_common(1)[0][1] == 1
        for finding in inside:
            assert finding.tools[0] == finding.ref and set(finding.tools) <= set(refs)
            assert finding.pointer.startswith(finding.definition[1:] + "/") or (
                finding.pointer == finding.definition[1:]
            )
        markdown = "\n".join(lint_markdown_lines(findings, len(refs)))
        rules = len({f.rule for f in findings})
        assert markdown.count("\n| `API-") <= rules * MARKDOWN_ROWS_PER_RULE
    # Before: 615 findings without profiles (576 of them inside the $defs, repeated in
    # each of the 24 tools) and an 88 KB Markdown summary.
    plain = lint_surface(surface)
    assert len(plain) < 100
    assert len("\n".join(lint_markdown_lines(plain, len(refs))).encode()) < 12_000
