"""``pytest-entropy freedom``: static freedom of a surface, worst action first."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EXIT_OK,
    add_format_options,
    add_json,
    add_surface_option,
    print_json,
    print_lines,
    surface_of,
)
from pytest_entropy.core.fingerprint import surface_freedom_report
from pytest_entropy.report.text import freedom_lines
from pytest_entropy.testing.ratchet import (
    SURFACE_ENTRY,
    add_baseline_options,
    baseline_exit_status,
)


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "freedom", help="static freedom of every action of a surface, worst first"
    )
    add_surface_option(parser, required=True)
    add_format_options(parser, sessions=False)
    add_baseline_options(parser)
    add_json(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    surface = surface_of(args, args.surface)
    report = surface_freedom_report(surface)
    if args.json:
        print_json(out, report)
    else:
        print_lines(out, freedom_lines(report))
    # --baseline FILE: the freedom ratchet (entry "surface"): exit 1 on a loosening or a rise.
    return baseline_exit_status(args, surface, out, entry=SURFACE_ENTRY) or EXIT_OK
