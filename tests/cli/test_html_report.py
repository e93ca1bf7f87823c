"""``--html`` and ``--markdown`` on measure, status, compile, trial and certify, in-process.

The browser tests (tests/browser) check what the page draws; these check what the files
hold and that asking for them changes nothing else.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.report.document import document_kind, human_number, score_terms
from pytest_entropy.report.html import render_html
from pytest_entropy.report.markdown import sparkline

# find_spec, not importorskip: importing pygal at collection would put its import finder on
# sys.meta_path before the report code takes it off again (see report/charts.py).
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pygal") is None, reason="the html extra (pygal) is not installed"
)

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
BASE = ["--sessions", str(DEMO / "sessions"), "--surface", str(DEMO / "surface.json")]

# Any attribute or CSS url() that would make the browser fetch from a network address.
NETWORK_REFERENCE = re.compile(
    r"""(?:\b(?:src|href|xlink:href|action|data)\s*=\s*["']?\s*(?:https?:)?//)"""
    r"""|(?:url\(\s*["']?\s*(?:https?:)?//)|(?:@import)""",
    re.IGNORECASE,
)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    artifact = tmp_path / "artifact.json"
    assert main(["compile", *BASE, "--out", str(artifact), "--json"]) == 0
    return {
        "measure": ["measure", *BASE],
        "status": ["status", *BASE],
        "compile": ["compile", *BASE],
        "trial": ["trial", *BASE, "--artifact", str(artifact)],
        "certify": ["certify", *BASE, "--trial", "--artifact", str(artifact), "--format", "json"],
    }


@pytest.mark.parametrize("kind", ["measure", "status", "compile", "trial", "certify"])
def test_html_and_markdown_files_change_no_output(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _commands(tmp_path)[kind]
    capsys.readouterr()
    json_argv = argv if kind == "certify" else [*argv, "--json"]
    plain = _run(capsys, *argv)
    as_json = _run(capsys, *json_argv)
    page, summary = tmp_path / f"{kind}.html", tmp_path / f"{kind}.md"
    with_files = _run(capsys, *argv, "--html", str(page), "--markdown", str(summary))
    assert _timeless(with_files) == _timeless(plain)
    document = json.loads(as_json[1])
    assert document_kind(document) == kind
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert "<svg" in html
    assert NETWORK_REFERENCE.search(html) is None
    embedded = re.search(r'<script type="application/json" id="entropy-data">(.*?)</script>', html)
    assert embedded is not None
    assert json.loads(embedded.group(1).replace("<\\/", "</")) == document
    markdown = summary.read_text(encoding="utf-8")
    assert markdown.startswith("## Entropy ")
    assert markdown.splitlines()[0] == _headline(kind, document)


def _timeless(result: tuple[int, str, str]) -> tuple[int, str, str]:
    """The compile notice prints its elapsed time; nothing else may differ."""
    code, out, err = result
    return code, re.sub(r"\(\d+ms\)", "(<ms>)", out), err


def _headline(kind: str, document: dict[str, Any]) -> str:
    if kind == "measure":
        return f"## Entropy report: score {human_number(document['report']['score'])}"
    if kind == "status":
        return f"## Entropy status: {document['verdict']}"
    if kind == "compile":
        return f"## Entropy compile: {document['status']}"
    if kind == "trial":
        return f"## Entropy trial: {document['verdict']}"
    verdict = "PASS" if document["evaluation"]["passed"] else "FAIL"
    return f"## Entropy certification (metric v2): {verdict}"


def test_the_page_is_the_same_twice(tmp_path: Path) -> None:
    first, second = tmp_path / "a.html", tmp_path / "b.html"
    assert main(["status", *BASE, "--html", str(first)]) == 0
    assert main(["status", *BASE, "--html", str(second)]) == 0
    assert first.read_bytes() == second.read_bytes()


def test_measure_page_shows_the_per_parameter_freedom(tmp_path: Path) -> None:
    page = tmp_path / "m.html"
    assert main(["measure", *BASE, "--html", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert 'id="parameter-table"' in html
    assert "enum: log2(values) / saturation" in html or "type string" in html


def test_score_terms_add_up_to_the_score(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, "measure", *BASE, "--json")
    report = json.loads(out)["report"]
    terms = score_terms(report)
    assert abs(sum(term.contribution for term in terms) - report["score"]) < 1e-5
    static = next(term for term in terms if term.static)
    assert abs(static.contribution - report["staticScore"]) < 1e-5


def test_an_unknown_document_is_an_input_error() -> None:
    with pytest.raises(EntropyInputError, match="not the --json output"):
        document_kind({"something": 1})
    with pytest.raises(EntropyInputError, match="lacks"):
        render_html({"reportHash": "x", "report": {}})


def test_unwritable_html_path_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, "measure", *BASE, "--html", str(tmp_path))
    assert code == 2
    assert "cannot write the report" in err


def test_numbers_read_as_a_person_reads_them() -> None:
    assert human_number(-0.00002199999999999945) == "-0.000022"
    assert human_number(-0.0000001) == "0"
    assert human_number(3.0) == "3"
    assert human_number(7) == "7"
    assert sparkline([0.5, 0.5]) == "▁▁"
    assert sparkline([1.0, 0.0, 0.5]) == "█▁▅"


def test_certify_markdown_keeps_the_certification_summary_first(tmp_path: Path) -> None:
    from pytest_entropy.core.certify import markdown_lines

    target = tmp_path / "c.md"
    main(["certify", "--format", "json", "--markdown", str(target)])
    text = target.read_text(encoding="utf-8")
    report = json.loads(json.dumps(_certification_report()))
    assert text == "\n".join(markdown_lines(report)) + "\n"


def _certification_report() -> dict[str, object]:
    from pytest_entropy.run.certification import Certification, CertificationOptions

    return Certification(CertificationOptions()).report()


def test_no_chart_library_at_plugin_or_cli_load() -> None:
    code = (
        "import sys, pytest_entropy.plugin, pytest_entropy.cli.app;"
        "from pytest_entropy.cli.app import build_parser; build_parser();"
        "bad = [m for m in ('pygal', 'playwright', 'rich', 'tqdm') if m in sys.modules];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_after_a_chart_a_missing_module_still_raises_import_error(tmp_path: Path) -> None:
    # pygal puts an old-protocol finder on sys.meta_path; under -W error its ImportWarning
    # used to replace the ImportError optional imports rely on (the compiler's replay broke).
    assert main(["measure", *BASE, "--html", str(tmp_path / "m.html")]) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ImportError):
            importlib.import_module("pytest_entropy_no_such_module")


def test_trial_page_lists_the_surface_freedom_worst_first(tmp_path: Path) -> None:
    artifact, page = tmp_path / "a.json", tmp_path / "t.html"
    assert main(["compile", *BASE, "--out", str(artifact), "--json"]) == 0
    assert main(["trial", *BASE, "--artifact", str(artifact), "--html", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    table = html.split('<table id="freedom-table"', 1)[1].split("</table>", 1)[0]
    refs = re.findall(r"<tr><td data-sort=\"([^\"]+)\">", table)
    assert refs[:2] == ["mcp.notes.search", "mcp.notes.create"]
