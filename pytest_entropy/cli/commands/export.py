"""``pytest-entropy export``: write the declared surface snapshot, sorted by ref."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EXIT_OK,
    add_format_options,
    add_json,
    add_state_options,
    add_surface_option,
    print_json,
    state_dir_of,
    surface_of,
)
from pytest_entropy.core.canonical import EXPORT_INDENT_DEPTH, file_text
from pytest_entropy.core.inputs import live_surface_snapshot
from pytest_entropy.core.status import surface_hash
from pytest_entropy.state.store import write_file_atomic


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "export", help="write the surface snapshot (sorted by ref) for hashing and sharing"
    )
    add_surface_option(parser, required=True)
    parser.add_argument("--out", metavar="FILE", help="where (default: STATE_DIR/surface.json)")
    add_format_options(parser, sessions=False)
    add_state_options(parser)
    add_json(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    snapshot = live_surface_snapshot(surface_of(args, args.surface)["actions"])
    target = Path(args.out) if args.out else state_dir_of(args) / "surface.json"
    # Deep schemas would grow with the square of their depth: compact below 32 levels.
    written = write_file_atomic(target, file_text(snapshot, indent_depth=EXPORT_INDENT_DEPTH))
    path = target.resolve()
    if args.json:
        print_json(
            out,
            {
                "path": str(path),
                "actions": len(snapshot["actions"]),
                "digest": surface_hash(snapshot),
                "written": written,
            },
        )
    else:
        out.write(f"Exported {len(snapshot['actions'])} surface actions → {path}\n")
    return EXIT_OK
