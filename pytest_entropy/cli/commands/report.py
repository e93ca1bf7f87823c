"""``pytest-entropy report``: render a saved ``--json`` output as HTML or Markdown.

CI can keep the JSON a command printed and render it later, or elsewhere::

    pytest-entropy status --sessions logs/ --json > status.json
    pytest-entropy report --from status.json --html status.html --markdown "$GITHUB_STEP_SUMMARY"

Without ``--html`` or ``--markdown`` the Markdown goes to stdout. The kind of report
(measure, status, compile, trial, certify) is read from the document's keys.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

from pytest_entropy.cli.common import EXIT_OK, add_surface_option, surface_of
from pytest_entropy.cli.reports import add_report_options, wants_reports, write_reports
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.report.document import KINDS, document_kind


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "report", help="render a saved --json output as HTML or Markdown"
    )
    parser.add_argument(
        "--from",
        dest="source",
        required=True,
        metavar="FILE",
        help="the --json output of measure, status, compile, trial or certify",
    )
    parser.add_argument(
        "--kind", choices=KINDS, help="the command that wrote FILE (default: read from its keys)"
    )
    add_surface_option(parser)
    add_report_options(parser)
    parser.set_defaults(handler=run)


def _document(path: str) -> Any:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EntropyInputError("file not found", source=path) from None
    except (OSError, UnicodeDecodeError) as error:
        raise EntropyInputError(f"cannot read: {error}", source=path) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise EntropyInputError(f"not JSON: {error.msg}", source=path, line=error.lineno) from None


def run(args: argparse.Namespace, out: TextIO) -> int:
    document = _document(args.source)
    if not isinstance(document, dict):
        raise EntropyInputError("a report document is a JSON object", source=args.source)
    try:
        kind = args.kind or document_kind(document)
    except EntropyInputError as error:
        raise EntropyInputError(error.problem, source=args.source) from None
    surface = surface_of(args, args.surface) if args.surface else None
    if wants_reports(args):
        write_reports(args, kind, document, surface=surface, inputs=[args.source])
        return EXIT_OK
    from pytest_entropy.report.markdown import render_markdown

    out.write(render_markdown(document, kind=kind, surface=surface, inputs=[args.source]))
    return EXIT_OK
