"""One self-contained HTML page per report: styles, script, charts and data all inline.

The page opens from a CI artifact with no network: there is no external script, stylesheet,
font or image (no ``src``, ``href`` or ``url()`` at all), the charts are inline SVG
(:mod:`pytest_entropy.report.charts`), the fonts are the reader's system fonts, and the only
script sorts tables. The report's JSON document is embedded as
``<script type="application/json" id="entropy-data">`` so what the page draws can be checked
against what the command computed, and the page can be rendered again later.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pytest_entropy._version import __version__
from pytest_entropy.report.document import document_kind
from pytest_entropy.report.names import html_text as escape
from pytest_entropy.report.names import repair_surrogates, script_json
from pytest_entropy.report.sections import page_of

__all__ = ["render_html"]


_STYLE: Final = """
:root { --fg: #1d2430; --muted: #5b6472; --line: #d8dde5; --bg: #f6f7f9; --ok: #107a43;
  --bad: #b3261e; --warn: #9a6700; --accent: #0072B2; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif; }
header { background: #1d2430; color: #fff; padding: 20px 32px; }
header h1 { margin: 0; font-size: 22px; font-weight: 600; }
header .sub { color: #b9c1cc; font-size: 13px; margin-top: 4px; word-break: break-all; }
main { max-width: 1100px; margin: 0 auto; padding: 8px 24px 48px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 20px 0 8px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px 16px;
  min-width: 150px; }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase;
  letter-spacing: .04em; }
.card .value { font-size: 22px; font-weight: 600; font-variant-numeric: tabular-nums; }
.card.ok .value { color: var(--ok); } .card.bad .value { color: var(--bad); }
.card.warn .value { color: var(--warn); }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px;
  padding: 4px 20px 16px; margin: 16px 0; overflow-x: auto; }
section h2 { font-size: 17px; margin: 14px 0 8px; }
.note { color: var(--muted); margin: 0 0 8px; font-size: 13px; }
.empty { color: var(--muted); font-style: italic; }
.chart svg { width: 100%; height: auto; max-width: 900px; display: block; }
table { border-collapse: collapse; width: 100%; font-size: 13.5px; }
th, td { text-align: left; padding: 5px 10px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { background: #eef1f5; font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th[aria-sort="ascending"]::after { content: " ▲"; }
table.sortable th[aria-sort="descending"]::after { content: " ▼"; }
tbody tr:hover { background: #f3f6fa; }
pre { background: #f3f5f8; border: 1px solid var(--line); border-radius: 6px; padding: 10px;
  overflow-x: auto; font-size: 12.5px; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
dl.meta dt { color: var(--muted); } dl.meta dd { margin: 0; word-break: break-all; }
.pass { color: var(--ok); font-weight: 600; } .fail { color: var(--bad); font-weight: 600; }
footer { color: var(--muted); font-size: 12px; text-align: center; padding: 16px; }
"""

# Sorting is the page's only behaviour: a click on a header orders the rows by that column
# (numbers by value, text by code point), a second click reverses.
_SCRIPT: Final = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var descending = th.getAttribute("aria-sort") !== "descending";
      table.querySelectorAll("th").forEach(function (other) {
        other.removeAttribute("aria-sort");
      });
      th.setAttribute("aria-sort", descending ? "descending" : "ascending");
      var numeric = th.dataset.type === "num";
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[column].dataset.sort, y = b.cells[column].dataset.sort;
        var order = numeric ? Number(x) - Number(y) : (x < y ? -1 : x > y ? 1 : 0);
        return descending ? -order : order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def _embedded_json(document: Mapping[str, Any]) -> str:
    # Inside a script element "</script>" would end it and "<!--" switch the parser to the
    # escaped states: <, > and & are written \u003c, \u003e, \u0026 (report.names).
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
    return script_json(text)


def render_html(
    document: Mapping[str, Any],
    *,
    kind: str | None = None,
    surface: Mapping[str, Any] | None = None,
    inputs: Sequence[str] = (),
) -> str:
    """The page for one command's ``--json`` document (``kind`` is detected when omitted).

    ``surface`` adds the per-parameter freedom; ``inputs`` names what was read.
    """
    kind = kind or document_kind(document)
    page = page_of(kind, document, surface=surface, inputs=inputs)
    # Every name went through report.names; a lone surrogate in anything else (a chart's
    # markup) is written as the JSON path writes it, so the page always encodes as UTF-8.
    return repair_surrogates(
        "\n".join(
            [
                "<!DOCTYPE html>",
                '<html lang="en"><head><meta charset="utf-8">',
                '<meta name="viewport" content="width=device-width, initial-scale=1">',
                f"<title>{escape(page.title)}</title>",
                f"<style>{_STYLE}</style></head>",
                f'<body data-kind="{escape(kind)}">',
                f"<header><h1>{escape(page.title)}</h1>"
                f'<div class="sub">pytest-entropy {escape(__version__)}</div></header>',
                "<main>",
                '<div class="cards">' + "".join(page.cards) + "</div>",
                *page.sections,
                "</main>",
                "<footer>rendered by pytest-entropy; everything on this page is inline</footer>",
                f'<script type="application/json" id="entropy-data">{_embedded_json(document)}'
                "</script>",
                f"<script>{_SCRIPT}</script>",
                "</body></html>",
                "",
            ]
        )
    )
