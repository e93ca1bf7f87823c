"""Names are data on the pytest front too (issue 26): the gate and certification items, the
lint items, the entropy section of the terminal summary and the JUnit XML properties print
hostile names (tools, parameters, session file names) inert."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from tests.hostile_support import SAMPLES, assert_terminal_safe, hostile_corpus

pytest_plugins = ("pytester",)

# A session file name may hold controls and newlines too (not a surrogate: not on Linux).
BAD_FILE = "bad\n::error::pwned\x1b[2J.jsonl"


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def _properties(path: Path) -> list[str]:
    root = ElementTree.parse(path).getroot()  # the XML parses
    return [str(node.get("value")) for node in root.iter("property")]


@pytest.mark.parametrize("name", [SAMPLES[1], SAMPLES[2], SAMPLES[0]], ids=["osc", "nl", "sur"])
def test_gate_lint_and_summary_print_names_inert(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.delenv("CI", raising=False)
    corpus = hostile_corpus(pytester.path / "corpus", name)
    (corpus.sessions / BAD_FILE).write_text("not json\n", encoding="utf-8")
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = run(
        pytester,
        f"--entropy-sessions={corpus.sessions}",
        f"--entropy-surface={corpus.surface}",
        "--entropy-max-score=0.1",
        "--entropy-baseline=base.json",
        "--entropy-lint=mcp",
        "--junitxml=junit.xml",
        "-rA",
        "-v",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    text = result.stdout.str()
    assert "= entropy =" in text and "entropy-lint::mcp.r" in text
    assert_terminal_safe(text)
    for value in _properties(pytester.path / "junit.xml"):
        assert_terminal_safe(value)


def test_certification_items_and_their_reports(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    corpus = hostile_corpus(pytester.path / "corpus", SAMPLES[2] + SAMPLES[3])
    result = run(
        pytester,
        "--entropy-certify",
        f"--entropy-sessions={corpus.sessions}",
        f"--entropy-surface={corpus.surface}",
        "--entropy-json=cert.json",
        "--entropy-markdown=cert.md",
        "--junitxml=junit.xml",
        "-rA",
    )
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    assert_terminal_safe(result.stdout.str())
    json.loads((pytester.path / "cert.json").read_text(encoding="utf-8"))
    _properties(pytester.path / "junit.xml")


def test_the_tool_author_assertions_print_names_inert(tmp_path: Path) -> None:
    """assert_lint_clean and assert_no_entropy_increase name tools in their failure text."""
    from pytest_entropy.testing.assertions import assert_no_entropy_increase
    from pytest_entropy.testing.lint import assert_lint_clean

    corpus = hostile_corpus(tmp_path, SAMPLES[1] + SAMPLES[0])
    with pytest.raises(AssertionError) as lint:
        assert_lint_clean(str(corpus.surface), profile="mcp")
    with pytest.raises(AssertionError) as rise:
        assert_no_entropy_increase(str(corpus.surface), str(corpus.loosened))
    for failure in (lint, rise):
        message = str(failure.value)
        assert "\\x1b]52;c;aGVsbG8=\\x07" in message
        assert_terminal_safe(message)
