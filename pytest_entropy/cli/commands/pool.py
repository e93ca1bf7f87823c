"""``pytest-entropy pool``: merge session observation windows into an observation pool."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EXIT_OK,
    add_corpus_inputs,
    add_corpus_reading,
    add_json,
    check_corpus,
    engine_options_of,
    load_state_file,
    optional_surface_of,
    oversized_note,
    print_json,
    read_options_of,
    session_sources_of,
)
from pytest_entropy.cli.generation import check_state_generation, record_state_generation
from pytest_entropy.cli.steering import add_redact_option, redact_values_of
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.pool import PoolMerge
from pytest_entropy.report.names import terminal_text
from pytest_entropy.run.compile import pool_sources
from pytest_entropy.state.store import (
    POOL,
    Snapshot,
    StoreDamagedError,
    Write,
    ensure_directory,
    load_path,
    save_path,
    update_many,
)


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "pool", help="merge each session's audit values into an observation pool file"
    )
    add_corpus_inputs(parser, repairs=False)
    parser.add_argument("--pool-in", metavar="FILE", help="the pool to merge into (default: empty)")
    parser.add_argument("--out", metavar="FILE", required=True, help="where to write the pool")
    add_corpus_reading(parser)
    add_redact_option(parser)
    add_json(parser)
    parser.set_defaults(handler=run)


def _pool_in(path: str) -> dict[str, Any]:
    return load_state_file(path, POOL)


def _refuse_damaged(target: Path) -> None:
    """A damaged pool at ``target`` (malformed, invalid, a symlink, not a regular file) is
    reported, naming it, before any session is read (spec §1.8: never overwritten)."""
    existing = load_path(target, POOL)
    if existing.error is not None:
        raise StoreDamagedError(existing.error, source=str(target))


def run(args: argparse.Namespace, out: TextIO) -> int:
    target = Path(args.out)
    # Merging a pool into itself is a read-modify-write: snapshot it, and merge again if
    # another writer changed it meanwhile. Otherwise --out is replaced by the merge of
    # --pool-in (or of no pool) - unless a damaged file is there (docs/decisions.md).
    in_place = bool(args.pool_in) and os.path.abspath(args.pool_in) == os.path.abspath(target)
    given = _pool_in(args.pool_in) if args.pool_in else None
    if not in_place:
        _refuse_damaged(target)
    surface = optional_surface_of(args)
    options = read_options_of(args, surface)
    redact_values = redact_values_of(args)
    # A pool written as a state directory's observation-pool.json belongs to that
    # directory's generation (state/generation.py); any other --out is a plain file.
    in_state_dir = target.name == POOL.filename
    if in_state_dir:
        check_state_generation(args, target.parent)

    def plan(snapshots: Sequence[Snapshot]) -> tuple[PoolMerge, list[Write]]:
        if in_place:
            if snapshots[0].file is None:
                raise EntropyInputError("observation pool file not found", source=args.pool_in)
            pool: dict[str, Any] | None = snapshots[0].file
        else:
            pool = given
        merged, diagnostics = pool_sources(
            session_sources_of(args, options),
            pool,
            options=options,
            engine=engine_options_of(args),
            redact_values=redact_values,
        )
        check_corpus(args, diagnostics)  # before anything is written
        return merged, [Write(target, POOL, merged.file)]

    if in_place:
        merged, saved = update_many([(target, POOL)], plan)
        written = saved[0].written
    else:
        merged, writes = plan(())
        # The surface is not needed once the sessions are read: its objects (a large
        # surface's are several MB) go before the document is written and checked.
        del surface, options
        # Saved under the file's lock, which checks for damage again (another writer may
        # have left some since); a new directory is a plain one (no state .gitignore).
        ensure_directory(target.parent)
        written = save_path(target, POOL, writes[0].value).written
    if in_state_dir:
        record_state_generation(args, target.parent)
    if args.json:
        print_json(
            out, {**merged.to_json(), "out": str(Path(args.out).resolve()), "written": written}
        )
    else:
        out.write(
            f"pool: {merged.merged_sessions} sessions merged · {merged.skipped_sessions} unchanged"
            f" · {len(merged.file['entries'])} parameters · {len(merged.file['tracked'])} tracked"
            f" sessions · {merged.dropped_observations} unloadable observations dropped"
            f"{oversized_note(merged)} → {terminal_text(str(Path(args.out).resolve()))}\n"
        )
    return EXIT_OK
