"""Inline SVG charts for the HTML report, drawn by pygal (the ``html`` extra).

pygal is imported here, lazily, and only when a page is rendered: the plugin and the CLI
never load it otherwise. Its output is made self-contained and deterministic: no tooltip
script (pygal links one from a CDN by default), no comments, no random chart ids. Every
point keeps its exact value as pygal's ``<desc class="value">`` text (JavaScript number
text), which is what the browser test reads back.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, Final

from pytest_entropy.core.errors import EntropyError
from pytest_entropy.core.jscompat import js_string
from pytest_entropy.report.document import RatchetSeries, ScoreTerm
from pytest_entropy.report.names import terminal_text

__all__ = [
    "bar_chart",
    "decomposition_chart",
    "ratchet_chart",
]

# Fonts are the reader's own (no web font is fetched); the palette is colour-blind safe
# (Okabe-Ito): score orange, static blue, the fit line black, then one colour per model.
_FONTS: Final = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', sans-serif"
_PALETTE: Final = (
    "#E69F00",
    "#0072B2",
    "#222222",
    "#009E73",
    "#CC79A7",
    "#D55E00",
    "#56B4E9",
    "#F0E442",
    "#999999",
)
# Past this many sessions a dot per session is clutter; the line alone stays readable.
_MAX_DOTS: Final = 120
_MAX_X_LABELS: Final = 12


def _pygal() -> Any:
    try:
        import pygal
    except ImportError:
        raise EntropyError("HTML reports need pygal: pip install 'pytest-entropy[html]'") from None
    _drop_map_plugin_finder()
    return pygal


def _drop_map_plugin_finder() -> None:
    """Take pygal's map-plugin finder off ``sys.meta_path`` (we draw no maps).

    pygal appends a finder with only the old ``find_module`` protocol; on Python 3.11 every
    import that no other finder resolves then warns ``ImportWarning``, and under
    ``-W error`` (pytest's ``filterwarnings = error``) that warning replaces the
    ``ImportError`` an optional import expects, so unrelated code fails (jsonschema's format
    checkers, for one).
    """
    sys.meta_path[:] = [
        finder
        for finder in sys.meta_path
        if not (type(finder).__name__ == "PluginImportFixer" and type(finder).__module__ == "pygal")
    ]


def _self_contained(chart_id: str) -> Callable[[Any], Any]:
    """pygal's xml filter: drop ``<script>`` (its config for a tooltip script we do not load)
    and comments (links to pygal's site), so nothing on the page names a network address,
    and prefix the legend ids with the chart's so two charts on a page never share an id."""

    def apply(root: Any) -> Any:
        for parent in list(root.iter()):
            for child in list(parent):
                tag = child.tag
                if not isinstance(tag, str) or tag.rsplit("}", 1)[-1] == "script":
                    parent.remove(child)
        for element in root.iter():
            identifier = element.get("id")
            if identifier and not identifier.startswith("chart-"):
                element.set("id", f"{chart_id}-{identifier}")
        return root

    return apply


def _chart(kind: str, chart_id: str, *, colors: Sequence[str] = _PALETTE, **config: Any) -> Any:
    pygal = _pygal()
    style = pygal.style.Style(
        font_family=_FONTS,
        background="transparent",
        plot_background="#ffffff",
        foreground="#333333",
        foreground_strong="#111111",
        foreground_subtle="#888888",
        colors=tuple(colors),
        legend_font_size=13,
        label_font_size=11,
        major_label_font_size=11,
        title_font_size=15,
    )
    chart = getattr(pygal, kind)(
        style=style,
        js=[],
        disable_xml_declaration=True,
        value_formatter=js_string,
        legend_at_bottom=True,
        legend_at_bottom_columns=2,
        truncate_legend=-1,
        explicit_size=False,
        **config,
    )
    chart.uuid = chart_id  # pygal's default is a random uuid4: the page would never repeat
    chart.add_xml_filter(_self_contained(chart_id))
    return chart


def _render(chart: Any) -> str:
    svg: str = chart.render(is_unicode=True)
    return svg


def ratchet_chart(series: RatchetSeries, verdict: str) -> str:
    """Score per session (static and behavioral shares stacked), the fit line, each model."""
    count = len(series.scores)
    dots = count <= _MAX_DOTS
    legend_rows = (len(series.models) + 4) // 2
    chart = _chart(
        "Line",
        "ratchet",
        title=f"ratchet: {terminal_text(verdict)} · slope {js_string(series.slope)}/session",
        x_title="session (oldest → newest)",
        y_title="entropy score (lower is better)",
        show_dots=dots,
        dots_size=3.5,
        allow_interruptions=True,
        x_label_rotation=20,
        show_minor_x_labels=False,
        width=900,
        height=480 + 22 * legend_rows,
        # pygal sizes the legend for its own font metrics; a long model name wraps past them.
        margin_bottom=10 + 14 * legend_rows,
        # The static share is drawn opaque over the score so the band above it reads as
        # the behavioral share, not as a blend of the two colours.
        css=(
            "file://style.css",
            "file://graph.css",
            "inline:#chart-ratchet .serie-0 .line.reactive { fill-opacity: .55 }"
            " #chart-ratchet .serie-1 .line.reactive { fill-opacity: .9 }",
        ),
    )
    chart.x_labels = [terminal_text(label) for label in series.labels]
    chart.x_labels_major_every = max(1, count // _MAX_X_LABELS)
    # The score is drawn filled and the static share filled over it, so the band between
    # the two is the behavioral share: the stack, with each point's exact value kept.
    chart.add("score = static + behavioral", list(series.scores), fill=True)
    chart.add("static share", list(series.static), fill=True)
    chart.add(
        "least-squares line",
        list(series.fit),
        show_dots=False,
        stroke_style={"width": 2, "dasharray": "6, 4"},
    )
    for model in series.models:
        chart.add(f"{model.model} (behavioral)", list(model.values), show_dots=dots)
    return _render(chart)


def decomposition_chart(columns: Sequence[tuple[str, Sequence[ScoreTerm]]]) -> str:
    """Each term's share of the score, one bar per term and one series per report."""
    terms = columns[0][1] if columns else ()
    chart = _chart(
        "HorizontalBar",
        "decomposition",
        colors=("#0072B2", "#E69F00", *_PALETTE[3:]) if len(columns) > 1 else ("#E69F00",),
        title="score by term (weight × term / successes)",
        width=900,
        height=120 + 42 * len(terms) * max(1, len(columns)),
        print_values=False,
    )
    # pygal stacks horizontal bars bottom-up: reversed, the chart reads like the table.
    chart.x_labels = [f"{term.label} ×{js_string(term.weight)}" for term in reversed(terms)]
    for name, column in columns:
        chart.add(name, [term.contribution for term in reversed(column)])
    return _render(chart)


def bar_chart(
    chart_id: str,
    title: str,
    rows: Sequence[tuple[str, float]],
    *,
    series: str,
    horizontal: bool = True,
    color: str = "#0072B2",
    label: Callable[[str], str] = str,
) -> str:
    """A one-series bar chart of ``(label, value)`` rows (trial classes, checks, freedom)."""
    chart = _chart(
        "HorizontalBar" if horizontal else "Bar",
        chart_id,
        colors=(color,),
        title=title,
        width=900,
        height=120 + 30 * max(1, len(rows)),
        show_legend=False,
    )
    shown = list(reversed(rows)) if horizontal else list(rows)
    chart.x_labels = [terminal_text(label(name)) for name, _ in shown]
    chart.add(series, [value for _, value in shown])
    return _render(chart)
