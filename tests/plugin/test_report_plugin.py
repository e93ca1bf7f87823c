"""``--entropy-html`` and ``--entropy-markdown`` in a certification run (pytester)."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)

# find_spec, not importorskip: importing pygal at collection would put its import finder on
# sys.meta_path before the report code takes it off again (see report/charts.py).
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pygal") is None, reason="the html extra (pygal) is not installed"
)

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"


def test_certification_writes_html_and_markdown(pytester: pytest.Pytester) -> None:
    from pytest_entropy.core.certify import markdown_lines

    sessions = pytester.path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    shutil.copy(DEMO / "surface.json", pytester.path / "surface.json")
    result = pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        "--entropy-certify",
        "--entropy-sessions=sessions",
        "--entropy-surface=surface.json",
        "--entropy-json=r.json",
        "--entropy-markdown=r.md",
        "--entropy-html=r.html",
    )
    result.assert_outcomes(passed=21)
    result.stdout.fnmatch_lines(["  HTML report: *r.html"])
    report = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    markdown = (pytester.path / "r.md").read_text(encoding="utf-8")
    # The certification summary, byte for byte as before, then the corpus sections.
    assert markdown.startswith("\n".join(markdown_lines(report)) + "\n")
    assert "### Score decomposition" in markdown
    html = (pytester.path / "r.html").read_text(encoding="utf-8")
    assert '<body data-kind="certify">' in html
    assert 'id="chart-decomposition"' in html


def test_html_from_the_ini_file(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nentropy_html = page.html\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--entropy-certify")
    result.assert_outcomes(passed=20)
    assert (pytester.path / "page.html").read_text(encoding="utf-8").startswith("<!DOCTYPE")
