"""``pytest-entropy measure``: session files to one hashed report."""

from __future__ import annotations

import argparse

from pytest_entropy.cli.baseline import (
    add_baseline_options,
    baseline_exit_status,
    size_factor_of,
)
from pytest_entropy.cli.common import (
    add_corpus_inputs,
    add_corpus_reading,
    add_json,
    check_corpus,
    engine_options_of,
    foreign_lines,
    load_optional_repairs,
    optional_surface_of,
    print_json,
    print_lines,
    read_options_of,
    session_sources_of,
)
from pytest_entropy.cli.reports import add_report_options, write_reports
from pytest_entropy.core.meter import report_hash
from pytest_entropy.core.status import surface_hash
from pytest_entropy.report.text import diagnostics_lines, report_lines
from pytest_entropy.run.corpus import measure_plan, read_corpus

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, TextIO


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "measure", help="measure session files into a hashed entropy report"
    )
    add_corpus_inputs(parser)
    add_corpus_reading(
        parser, catalog_digest="catalog digest to record (default: the surface hash, or empty)"
    )
    add_baseline_options(parser)
    add_json(parser)
    add_report_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    size_factor_of(args)  # a bad --size-factor is a usage error before anything is read
    surface = optional_surface_of(args)
    options = read_options_of(args, surface)
    sources = session_sources_of(args, options)
    repairs = load_optional_repairs(args.repairs)
    if args.catalog_digest is not None:
        digest = args.catalog_digest
    else:
        digest = surface_hash(surface) if surface is not None else ""
    result = read_corpus(sources, measure_plan(options), engine_options_of(args))
    check_corpus(args, result.diagnostics, shows_diagnostics=True)
    report = result.state.finalize(surface, repairs, digest, metric_version=options.metric_version)
    hashed = report_hash(report)
    document = {
        "reportHash": hashed,
        "report": report.to_json(),
        "diagnostics": result.diagnostics.to_json(),
    }
    if args.json:
        print_json(out, document)
    else:
        print_lines(out, report_lines(report, hashed))
        print_lines(out, diagnostics_lines(result.diagnostics))
        print_lines(out, foreign_lines(result.diagnostics))
    write_reports(args, "measure", document, surface=surface, inputs=args.sessions)
    return baseline_exit_status(args, report, out)
