"""The ``pytest-entropy`` command line. :func:`main` returns the exit status; it never exits.

Exit codes: 0 ok, 1 a gate or check failed, 2 usage or input error, 3 internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from ._version import __version__
from .core.canonical import file_text, icu_version
from .core.corpus import format_status_lines, measure_session_corpus, ratchet_verdict, surface_hash
from .core.errors import EntropyError, EntropyInputError
from .core.fingerprint import surface_freedom_report
from .core.meter import MeterState, report_hash
from .core.records import ENTROPY_METRIC_VERSION, RepairRow
from .engine import ENGINES, meter_paths
from .ingest.fabric import ScanDiagnostics
from .render import diagnostics_lines, freedom_lines, report_lines
from .sessions import (
    directory_session_files,
    expand_session_paths,
    machine_session_files,
    meter_file,
    project_session_files,
)
from .surfaces import load_repairs, load_surface

__all__ = ["EXIT_FAILED", "EXIT_INTERNAL", "EXIT_OK", "EXIT_USAGE", "build_parser", "main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3

PROG = "pytest-entropy"
EMPTY_SURFACE: dict[str, Any] = {"version": 1, "actions": []}

Handler = Callable[[argparse.Namespace, TextIO], int]


def version_text() -> str:
    """``pytest-entropy X (metric v2, ICU Y)``."""
    return f"{PROG} {__version__} (metric v{ENTROPY_METRIC_VERSION}, ICU {icu_version()})"


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so :func:`main` can return a status."""

    def error(self, message: str) -> Any:
        raise _UsageError(f"{self.prog}: error: {message}")


class _UsageError(Exception):
    pass


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _add_surface_options(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    parser.add_argument(
        "--surface",
        metavar="FILE",
        required=required,
        help="surface snapshot {version: 1, actions: [{ref, inputSchema}]}",
    )


def _add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def build_parser() -> argparse.ArgumentParser:
    """The full command-line grammar."""
    parser = _Parser(
        prog=PROG,
        description="Measure and reduce the tool entropy of LLM tool surfaces.",
    )
    parser.add_argument("--version", action="store_true", help="print versions and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    measure = commands.add_parser(
        "measure", help="measure session files into a hashed entropy report"
    )
    measure.add_argument(
        "--sessions",
        nargs="+",
        required=True,
        metavar="PATH",
        help="session files or directories (a directory means its *.jsonl, by name)",
    )
    _add_surface_options(measure)
    measure.add_argument("--repairs", metavar="FILE", help="repair table or array of rows")
    measure.add_argument(
        "--catalog-digest",
        metavar="TEXT",
        help="catalog digest to record (default: the surface hash, or empty)",
    )
    measure.add_argument(
        "--jobs", type=_positive_int, default=1, metavar="N", help="worker processes"
    )
    measure.add_argument(
        "--engine",
        choices=ENGINES,
        help="where to run: local (default) or processes (the default when --jobs > 1)",
    )
    _add_json(measure)
    measure.set_defaults(handler=_cmd_measure)

    status = commands.add_parser(
        "status", help="latest session entropy, trend and ratchet verdict over a window"
    )
    where = status.add_mutually_exclusive_group(required=True)
    where.add_argument("--sessions", metavar="DIR", help="a directory of session files")
    where.add_argument("--agent-dir", metavar="DIR", help="a Pi agent directory")
    status.add_argument(
        "--project",
        action="store_true",
        help="with --agent-dir: only the current directory's sessions",
    )
    status.add_argument(
        "--cwd", metavar="DIR", help="the project directory (default: the current one)"
    )
    _add_surface_options(status)
    status.add_argument("--repairs", metavar="FILE", help="repair table or array of rows")
    _add_json(status)
    status.set_defaults(handler=_cmd_status)

    freedom = commands.add_parser(
        "freedom", help="static freedom of every action of a surface, worst first"
    )
    _add_surface_options(freedom, required=True)
    _add_json(freedom)
    freedom.set_defaults(handler=_cmd_freedom)
    return parser


# ------------------------------------------------------------------------- commands


def _print_json(out: TextIO, value: Any) -> None:
    out.write(file_text(value))


def _load_optional_surface(path: str | None) -> dict[str, Any] | None:
    return load_surface(path) if path else None


def _load_optional_repairs(path: str | None) -> list[RepairRow] | None:
    return load_repairs(path) if path else None


def _cmd_measure(args: argparse.Namespace, out: TextIO) -> int:
    paths = expand_session_paths(args.sessions)
    surface = _load_optional_surface(args.surface)
    repairs = _load_optional_repairs(args.repairs)
    if args.catalog_digest is not None:
        digest = args.catalog_digest
    else:
        digest = surface_hash(surface) if surface is not None else ""
    engine = args.engine or ("processes" if args.jobs > 1 else "local")
    result = meter_paths(paths, jobs=args.jobs, engine=engine)
    report = result.state.finalize(surface, repairs, digest)
    hashed = report_hash(report)
    if args.json:
        _print_json(
            out,
            {
                "reportHash": hashed,
                "report": report.to_json(),
                "diagnostics": result.diagnostics.to_json(),
            },
        )
    else:
        for line in report_lines(report, hashed):
            out.write(line + "\n")
        for line in diagnostics_lines(result.diagnostics):
            out.write(line + "\n")
    return EXIT_OK


def _cmd_status(args: argparse.Namespace, out: TextIO) -> int:
    cwd = args.cwd or os.getcwd()
    scope = "machine"
    if args.sessions:
        directory = Path(args.sessions)
        if not directory.is_dir():
            raise EntropyInputError("sessions directory not found", source=args.sessions)
        files = directory_session_files(directory)
        default_surface = None
    else:
        agent_dir = Path(args.agent_dir)
        if not agent_dir.is_dir():
            raise EntropyInputError("agent directory not found", source=args.agent_dir)
        if args.project:
            files = project_session_files(agent_dir, cwd)
            scope = "project"
        else:
            files = machine_session_files(agent_dir, cwd)
        exported = agent_dir / "fabric" / "entropy" / "surface.json"
        default_surface = str(exported) if exported.is_file() else None
    surface_path = args.surface or default_surface
    surface = load_surface(surface_path) if surface_path else EMPTY_SURFACE
    repairs = _load_optional_repairs(args.repairs)
    digest = surface_hash(surface)
    diagnostics = ScanDiagnostics()
    states: list[tuple[str, MeterState | None]] = []
    for item in files:
        state, _ = meter_file(item.path, diagnostics=diagnostics, retain_terms=False)
        states.append((str(item.path), state))
    corpus = measure_session_corpus(states, surface, digest, repairs)
    lines = format_status_lines(surface, corpus, scope=scope)
    if args.json:
        _print_json(
            out,
            {
                "surface": {
                    "digest": digest,
                    "actions": len(surface["actions"]),
                    "freedom": surface_freedom_report(surface),
                },
                "corpus": corpus.to_json(),
                "verdict": ratchet_verdict(corpus),
                "lines": lines,
                "diagnostics": diagnostics.to_json(),
            },
        )
    else:
        for line in lines:
            out.write(line + "\n")
        if diagnostics.skipped_lines or diagnostics.rejected_traces:
            for line in diagnostics_lines(diagnostics):
                out.write(line + "\n")
    return EXIT_OK


def _cmd_freedom(args: argparse.Namespace, out: TextIO) -> int:
    surface = load_surface(args.surface)
    report = surface_freedom_report(surface)
    if args.json:
        _print_json(out, report)
    else:
        for line in freedom_lines(report):
            out.write(line + "\n")
    return EXIT_OK


# ----------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (never calls ``sys.exit``)."""
    out, err = sys.stdout, sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except _UsageError as error:
        err.write(f"{error}\n")
        return EXIT_USAGE
    except SystemExit as exit_request:  # --help
        return int(exit_request.code or 0)
    if args.version:
        out.write(version_text() + "\n")
        return EXIT_OK
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(err)
        return EXIT_USAGE
    try:
        return handler(args, out)
    except EntropyInputError as error:
        err.write(f"{PROG}: error: {error}\n")
        return EXIT_USAGE
    except EntropyError as error:
        err.write(f"{PROG}: error: {error}\n")
        return EXIT_FAILED
    except KeyboardInterrupt:
        err.write(f"{PROG}: interrupted\n")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception:
        err.write(f"{PROG}: internal error\n")
        traceback.print_exc(file=err)
        return EXIT_INTERNAL
