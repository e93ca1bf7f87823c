"""``pytest-entropy status``: the ratchet view over a window of recent sessions."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EMPTY_SURFACE,
    EXIT_OK,
    add_command_flag,
    add_corpus_reading,
    add_json,
    add_repairs_option,
    add_session_dir_options,
    add_surface_option,
    check_corpus,
    load_optional_repairs,
    print_json,
    print_lines,
    read_options_of,
    state_dir_of,
    surface_files_of,
    surface_of,
)
from pytest_entropy.cli.generation import check_state_generation
from pytest_entropy.cli.reports import add_report_options, wants_reports, write_reports
from pytest_entropy.core.artifact import apply_compiled_surface
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.fingerprint import surface_freedom_report
from pytest_entropy.core.meter import measure
from pytest_entropy.core.pool import pool_to_value_observations
from pytest_entropy.core.proposals import entropy_review_signals, propose_entropy_reductions
from pytest_entropy.core.records import RepairRow
from pytest_entropy.core.status import (
    format_compiled_line,
    format_review_line,
    format_status_lines,
    measure_session_corpus,
    ratchet_verdict,
    surface_hash,
)
from pytest_entropy.core.v3.proposals import review_signals_v3
from pytest_entropy.report.text import diagnostics_lines
from pytest_entropy.run.corpus import CorpusRead, read_corpus, records_plan, source_files
from pytest_entropy.sources.agent_dir import (
    agent_layout,
    machine_session_files,
    project_session_files,
)
from pytest_entropy.sources.locate import directory_session_files, session_listing
from pytest_entropy.state.store import COMPILED, POOL, load


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "status", help="latest session entropy, trend and ratchet verdict over a window"
    )
    add_session_dir_options(
        parser,
        required=True,
        sessions_help="a directory of session files, or one session file (a window of one)",
    )
    add_command_flag(parser, "cwd")
    add_surface_option(parser)
    add_repairs_option(parser)
    add_corpus_reading(parser, engine=False)
    add_command_flag(
        parser,
        "state-dir",
        help="where compiled.json and observation-pool.json live (default: .entropy/ here,"
        " or a Pi agent directory's fabric/entropy/)",
    )
    add_json(parser)
    add_report_options(parser)
    parser.set_defaults(handler=run)


def _review_line(
    read: CorpusRead,
    effective: Any,
    digest: str,
    repairs: list[RepairRow] | None,
    pool_error: str | None,
    metric_version: int = 2,
) -> tuple[str, list[dict[str, Any]]]:
    """Review signals computed read-only: the pool is merged in memory and never saved."""
    traces = read.records.traces
    if pool_error is not None or not traces:
        return format_review_line(None, pool_error=pool_error, has_window_evidence=bool(traces)), []
    try:
        merged = read.merged_pool()
        report = measure(traces, effective, repairs, digest, metric_version=metric_version)
        proposals = propose_entropy_reductions(
            report,
            traces,
            effective,
            repairs,
            pool_to_value_observations(merged.file),
            metric_version=metric_version,
        )
        review = (
            review_signals_v3(proposals)
            if metric_version == 3
            else entropy_review_signals(proposals)
        )
    except Exception:  # the display never fails because of the review line
        return format_review_line(None), []
    return format_review_line(review), review


def require_agent_dir(agent_dir: str) -> None:
    """An agent directory that does not exist is an input error naming it."""
    if not Path(agent_dir).is_dir():
        raise EntropyInputError("agent directory not found", source=agent_dir)


def run(args: argparse.Namespace, out: TextIO) -> int:
    cwd = args.cwd or os.getcwd()
    scope = "machine"
    skipped: list[tuple[str, str]] = []
    default_surface = None
    layout = agent_layout(args.agent_dir, args.agent_kind) if args.agent_dir else None
    state_dir = state_dir_of(args)
    if layout is not None and args.format == "auto":
        # An agent directory has one layout: read it as such unless told otherwise.
        args.format = layout.session_format
    options = read_options_of(args, None)
    if args.sessions:
        directory = Path(args.sessions)
        if directory.is_dir():
            paths = [item.path for item in directory_session_files(directory, options=options)]
            # What a directory walk passed over is counted, as every command counts it.
            skipped = session_listing([directory], options, surface_files_of(args)).skipped
        elif directory.exists():
            # One session file is a window of one, read as `measure --sessions FILE` reads it
            # (checked readable first, so the verdict is never about a file it did not see).
            paths = [Path(name) for name in session_listing([directory], options).files]
        else:
            raise EntropyInputError("sessions directory not found", source=args.sessions)
    else:
        require_agent_dir(args.agent_dir)
        agent_dir = Path(args.agent_dir)
        if args.project:
            files = project_session_files(agent_dir, cwd, kind=args.agent_kind)
            scope = "project"
        else:
            files = machine_session_files(agent_dir, cwd, kind=args.agent_kind)
        paths = [item.path for item in files]
        exported = layout.surface_path(cwd) if layout is not None else None
        default_surface = str(exported) if exported is not None and exported.is_file() else None
    surface_path = args.surface or default_surface
    live = surface_of(args, surface_path) if surface_path else EMPTY_SURFACE
    options = read_options_of(args, live if surface_path else None)
    repairs = load_optional_repairs(args.repairs)
    version = check_state_generation(args, state_dir)
    compiled = load(state_dir, COMPILED)
    # In metric v3 an artifact never alters the declared surface (its plans act only at
    # validation), so the status measures the live surface itself.
    inert = version == 3 or not compiled.file
    surface = live if inert else dict(apply_compiled_surface(live, compiled.file))
    digest = surface_hash(surface)
    pool = load(state_dir, POOL)
    plan = records_plan(options, file_states=True, windows=pool.error is None)
    read = read_corpus(source_files(paths, skipped), plan, pool=pool.file)
    diagnostics = read.diagnostics
    check_corpus(args, diagnostics, shows_diagnostics=True)
    states = [(source.location, state) for source, state in read.files]
    corpus = measure_session_corpus(states, surface, digest, repairs, metric_version=version)
    review_line, review = _review_line(read, surface, digest, repairs, pool.error, version)
    lines = format_status_lines(
        surface,
        corpus,
        scope=scope,
        compiled_line=format_compiled_line(compiled.file, compiled.error),
        review_line=review_line,
        metric_version=version,
    )
    if args.json or wants_reports(args):
        document = {
            "surface": {
                "digest": digest,
                "actions": len(surface["actions"]),
                "freedom": surface_freedom_report(surface),
            },
            "corpus": corpus.to_json(),
            "verdict": ratchet_verdict(corpus),
            "compiled": compiled.to_json(),
            "review": review,
            "lines": lines,
            "diagnostics": diagnostics.to_json(),
            "metricVersion": version,
        }
        write_reports(args, "status", document, surface=surface)
    if args.json:
        print_json(out, document)
    else:
        print_lines(out, lines, spec=True)  # the status line is the spec's text
        if diagnostics.skipped_lines or diagnostics.rejected_traces or diagnostics.unreadable_files:
            print_lines(out, diagnostics_lines(diagnostics))
    return EXIT_OK
