"""The building blocks of a report page: cells, tables, cards, sections, definition lists.

Every text goes through :func:`html.escape`; numbers show as a person reads them and sort
by their exact JavaScript number text (``data-sort``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_entropy.core.jscompat import js_string
from pytest_entropy.report.document import human_number
from pytest_entropy.report.names import html_text as escape

__all__ = ["Cell", "Page", "card", "cell", "meta_list", "section", "table"]


@dataclass(frozen=True, slots=True)
class Cell:
    """A table cell: what the reader sees, the value it sorts by, and whether it is numeric."""

    text: str
    sort: str
    numeric: bool


def cell(value: Any) -> Cell:
    """A cell for a JSON value: numbers read as a person reads them, sort by exact value."""
    if isinstance(value, bool) or value is None:
        text = "—" if value is None else ("yes" if value else "no")
        return Cell(text, text, False)
    if isinstance(value, int | float):
        return Cell(human_number(value), js_string(value), True)
    if isinstance(value, Sequence) and not isinstance(value, str):
        text = ", ".join(str(item) for item in value)
        return Cell(text, text, False)
    return Cell(str(value), str(value), False)


def table(
    table_id: str, headers: Sequence[str], rows: Sequence[Sequence[Any]], *, sortable: bool = True
) -> str:
    """An HTML table; with ``sortable`` a click on a header sorts by that column."""
    if not rows:
        return '<p class="empty">none</p>'
    cells = [[value if isinstance(value, Cell) else cell(value) for value in row] for row in rows]
    numeric = [all(row[i].numeric for row in cells) for i in range(len(headers))]
    head = "".join(
        f'<th{" class=num" if numeric[i] else ""} data-type="{"num" if numeric[i] else "text"}"'
        f">{escape(name)}</th>"
        for i, name in enumerate(headers)
    )
    body = "\n".join(
        "<tr>"
        + "".join(
            f'<td{" class=num" if numeric[i] else ""} data-sort="{escape(value.sort)}">'
            f"{escape(value.text)}</td>"
            for i, value in enumerate(row)
        )
        + "</tr>"
        for row in cells
    )
    kind = ' class="sortable"' if sortable else ""
    return (
        f'<table id="{escape(table_id)}"{kind}><thead><tr>{head}</tr></thead>'
        f"<tbody>\n{body}\n</tbody></table>"
    )


def card(label: str, value: Any, *, tone: str = "") -> str:
    """A headline number or word, large."""
    shown = human_number(value) if isinstance(value, int | float) else str(value)
    tone_class = f" {tone}" if tone else ""
    return (
        f'<div class="card{tone_class}"><div class="label">{escape(label)}</div>'
        f'<div class="value">{escape(shown)}</div></div>'
    )


def section(section_id: str, title: str, *parts: str, note: str = "") -> str:
    """A titled block of the page."""
    lead = f'<p class="note">{escape(note)}</p>' if note else ""
    return (
        f'<section id="{escape(section_id)}"><h2>{escape(title)}</h2>{lead}'
        + "\n".join(parts)
        + "</section>"
    )


@dataclass(frozen=True, slots=True)
class Page:
    """What one report kind contributes: headline cards and sections, in order."""

    title: str
    cards: tuple[str, ...]
    sections: tuple[str, ...]


def meta_list(items: Sequence[tuple[str, str]]) -> str:
    """A definition list of ``(label, text)`` pairs (hashes, versions, inputs)."""
    return (
        '<dl class="meta">'
        + "".join(f"<dt>{escape(label)}</dt><dd>{escape(text)}</dd>" for label, text in items)
        + "</dl>"
    )
