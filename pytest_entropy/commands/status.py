"""``pytest-entropy status``: the ratchet view over a window of recent sessions."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, TextIO

from ..core.corpus import format_status_lines, measure_session_corpus, ratchet_verdict, surface_hash
from ..core.errors import EntropyInputError
from ..core.fingerprint import surface_freedom_report
from ..core.meter import MeterState
from ..ingest.fabric import ScanDiagnostics
from ..render import diagnostics_lines
from ..sessions import (
    NATIVE_FORMAT,
    directory_session_files,
    machine_session_files,
    meter_file,
    project_session_files,
)
from .common import (
    EMPTY_SURFACE,
    EXIT_OK,
    add_format_options,
    add_json,
    add_repairs_option,
    add_surface_option,
    load_optional_repairs,
    print_json,
    print_lines,
    read_options_of,
    surface_of,
)


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "status", help="latest session entropy, trend and ratchet verdict over a window"
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--sessions", metavar="DIR", help="a directory of session files")
    where.add_argument("--agent-dir", metavar="DIR", help="a Pi agent directory")
    parser.add_argument(
        "--project",
        action="store_true",
        help="with --agent-dir: only the current directory's sessions",
    )
    parser.add_argument(
        "--cwd", metavar="DIR", help="the project directory (default: the current one)"
    )
    add_surface_option(parser)
    add_repairs_option(parser)
    add_format_options(parser)
    add_json(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    cwd = args.cwd or os.getcwd()
    scope = "machine"
    default_surface = None
    if not args.sessions and args.format == "auto":
        # A Pi agent directory is the native layout: read it natively unless told otherwise.
        args.format = NATIVE_FORMAT
    options = read_options_of(args, None)
    if args.sessions:
        directory = Path(args.sessions)
        if not directory.is_dir():
            raise EntropyInputError("sessions directory not found", source=args.sessions)
        files = directory_session_files(directory, options=options)
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
    surface = surface_of(args, surface_path) if surface_path else EMPTY_SURFACE
    options = read_options_of(args, surface if surface_path else None)
    repairs = load_optional_repairs(args.repairs)
    digest = surface_hash(surface)
    diagnostics = ScanDiagnostics()
    states: list[tuple[str, MeterState | None]] = []
    for item in files:
        state, _ = meter_file(
            item.path, diagnostics=diagnostics, retain_terms=False, options=options
        )
        states.append((str(item.path), state))
    corpus = measure_session_corpus(states, surface, digest, repairs)
    lines = format_status_lines(surface, corpus, scope=scope)
    if args.json:
        print_json(
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
        print_lines(out, lines)
        if diagnostics.skipped_lines or diagnostics.rejected_traces:
            print_lines(out, diagnostics_lines(diagnostics))
    return EXIT_OK
