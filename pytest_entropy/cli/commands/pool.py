"""``pytest-entropy pool``: merge session observation windows into an observation pool."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EXIT_OK,
    add_engine_options,
    add_format_options,
    add_json,
    add_sessions_option,
    add_surface_option,
    engine_options_of,
    print_json,
    read_options_of,
    session_sources_of,
    surface_of,
)
from pytest_entropy.core.canonical import file_text
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.run.compile import pool_sources
from pytest_entropy.state.store import POOL, load_path, write_file_atomic


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "pool", help="merge each session's audit values into an observation pool file"
    )
    add_sessions_option(parser)
    add_surface_option(parser)
    parser.add_argument("--pool-in", metavar="FILE", help="the pool to merge into (default: empty)")
    parser.add_argument("--out", metavar="FILE", required=True, help="where to write the pool")
    add_format_options(parser)
    add_engine_options(parser)
    add_json(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    pool = None
    if args.pool_in:
        loaded = load_path(Path(args.pool_in), POOL)
        if loaded.error is not None:
            raise EntropyInputError(loaded.error, source=args.pool_in)
        if loaded.file is None:
            raise EntropyInputError("observation pool file not found", source=args.pool_in)
        pool = loaded.file
    surface = surface_of(args, args.surface) if args.surface else None
    options = read_options_of(args, surface)
    merged, _ = pool_sources(
        session_sources_of(args, options), pool, options=options, engine=engine_options_of(args)
    )
    written = write_file_atomic(Path(args.out), file_text(merged.file))
    if args.json:
        print_json(
            out, {**merged.to_json(), "out": str(Path(args.out).resolve()), "written": written}
        )
    else:
        out.write(
            f"pool: {merged.merged_sessions} sessions merged · {merged.skipped_sessions} unchanged"
            f" · {len(merged.file['entries'])} parameters · {len(merged.file['tracked'])} tracked"
            f" sessions · {merged.dropped_observations} unloadable observations dropped"
            f" → {Path(args.out).resolve()}\n"
        )
    return EXIT_OK
