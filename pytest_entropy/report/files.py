"""Write the HTML and Markdown renderings of a report document (both fronts use this)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.state.store import StoreError, write_file_atomic

__all__ = ["write_report_files"]


def write_report_files(
    document: Mapping[str, Any],
    *,
    kind: str | None = None,
    html: str | Path | None = None,
    markdown: str | Path | None = None,
    surface: Mapping[str, Any] | None = None,
    inputs: Sequence[str] = (),
) -> list[Path]:
    """Render ``document`` to each path given (atomically); returns the paths written."""
    written = []
    if html is not None:
        from pytest_entropy.report.html import render_html

        page = render_html(document, kind=kind, surface=surface, inputs=inputs)
        written.append(_write(Path(html), page))
    if markdown is not None:
        from pytest_entropy.report.markdown import render_markdown

        text = render_markdown(document, kind=kind, surface=surface, inputs=inputs)
        written.append(_write(Path(markdown), text))
    return written


def _write(path: Path, text: str) -> Path:
    try:
        write_file_atomic(path, text, mode=0o644)
    except OSError as error:
        raise EntropyInputError(
            f"cannot write the report: {error.strerror}", source=str(path)
        ) from None
    except StoreError as error:
        raise EntropyInputError(f"cannot write the report: {error}") from None
    return path
