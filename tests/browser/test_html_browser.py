"""The HTML report in a real headless chromium: it loads with no console error and no
network request, the charts draw the report's numbers, the tables sort, and a screenshot
of each kind is saved under the test's tmp path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.report.document import ratchet_series, score_terms

pytestmark = pytest.mark.browser

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
BASE = ["--sessions", str(DEMO / "sessions"), "--surface", str(DEMO / "surface.json")]


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    main(list(argv))
    return json.loads(capsys.readouterr().out)


def _render(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> tuple[Path, Any]:
    artifact = tmp_path / "artifact.json"
    main(["compile", *BASE, "--out", str(artifact)])
    argv = {
        "measure": ["measure", *BASE],
        "status": ["status", *BASE],
        "compile": ["compile", *BASE],
        "trial": ["trial", *BASE, "--artifact", str(artifact)],
        "certify": ["certify", *BASE, "--trial", "--artifact", str(artifact)],
    }[kind]
    page = tmp_path / f"{kind}.html"
    extra = ["--format", "json"] if kind == "certify" else ["--json"]
    document = _json(capsys, *argv, *extra, "--html", str(page))
    return page, document


def _values(page: Any, selector: str) -> list[float]:
    texts = page.eval_on_selector_all(selector, "nodes => nodes.map(n => n.textContent)")
    return [float(text) for text in texts]


def _centres(page: Any, selector: str) -> list[float]:
    return [
        float(value)
        for value in page.eval_on_selector_all(
            selector, "nodes => nodes.map(n => n.getAttribute('cy'))"
        )
    ]


def _clean(visit: Any) -> None:
    assert visit.console_errors == []
    assert visit.page_errors == []
    assert visit.blocked == []


@pytest.mark.parametrize("kind", ["measure", "status", "compile", "trial", "certify"])
def test_every_kind_loads_offline_and_draws_a_chart(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], open_page: Any
) -> None:
    path, document = _render(tmp_path, capsys, kind)
    visit = open_page(path)
    _clean(visit)
    page = visit.page
    assert page.locator("svg").count() >= 1
    box = page.locator("svg").first.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 100
    embedded = json.loads(page.inner_text("#entropy-data"))
    assert embedded == document
    page.screenshot(path=str(tmp_path / f"{kind}.png"), full_page=True)
    assert (tmp_path / f"{kind}.png").stat().st_size > 10_000


def test_the_ratchet_chart_draws_the_reports_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], open_page: Any
) -> None:
    path, document = _render(tmp_path, capsys, "status")
    visit = open_page(path)
    _clean(visit)
    page = visit.page
    series = ratchet_series(document["corpus"])
    overlay = "#chart-ratchet .plot.overlay"
    scores = _values(page, f"{overlay} .serie-0 desc.value")
    static = _values(page, f"{overlay} .serie-1 desc.value")
    oldest_first = list(reversed(document["corpus"]["sessions"]))
    assert scores == [item["report"]["score"] for item in oldest_first]
    assert static == [item["report"]["staticScore"] for item in oldest_first]
    # The drawing, not only the labels: a point's height is a linear function of its value.
    heights = _centres(page, f"{overlay} .serie-0 circle") + _centres(
        page, f"{overlay} .serie-1 circle"
    )
    values = scores + static
    pairs = list(zip(heights, values, strict=True))
    (y0, v0), (y1, v1) = max(pairs), min(pairs)
    scale = (y1 - y0) / (v1 - v0)
    for height, value in zip(heights, values, strict=True):
        assert abs(y0 + (value - v0) * scale - height) < 0.5
    # One line per model, and the verdict and slope in the chart's title.
    for index, model in enumerate(series.models, start=3):
        drawn = _values(page, f"{overlay} .serie-{index} desc.value")
        assert drawn == [value for value in model.values if value is not None]
    title = page.text_content("#chart-ratchet .title.plot_title") or ""
    assert document["verdict"] in title
    slope = document["corpus"]["trend"]["slopePerStep"]
    assert f"slope {slope}" in title


def test_the_decomposition_chart_adds_up_to_the_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], open_page: Any
) -> None:
    path, document = _render(tmp_path, capsys, "measure")
    visit = open_page(path)
    _clean(visit)
    drawn = _values(visit.page, "#chart-decomposition .plot .serie-0 desc.value")
    expected = [term.contribution for term in reversed(score_terms(document["report"]))]
    assert drawn == pytest.approx(expected, abs=1e-12)
    assert sum(drawn) == pytest.approx(document["report"]["score"], abs=1e-5)


def test_the_tools_table_sorts_on_a_click(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], open_page: Any
) -> None:
    path, document = _render(tmp_path, capsys, "measure")
    visit = open_page(path)
    page = visit.page

    def column(index: int) -> list[str]:
        return page.eval_on_selector_all(
            f"#tools-table tbody tr td:nth-child({index})",
            "cells => cells.map(c => c.dataset.sort)",
        )

    worst_first = [row["ref"] for row in document["report"]["refs"]]
    assert column(1) == worst_first
    page.click("#tools-table th:nth-child(3)")  # calls, descending
    calls = [float(value) for value in column(3)]
    assert calls == sorted(calls, reverse=True)
    page.click("#tools-table th:nth-child(3)")  # and ascending
    calls = [float(value) for value in column(3)]
    assert calls == sorted(calls)
    _clean(visit)
