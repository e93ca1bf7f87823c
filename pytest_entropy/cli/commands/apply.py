"""``pytest-entropy apply``: the compiled artifact applied to the declared surface file.

Writes the effective surface (declared plus overlay, quarantined tools removed) in the
surface file's own format, to ``--out`` or stdout; a format without a writer (or a surface
directory) gets a snapshot. ``--patch`` writes RFC 6902 JSON Patches instead, one per
changed tool, against the declared file. An artifact entry whose base schema digest does
not match the declared tool is stale: it is named on stderr, never applied, and the exit
status is 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    add_command_flag,
    add_format_options,
    load_state_file,
)
from pytest_entropy.core.apply import plan_apply
from pytest_entropy.core.artifact import apply_compiled_surface
from pytest_entropy.core.canonical import file_text
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.ingest.surface_writers import (
    WRITABLE_FORMATS,
    rewrite_surface,
    surface_patches,
    tool_slots,
)
from pytest_entropy.ingest.surfaces import load_surface, load_surface_document
from pytest_entropy.report.names import terminal_text
from pytest_entropy.state.store import COMPILED, write_file_atomic


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "apply",
        help="write the declared surface with a compiled artifact applied, in its own format"
        " (or JSON Patches with --patch)",
    )
    add_command_flag(parser, "surface", required=True)  # a file: apply rewrites it
    parser.add_argument(
        "--artifact", metavar="FILE", required=True, help="the compiled artifact to apply"
    )
    parser.add_argument("--out", metavar="FILE", help="where to write (default: stdout)")
    parser.add_argument(
        "--patch",
        action="store_true",
        help="write one RFC 6902 JSON Patch per changed tool against the declared file"
        " instead of the rewritten file",
    )
    add_format_options(parser, sessions=False)
    parser.set_defaults(handler=run)


def _artifact(path: str) -> dict[str, Any]:
    return load_state_file(path, COMPILED)


def run(args: argparse.Namespace, out: TextIO) -> int:
    source = args.surface
    if not os.path.exists(source):
        raise EntropyInputError("surface file not found (apply edits a file)", source=source)
    surface_format = args.surface_format or "auto"
    prefix = args.ref_prefix or ""
    surface = load_surface(source, surface_format=surface_format, ref_prefix=prefix)
    artifact = _artifact(args.artifact)
    plan = plan_apply(surface, artifact)
    for entry in plan.stale:
        sys.stderr.write(
            terminal_text(f"stale: {entry.ref} ({entry.kind}): {entry.reason}; not applied") + "\n"
        )
    document, chosen = load_surface_document(source, surface_format=surface_format)
    slots = None if os.path.isdir(source) else tool_slots(document, chosen)
    if args.patch:
        if slots is None:
            raise EntropyInputError(
                f"no JSON Patch for a {chosen} surface"
                f"{' directory' if os.path.isdir(source) else ''} (patches are written for"
                f" {', '.join(WRITABLE_FORMATS)} files); without --patch, apply writes the"
                " effective surface as a snapshot",
                source=source,
            )
        text = file_text(
            {"format": chosen, "patches": surface_patches(document, slots, plan, prefix)}
        )
    elif slots is not None:
        text = file_text(rewrite_surface(document, slots, plan, prefix))
    else:
        sys.stderr.write(
            f"apply: the {chosen} format has no writer here; writing the effective surface as"
            " a snapshot\n"
        )
        text = file_text(apply_compiled_surface(surface, artifact))
    if args.out:
        write_file_atomic(Path(args.out), text)
        target = terminal_text(str(Path(args.out).resolve()))
        sys.stderr.write(
            f"apply: {len(plan.overlays)} tools overlaid · {len(plan.removed)} removed ·"
            f" {len(plan.stale)} stale entries skipped → {target}\n"
        )
    else:
        out.write(text)
    return EXIT_FAILED if plan.stale else EXIT_OK
