"""``pytest-entropy freedom``: static freedom of a surface, worst action first."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from pytest_entropy.cli.baseline import (
    SURFACE_ENTRY,
    add_baseline_options,
    baseline_exit_status,
)
from pytest_entropy.cli.common import (
    EXIT_OK,
    add_format_options,
    add_json,
    add_surface_option,
    print_json,
    print_lines,
    surface_of,
)
from pytest_entropy.cli.steering import add_explain_option, explain_of
from pytest_entropy.core.explain import explain_freedom
from pytest_entropy.core.fingerprint import surface_freedom_report
from pytest_entropy.core.jscompat import js_string
from pytest_entropy.report.names import terminal_text
from pytest_entropy.report.text import freedom_lines


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "freedom", help="static freedom of every action of a surface, worst first"
    )
    add_surface_option(parser, required=True)
    add_format_options(parser, sessions=False)
    add_explain_option(parser)
    add_baseline_options(parser)
    add_json(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    surface = surface_of(args, args.surface)
    report = surface_freedom_report(surface)
    explanations = explain_freedom(surface) if explain_of(args) else None
    if args.json:
        if explanations is not None:
            report = {**report, "explanations": explanations}  # added only with --explain
        print_json(out, report)
    else:
        print_lines(out, freedom_lines(report))
        for row in explanations or ():
            explained = (
                f"explain: {row['ref']}.{row['parameter']} {js_string(row['freedom'])}"
                f" ({row['rule']}): {row['advice']}"
            )
            out.write(terminal_text(explained) + "\n")
    # --baseline FILE: the freedom ratchet (entry "surface"): exit 1 on a loosening or a rise.
    return baseline_exit_status(args, surface, out, entry=SURFACE_ENTRY) or EXIT_OK
