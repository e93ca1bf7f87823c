"""``pytest-entropy report --from FILE.json``: render a saved --json output later."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.report.html import render_html
from pytest_entropy.report.markdown import render_markdown

# find_spec, not importorskip: importing pygal at collection would put its import finder on
# sys.meta_path before the report code takes it off again (see report/charts.py).
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pygal") is None, reason="the html extra (pygal) is not installed"
)

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
BASE = ["--sessions", str(DEMO / "sessions"), "--surface", str(DEMO / "surface.json")]


def _save(capsys: pytest.CaptureFixture[str], path: Path, *argv: str) -> None:
    capsys.readouterr()
    main(list(argv))
    path.write_text(capsys.readouterr().out, encoding="utf-8")


@pytest.mark.parametrize(
    ("kind", "argv"),
    [
        ("measure", ["measure", *BASE, "--json"]),
        ("status", ["status", *BASE, "--json"]),
        ("compile", ["compile", *BASE, "--json"]),
        ("certify", ["certify", "--format", "json"]),
    ],
)
def test_report_renders_a_saved_json_output(
    kind: str, argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / f"{kind}.json"
    _save(capsys, saved, *argv)
    document = json.loads(saved.read_text(encoding="utf-8"))
    page, summary = tmp_path / "page.html", tmp_path / "page.md"
    code = main(["report", "--from", str(saved), "--html", str(page), "--markdown", str(summary)])
    assert code == 0
    assert capsys.readouterr().out == ""
    assert page.read_text(encoding="utf-8") == render_html(document, inputs=[str(saved)])
    assert f'<body data-kind="{kind}">' in page.read_text(encoding="utf-8")
    expected = render_markdown(document, inputs=[str(saved)])
    assert summary.read_text(encoding="utf-8") == expected
    # Without --html or --markdown the Markdown goes to stdout.
    assert main(["report", "--from", str(saved)]) == 0
    assert capsys.readouterr().out == expected


def test_the_same_page_now_or_later(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved, now, later = tmp_path / "s.json", tmp_path / "now.html", tmp_path / "later.html"
    _save(capsys, saved, "status", *BASE, "--json", "--html", str(now))
    assert main(["report", "--from", str(saved), "--html", str(later)]) == 0
    # The inputs line differs (the sessions, or the JSON file); everything drawn is equal.
    assert (
        now.read_text(encoding="utf-8").split('<section id="freedom">')[0]
        == (later.read_text(encoding="utf-8").split('<section id="freedom">')[0])
    )


def test_a_file_that_is_not_a_report_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "a": 1,\n  oops\n}\n', encoding="utf-8")
    assert main(["report", "--from", str(broken)]) == 2
    assert f"{broken}:3: not JSON" in capsys.readouterr().err
    other = tmp_path / "other.json"
    other.write_text('{"version": 1, "actions": []}\n', encoding="utf-8")
    assert main(["report", "--from", str(other)]) == 2
    err = capsys.readouterr().err
    assert f"{other}: not the --json output" in err
    assert main(["report", "--from", str(tmp_path / "missing.json")]) == 2
    assert "file not found" in capsys.readouterr().err
