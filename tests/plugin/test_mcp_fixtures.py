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


def test_the_ratchet_and_the_surface_fixture_take_the_mcp_timeout(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    pytester.makepyfile(
        test_slow="""
        from tests.servers.slow_server import server


        def test_configured(entropy_ratchet):
            entropy_ratchet.check(server)


        def test_given(entropy_ratchet):
            entropy_ratchet.check(server, timeout=0.25)
        """
    )
    run = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--entropy-mcp-timeout", "0.5")
    run.assert_outcomes(failed=2)
    run.stdout.fnmatch_lines(
        [
            "*tests.servers.slow_server*tools/list after waiting 0.5 s*",
            "*tests.servers.slow_server*tools/list after waiting 0.25 s*",
        ],
        consecutive=False,
    )
    assert "TimeoutError: \n" not in run.stdout.str()
    # The ini twin feeds entropy_surface too.
    pytester.makeini(
        "[pytest]\nentropy_surface = tests.servers.slow_server:server\nentropy_mcp_timeout = 0.5\n"
    )
    pytester.makepyfile(test_slow="def test_surface(entropy_surface):\n    pass\n")
    surface = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    surface.assert_outcomes(errors=1)
    surface.stdout.fnmatch_lines(["*tools/list after waiting 0.5 s*"])
