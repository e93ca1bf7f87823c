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
    result.assert_outcomes(passed=26)  # 21 + the 5 corpus checks (issue 29)
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


GATE_FILES = ("g.json", "g.md", "g.html")


def _cli_reports(tmp: Path, sessions: str, surface: str) -> tuple[str, str, str]:
    """What ``pytest-entropy measure --json --markdown --html`` writes for the corpus."""
    import contextlib
    import io

    from pytest_entropy.cli.app import main

    out = io.StringIO()
    argv = ["measure", "--sessions", sessions, "--surface", surface, "--json"]
    with contextlib.redirect_stdout(out):
        code = main([*argv, "--markdown", str(tmp / "cli.md"), "--html", str(tmp / "cli.html")])
    assert code == 0
    return (
        out.getvalue(),
        (tmp / "cli.md").read_text(encoding="utf-8"),
        (tmp / "cli.html").read_text(encoding="utf-8"),
    )


def test_the_gate_alone_writes_the_measure_reports(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jsonschema import Draft202012Validator

    from pytest_entropy.report.json_schemas import schema_for

    sessions = pytester.path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    shutil.copy(DEMO / "surface.json", pytester.path / "surface.json")
    pytester.makepyfile("def test_ok():\n    pass\n")
    monkeypatch.chdir(pytester.path)
    corpus = [f"--entropy-sessions={sessions}", "--entropy-surface=surface.json"]
    files = ["--entropy-json=g.json", "--entropy-markdown=g.md", "--entropy-html=g.html"]
    for limit, outcomes in (("1", {"passed": 2}), ("0.1", {"passed": 1, "failed": 1})):
        result = pytester.runpytest_inprocess(
            "-p", "no:cacheprovider", *corpus, f"--entropy-max-score={limit}", *files
        )
        result.assert_outcomes(**outcomes)  # a failed gate writes its reports too
        result.stdout.fnmatch_lines(
            ["  JSON report: *g.json", "  Markdown: *g.md", "  HTML report: *g.html"]
        )
        written = [(pytester.path / name).read_text(encoding="utf-8") for name in GATE_FILES]
        # The bytes `pytest-entropy measure` writes for the same corpus.
        assert tuple(written) == _cli_reports(pytester.path, str(sessions), "surface.json")
        document = json.loads(written[0])
        assert not list(Draft202012Validator(schema_for("measure")).iter_errors(document))
        assert '<body data-kind="measure">' in written[2]
        for name in GATE_FILES:
            (pytester.path / name).unlink()


def test_the_baseline_gate_writes_them_and_a_failed_write_fails_the_gate(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)  # outside CI a missing baseline is written
    sessions = pytester.path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    (pytester.path / "blocker").write_text("a file, not a directory", encoding="utf-8")
    argv = ["-p", "no:cacheprovider", f"--entropy-sessions={sessions}"]
    result = pytester.runpytest_inprocess(
        *argv, "--entropy-baseline=base.json", "--entropy-markdown=m.md"
    )
    result.assert_outcomes(passed=1)
    assert "### Score decomposition" in (pytester.path / "m.md").read_text(encoding="utf-8")
    failed = pytester.runpytest_inprocess(
        *argv, "--entropy-max-score=1", "--entropy-html=blocker/page.html"
    )
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*entropy gate: cannot write the report:*"])
