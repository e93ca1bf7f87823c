"""``--entropy-lint``: one item per tool in a normal run, the ``surface-lint`` check in a
certification, and ``assert_lint_clean`` for tool authors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_entropy.core.certify import CHECK_IDS
from pytest_entropy.run.corpus_checks import planned_corpus_checks

pytest_plugins = ("pytester",)

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "corpora" / "demo"

GOOD = {
    "name": "search",
    "description": "Search.",
    "inputSchema": {
        "type": "object",
        "properties": {"q": {"type": "string", "description": "query"}},
        "required": ["q"],
    },
}
EMPTY = {"name": "broken", "description": "Broken.", "inputSchema": {}}


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def _tools(pytester: pytest.Pytester, *tools: dict[str, object]) -> str:
    path = pytester.path / "tools.json"
    path.write_text(json.dumps({"tools": list(tools)}))
    return str(path)


def test_one_item_per_tool_beside_the_projects_tests(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_own(): pass")
    surface = _tools(pytester, GOOD, EMPTY)
    result = run(pytester, "--entropy-lint", "mcp", "--entropy-surface", surface, "-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["*entropy-lint::search PASSED*", "*entropy-lint::broken FAILED*", "*schema-empty*"]
    )


def test_without_the_option_no_lint_item(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_own(): pass")
    surface = _tools(pytester, EMPTY)
    run(pytester, "--entropy-surface", surface).assert_outcomes(passed=1)


def test_the_ini_twin_and_a_missing_surface(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nentropy_lint = openai-strict\n")
    pytester.makepyfile("def test_own(): pass")
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*--entropy-lint needs --entropy-surface*"])


def test_certify_adds_surface_lint_last_only_when_asked(pytester: pytest.Pytester) -> None:
    sessions, surface = str(DEMO / "sessions"), str(DEMO / "surface.json")
    base = ["--entropy-certify", "--entropy-sessions", sessions, "--entropy-surface", surface]
    collected = run(pytester, *base, "--collect-only", "-q")
    ids = [line for line in collected.outlines if line.startswith("entropy-certify::")]
    corpus = planned_corpus_checks(sessions, surface)  # issue 29: the user's checks follow
    assert ids == [f"entropy-certify::{check}" for check in (*CHECK_IDS, "corpus-mode", *corpus)]
    collected = run(pytester, *base, "--entropy-lint", "mcp", "--collect-only", "-q")
    ids = [line for line in collected.outlines if line.startswith("entropy-certify::")]
    assert ids[-2 - len(corpus) : len(ids) - len(corpus)] == [
        "entropy-certify::corpus-mode",
        "entropy-certify::surface-lint",
    ]
    result = run(pytester, *base, "--entropy-lint", "mcp", "--entropy-json=r.json")
    result.assert_outcomes(passed=22 + len(corpus))
    report = json.loads((pytester.path / "r.json").read_text())
    assert report["evaluation"]["checks"][-1]["id"] == "surface-lint"
    failing = run(pytester, *base, "--entropy-lint", "openai-strict")
    failing.assert_outcomes(passed=21 + len(corpus), failed=1)
    failing.stdout.fnmatch_lines(
        ["*strict-name-invalid pi.read*", "*✗ surface-lint — * errors, 25 warnings in 7 tools*"]
    )


def test_assert_lint_clean(tmp_path: Path) -> None:
    from pytest_entropy.testing.lint import assert_lint_clean

    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": [GOOD]}))
    assert assert_lint_clean(str(path), profile="mcp").findings == ()
    assert_lint_clean({"tools": [GOOD]})
    with pytest.raises(AssertionError, match="strict-additional-properties"):
        assert_lint_clean([GOOD], profile="openai-strict")
    with pytest.raises(AssertionError, match=r"schema lint: 1 findings in 1 tools\n.*schema-empty"):
        assert_lint_clean({"tools": [EMPTY]})
    with pytest.raises(AssertionError, match="tool-undescribed"):
        assert_lint_clean({"tools": [{**GOOD, "description": ""}]}, warnings=True)


def test_an_error_in_a_shared_definition_fails_every_tool_that_uses_it(
    pytester: pytest.Pytester,
) -> None:
    # The finding is reported once (at the first tool), yet each tool whose schema uses
    # the broken definition is broken: its item fails; a tool that only carries it passes.
    definitions = {
        "item": {"type": "object", "properties": {}, "required": ["id"]},
        "fine": {"type": "string"},
    }

    def tool(name: str, target: str) -> dict[str, object]:
        properties = {"p": {"$ref": f"#/$defs/{target}", "description": "p"}}
        schema = {"type": "object", "properties": properties, "$defs": definitions}
        return {"name": name, "description": name, "inputSchema": schema}

    surface = _tools(pytester, tool("first", "item"), tool("other", "fine"), tool("last", "item"))
    result = run(pytester, "--entropy-lint", "mcp", "--entropy-surface", surface, "-v")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*entropy-lint::first FAILED*",
            "*entropy-lint::other PASSED*",
            "*entropy-lint::last FAILED*",
            "*required-unknown /$defs/item/required/0*",
        ]
    )
