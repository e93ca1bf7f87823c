"""``pytest-entropy compile``: measure, propose, apply, re-measure, gate, and persist."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    add_engine_options,
    add_format_options,
    add_json,
    add_repairs_option,
    add_sessions_option,
    add_state_options,
    add_surface_option,
    engine_options_of,
    load_optional_repairs,
    print_json,
    print_lines,
    read_options_of,
    session_sources_of,
    state_dir_of,
    surface_of,
    unsupported_pattern_lines,
)
from pytest_entropy.core.artifact import serialize_artifact
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.jscompat import js_string
from pytest_entropy.core.notices import format_compile_notice
from pytest_entropy.core.proposals import entropy_review_signals, format_review_signal
from pytest_entropy.core.regex import reset_unsupported_patterns, unsupported_patterns
from pytest_entropy.run.compile import compile_sources
from pytest_entropy.state.store import (
    COMPILED,
    POOL,
    StoreDamagedError,
    load_path,
    save_path,
    write_file_atomic,
)

REVIEW_HINT = "pytest-entropy propose"


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "compile", help="compile a tighter surface behind the gate (score never rises)"
    )
    add_sessions_option(parser)
    add_surface_option(parser, required=True)
    add_repairs_option(parser)
    parser.add_argument("--artifact", metavar="FILE", help="the incumbent compiled artifact")
    parser.add_argument("--out", metavar="FILE", help="write the new artifact here")
    parser.add_argument(
        "--pool",
        metavar="FILE",
        help="merge the sessions into this observation pool, save it, and use its values",
    )
    parser.add_argument(
        "--catalog-digest", metavar="TEXT", help="catalog digest of the before-report"
    )
    add_format_options(parser)
    add_engine_options(parser)
    add_state_options(parser)
    parser.add_argument(
        "--write",
        action="store_true",
        help="use and update the state directory's compiled.json and observation-pool.json",
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def _load_required(path: Path, kind: Any) -> dict[str, Any] | None:
    loaded = load_path(path, kind)
    if loaded.error is not None:
        raise EntropyInputError(loaded.error, source=str(path))
    return loaded.file


def run(args: argparse.Namespace, out: TextIO) -> int:
    started = time.monotonic()
    reset_unsupported_patterns()
    surface = surface_of(args, args.surface)
    repairs = load_optional_repairs(args.repairs)
    state_dir = state_dir_of(args)
    artifact_path = Path(args.artifact) if args.artifact else None
    if artifact_path is None and args.write:
        artifact_path = state_dir / COMPILED.filename
    pool_path = Path(args.pool) if args.pool else None
    if pool_path is None and args.write:
        pool_path = state_dir / POOL.filename
    incumbent = _load_required(artifact_path, COMPILED) if artifact_path else None
    if args.artifact and incumbent is None:
        raise EntropyInputError("compiled surface file not found", source=args.artifact)
    options = read_options_of(args, surface)
    pool = _load_required(pool_path, POOL) if pool_path is not None else None
    run_ = compile_sources(
        session_sources_of(args, options),
        surface,
        options=options,
        repairs=repairs,
        artifact=incumbent,
        catalog_digest=args.catalog_digest,
        pool=pool,
        use_pool=pool_path is not None,
        engine=engine_options_of(args),
    )
    outcome = run_.outcome
    pool_note = ""
    if pool_path is not None and run_.pool is not None:
        merged = run_.pool
        try:
            save_path(pool_path, POOL, merged.file)
        except StoreDamagedError as error:
            raise EntropyInputError(str(error), source=str(pool_path)) from None
        pool_note = (
            f"pool: {merged.merged_sessions} merged · {merged.skipped_sessions} unchanged"
            f" · {merged.dropped_observations} unloadable observations dropped"
        )
    written = []
    if outcome.status == "compiled" and outcome.artifact is not None:
        if args.out:
            write_file_atomic(Path(args.out), serialize_artifact(outcome.artifact))
            written.append(args.out)
        if args.write:
            save_path(state_dir / COMPILED.filename, COMPILED, outcome.artifact)
            written.append(str(state_dir / COMPILED.filename))
    if args.json:
        result = outcome.to_json()
        patterns = unsupported_patterns()
        if patterns:
            result["unsupportedPatterns"] = patterns  # an added key, only when there are some
        print_json(out, result)
    else:
        review = entropy_review_signals(outcome.proposals)
        lines = []
        if outcome.status == "compiled" and outcome.after is not None:
            lines.append(
                format_compile_notice(
                    outcome.proposals,
                    outcome.report.score,
                    outcome.after.score,
                    (time.monotonic() - started) * 1000,
                    len(review),
                    review_hint=REVIEW_HINT,
                )
            )
            lines.extend(f"artifact written to {path}" for path in written)
        elif outcome.status == "converged":
            lines.append(
                "entropy: converged · nothing left to tighten automatically · score"
                f" {js_string(outcome.report.score)} (lower is better)"
            )
        else:
            reasons = "; ".join((outcome.gate or {}).get("reasons", []))
            lines.append(f"entropy: compile rejected by the gate · {reasons} · surface kept")
        if pool_note:
            lines.append(pool_note)
        lines.extend(f"review: {format_review_signal(signal)}" for signal in review)
        lines.extend(unsupported_pattern_lines())
        print_lines(out, lines)
    return EXIT_FAILED if outcome.status == "rejected" else EXIT_OK
