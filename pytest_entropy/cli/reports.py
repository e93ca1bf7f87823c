"""``--html PATH`` and ``--markdown PATH`` for the commands that print a report.

A command registers the two options with :func:`add_report_options` and, after it has built
its ``--json`` document, calls :func:`write_reports`. The files are written in addition to
the command's normal output, which they never change; without either option nothing here
runs (and the charting library is never imported).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["add_report_options", "wants_reports", "write_reports"]


def add_report_options(parser: argparse.ArgumentParser) -> None:
    """``--html PATH`` (a self-contained page) and ``--markdown PATH`` (a CI job summary)."""
    parser.add_argument(
        "--html",
        metavar="PATH",
        help="also write a self-contained HTML report with charts to PATH (needs the html extra)",
    )
    parser.add_argument(
        "--markdown",
        metavar="PATH",
        help="also write the report as Markdown to PATH (e.g. $GITHUB_STEP_SUMMARY)",
    )


def wants_reports(args: argparse.Namespace) -> bool:
    """Whether the command line asked for an HTML or Markdown file."""
    return bool(getattr(args, "html", None) or getattr(args, "markdown", None))


def write_reports(
    args: argparse.Namespace,
    kind: str,
    document: Mapping[str, Any],
    *,
    surface: Mapping[str, Any] | None = None,
    inputs: Sequence[str] = (),
) -> None:
    """Write the files ``--html``/``--markdown`` name for ``document`` (a no-op without them)."""
    if not wants_reports(args):
        return
    from pytest_entropy.report.files import write_report_files

    write_report_files(
        document,
        kind=kind,
        html=getattr(args, "html", None),
        markdown=getattr(args, "markdown", None),
        surface=surface,
        inputs=inputs,
    )
