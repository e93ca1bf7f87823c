"""``pytest-entropy certify``: the certification of spec §12 without pytest.

Prints the human summary (a line per check, the verdict), a blank line and the JSON
report; ``--report PATH`` also writes the report. Exit 1 when any check failed or the run
raised. Corpus-mode problems (a missing directory, an unreadable artifact) are failed
checks, never usage errors. The same checks run as ``pytest --entropy-certify``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    add_command_flag,
    add_mcp_timeout_option,
    print_lines,
    storage_options_of,
)
from pytest_entropy.cli.generation import add_metric_version_option, metric_version_of
from pytest_entropy.cli.reports import add_report_options, write_reports
from pytest_entropy.report.names import terminal_text
from pytest_entropy.state.config import BASELINE_FILENAME, add_cli_option

FAILED_TO_EXECUTE = "Entropy certification failed to execute"
OUTPUT_FORMATS = ("text", "markdown", "json")


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "certify", help="run the certification checks (spec §12), optionally on a corpus"
    )
    for name in (
        "sessions",
        "surface",
        "repairs",
        "trial",
        "artifact",
        "lint",
        "strict",
        "surface-format",
        "lenient",
        "require-ratchet",
        "holdout",
        "max-malformed-share",
        "baseline",
    ):
        add_cli_option(parser, name)
    add_command_flag(
        parser,
        "state-dir",
        help="where --trial looks for compiled.json before the agent directory (default:"
        " .entropy/ here)",
    )
    add_command_flag(parser, "storage-options")  # a --sessions URL's, as for every command
    add_mcp_timeout_option(parser)  # a --surface server's, as for every command
    parser.add_argument("--report", metavar="PATH", help="also write the JSON report to PATH")
    parser.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        default=None,
        help="text: summary, then the JSON report (default); markdown: a summary for CI step"
        " summaries; json: the report only",
    )
    from pytest_entropy.ingest.registry import session_formats

    parser.add_argument(
        "--format",
        default=None,
        choices=[*session_formats(), *OUTPUT_FORMATS],
        metavar="FORMAT",
        help="corpus mode's session format, as for every other command (default: auto; a"
        " directory of native *.jsonl is the spec's corpus mode exactly). Deprecated: text,"
        " markdown and json here still select the output format; use --output-format",
    )
    add_report_options(parser)
    add_metric_version_option(parser)
    parser.set_defaults(handler=run)


# The certify options metric v3's check list has no use for (the upstream's v3 script reads
# --sessions, --surface, --trial and --artifact only).
V2_ONLY_OPTIONS = (
    ("entropy_repairs", "--repairs"),
    ("entropy_lint", "--lint"),
    ("entropy_strict", "--strict"),
    ("entropy_require_ratchet", "--require-ratchet"),
    ("entropy_holdout", "--holdout"),
    ("entropy_max_malformed_share", "--max-malformed-share"),
)


def _run_v3(args: argparse.Namespace, out: TextIO) -> int:
    from pytest_entropy.core.canonical import file_text
    from pytest_entropy.core.certify.v3 import v3_summary_lines
    from pytest_entropy.core.errors import EntropyInputError
    from pytest_entropy.run.certification_v3 import V3CertificationOptions, certify_v3

    for attribute, flag in V2_ONLY_OPTIONS:
        if getattr(args, attribute, None):
            raise EntropyInputError(f"{flag} is a metric v2 certification option")
    sessions = args.entropy_sessions
    if isinstance(sessions, list | tuple):
        if len(sessions) > 1:
            raise EntropyInputError("metric v3 certification reads one --sessions directory")
        sessions = sessions[0] if sessions else None
    options = V3CertificationOptions(
        sessions=sessions,
        surface=args.entropy_surface,
        trial=bool(args.entropy_trial),
        artifact=args.entropy_artifact,
        state_dir=args.state_dir,
    )
    try:
        report = certify_v3(options)
    except Exception as error:  # a run that raises is a failure with this line
        sys.stderr.write(f"{FAILED_TO_EXECUTE}: {terminal_text(str(error))}\n")
        return EXIT_FAILED
    text = file_text(report)
    if output_format_of(args) == "json":
        out.write(text)
    else:
        print_lines(out, v3_summary_lines(report), spec=True)
        out.write("\n")
        out.write(text)
    if args.report:
        from pytest_entropy.state.store import write_file_atomic

        write_file_atomic(Path(args.report), text, mode=0o644)
    write_reports(args, "certify", report)
    return EXIT_OK if report["evaluation"]["passed"] else EXIT_FAILED


def run(args: argparse.Namespace, out: TextIO) -> int:
    if metric_version_of(args) >= 3:
        return _run_v3(args, out)
    from pytest_entropy.core.canonical import file_text
    from pytest_entropy.core.certify import markdown_lines, summary_lines
    from pytest_entropy.run.certification import Certification, CertificationOptions

    options = CertificationOptions(
        sessions=args.entropy_sessions,
        surface=args.entropy_surface,
        repairs=args.entropy_repairs,
        trial=bool(args.entropy_trial),
        artifact=args.entropy_artifact,
        lint=args.entropy_lint,
        strict=bool(args.entropy_strict),
        session_format=session_format_of(args),
        state_dir=args.state_dir,
        surface_format=surface_format_of(args),
        storage_options=storage_options_of(args, args.entropy_sessions or ()),
        baseline=args.entropy_baseline or BASELINE_FILENAME,
        lenient=bool(args.entropy_lenient),
        require_ratchet=bool(args.entropy_require_ratchet),
        holdout=share_of(args.entropy_holdout, "--holdout", upper_open=True),
        max_malformed_share=share_of(args.entropy_max_malformed_share, "--max-malformed-share"),
        mcp_timeout=args.mcp_timeout,
    )
    if options.trial_ignored:
        sys.stderr.write("warning: --trial needs --sessions; no trial ran (spec §14 #13)\n")
    try:
        report = Certification(options).report()
    except Exception as error:  # §12.1: a run that raises is a failure with this line
        sys.stderr.write(f"{FAILED_TO_EXECUTE}: {terminal_text(str(error))}\n")
        return EXIT_FAILED
    text = file_text(report)
    output_format = output_format_of(args)
    if output_format == "markdown":
        from pytest_entropy.report.markdown import certify_corpus_lines

        print_lines(out, markdown_lines(report), spec=True)
        print_lines(out, certify_corpus_lines(report))
    elif output_format == "json":
        out.write(text)
    else:
        print_lines(out, summary_lines(report), spec=True)
        out.write("\n")
        out.write(text)
    if args.report:
        from pytest_entropy.state.store import write_file_atomic

        write_file_atomic(Path(args.report), text, mode=0o644)
    write_reports(args, "certify", report)
    # The exit status counts both scopes: the spec's checks and the user's corpus checks.
    corpus = report.get("corpusChecks")
    passed = report["evaluation"]["passed"] and (corpus is None or corpus["passed"])
    return EXIT_OK if passed else EXIT_FAILED


def share_of(value: Any, flag: str, *, upper_open: bool = False) -> float | None:
    """A share between 0 and 1 (``--holdout``: above 0 and below 1), else exit 2."""
    from pytest_entropy.core.errors import EntropyInputError
    from pytest_entropy.state.settings import share_value

    if value is None:
        return None
    try:
        return share_value(value, flag, holdout=upper_open)
    except ValueError as error:
        raise EntropyInputError(str(error)) from None


def output_format_of(args: argparse.Namespace) -> str:
    """``--output-format``, else the old spelling ``--format text|markdown|json``, else text."""
    if args.output_format is not None:
        return str(args.output_format)
    if args.format in OUTPUT_FORMATS:
        return str(args.format)
    return "text"


def session_format_of(args: argparse.Namespace) -> str:
    """``--format`` when it names a session format, else ``auto`` (under which a directory
    of native ``*.jsonl`` is the spec's corpus mode exactly)."""
    if args.format is None or args.format in OUTPUT_FORMATS:
        return "auto"
    return str(args.format)


def surface_format_of(args: argparse.Namespace) -> str:
    """``--surface-format`` (default ``auto``), checked against the registry (exit 2)."""
    from pytest_entropy.core.errors import EntropyInputError
    from pytest_entropy.ingest.registry import surface_formats

    chosen = args.entropy_surface_format or "auto"
    if chosen not in surface_formats():
        known = ", ".join(surface_formats())
        raise EntropyInputError(f"unknown surface format {chosen!r} (known: {known})")
    return str(chosen)
