"""``pytest-entropy propose``: what the compiler would tighten, and what needs a human."""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EXIT_OK,
    add_corpus_inputs,
    add_corpus_reading,
    add_json,
    check_corpus,
    engine_options_of,
    load_optional_repairs,
    load_state_file,
    optional_surface_of,
    print_json,
    print_lines,
    read_options_of,
    session_sources_of,
)
from pytest_entropy.cli.generation import metric_version_of
from pytest_entropy.cli.steering import add_explain_option, explain_of, steering_lines
from pytest_entropy.core.artifact import apply_compiled_surface
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.meter import report_hash
from pytest_entropy.core.proposals import entropy_review_signals
from pytest_entropy.core.status import surface_hash
from pytest_entropy.core.v3.proposals import review_signals_v3
from pytest_entropy.report.text import proposal_lines
from pytest_entropy.run.compile import propose_sources
from pytest_entropy.state.store import COMPILED


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "propose", help="proposals from the evidence: tightenings, quarantines, review signals"
    )
    add_corpus_inputs(parser)
    parser.add_argument(
        "--artifact",
        metavar="FILE",
        help="a compiled artifact: propose against the effective surface, as the compiler does",
    )
    parser.add_argument(
        "--no-audit-values",
        action="store_true",
        help="take values from the projected trace arguments instead of the audits",
    )
    add_corpus_reading(parser)
    add_explain_option(parser)
    add_json(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    version = metric_version_of(args)
    if version == 3 and explain_of(args):
        raise EntropyInputError("--explain is not available yet with --metric-version 3")
    surface = optional_surface_of(args)
    repairs = load_optional_repairs(args.repairs)
    effective = surface
    if args.artifact and version == 3:
        # A v3 artifact's plans act at validation, never on the surface, and a legacy
        # artifact's overlays are inert: the proposals are the declared surface's.
        sys.stderr.write(
            "note: --artifact does not change metric v3 proposals (artifacts never alter the"
            " declared surface)\n"
        )
    elif args.artifact:
        compiled = load_state_file(args.artifact, COMPILED)
        if surface is None:
            raise EntropyInputError("--artifact needs the declared --surface it applies to")
        effective = dict(apply_compiled_surface(surface, compiled))
    options = read_options_of(args, surface)
    run_ = propose_sources(
        session_sources_of(args, options),
        effective,
        options=options,
        repairs=repairs,
        catalog_digest=surface_hash(effective) if effective is not None else "",
        audit_values=not args.no_audit_values,
        engine=engine_options_of(args),
        explain=explain_of(args),
    )
    check_corpus(args, run_.diagnostics)
    report, proposals = run_.report, run_.proposals
    review = review_signals_v3(proposals) if version == 3 else entropy_review_signals(proposals)
    if args.json:
        value = {"reportHash": report_hash(report), "proposals": proposals, "reviewSignals": review}
        if run_.explanations is not None:
            value["explanations"] = run_.explanations  # added only with --explain
        print_json(out, value)
    else:
        print_lines(out, proposal_lines(proposals))
        out.write(f"report hash {report_hash(report)}\n")
        print_lines(out, steering_lines({"explanations": run_.explanations}))
    return EXIT_OK
