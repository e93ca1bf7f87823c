"""Fixtures with an MCP server: the docs' five lines, and ``entropy_surface`` naming one."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mcp")

pytest_plugins = ("pytester",)

# The example of docs/ratchet.md ("An MCP server's test suite"), with our server's import.
DOCS_EXAMPLE = """
from tests.servers.echo_server import server  # your MCPServer / FastMCP object


def test_tools_do_not_loosen(entropy_ratchet):
    entropy_ratchet.check(server)
"""


def test_the_docs_example(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    pytester.makepyfile(test_entropy=DOCS_EXAMPLE)
    run = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    run.assert_outcomes(passed=1)
    baseline = json.loads((pytester.path / "entropy-baseline.json").read_text())
    (entry,) = baseline["entries"].values()
    assert sorted(entry["schemas"]) == ["render", "search"]
    monkeypatch.setenv("CI", "1")
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    # Loosen the stored baseline's view: the server now "accepts more" than it records.
    entry["schemas"]["search"]["required"] = ["query", "limit"]
    from pytest_entropy.core.canonical import stable_json_hash

    entry["schemasHash"] = stable_json_hash(entry["schemas"])
    (pytester.path / "entropy-baseline.json").write_text(json.dumps(baseline))
    failed = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*loosened: search:limit: required (true → false)*"])


def test_entropy_surface_names_a_server(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nentropy_surface = tests.servers.echo_server:server\n")
    pytester.makepyfile(
        """
        def test_surface(entropy_surface, entropy_meter):
            assert [a["ref"] for a in entropy_surface["actions"]] == ["search", "render"]
            assert entropy_meter.freedom()["actions"]
        """
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
