"""``pytest-entropy compile``: measure, propose, apply, re-measure, gate, and persist."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    add_corpus_inputs,
    add_corpus_reading,
    add_json,
    add_state_options,
    check_corpus,
    engine_options_of,
    load_optional_repairs,
    load_state_file,
    oversized_note,
    print_json,
    print_lines,
    read_options_of,
    session_sources_of,
    state_dir_of,
    surface_of,
    unsupported_pattern_lines,
)
from pytest_entropy.cli.generation import (
    check_state_generation,
    metric_version_of,
    record_state_generation,
)
from pytest_entropy.cli.reports import add_report_options, write_reports
from pytest_entropy.cli.steering import (
    add_redact_option,
    add_steering_options,
    redact_values_of,
    steering_lines,
    steering_of,
)
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.jscompat import js_string
from pytest_entropy.core.notices import format_compile_notice
from pytest_entropy.core.proposals import entropy_review_signals, format_review_signal
from pytest_entropy.core.regex import Unenforced, watch_unenforced
from pytest_entropy.core.steering import unmatched_tokens
from pytest_entropy.core.v3.compiler import REVIEW_KINDS, format_compile_notice_v3
from pytest_entropy.report.names import terminal_text
from pytest_entropy.run.compile import CompileRun, compile_sources
from pytest_entropy.state.store import (
    COMPILED,
    COMPILED_V3,
    POOL,
    SaveResult,
    Snapshot,
    StoreKind,
    Write,
    update_many,
    write_document,
)

REVIEW_HINT = "pytest-entropy propose"
CONVERGED = "converged: the surface is already as tight as the evidence allows; nothing to trial"
CONVERGED_INCUMBENT = (
    "converged: the surface is already as tight as the evidence allows; the incumbent"
    " artifact stays in force"
)

CONVERGED_V3 = "converged: the artifact already holds every normal form the surface proves"
CONVERGED_V3_EMPTY = "converged: no action of the surface has a normal form; nothing to compile"


def _written_lines(
    status: str,
    out: str | None,
    targets: Sequence[tuple[str, Path, SaveResult]],
    state_dir: Path,
) -> list[str]:
    """Exactly what this compile wrote, and where; or that it wrote nothing and which
    flag would have. ``targets`` are the state files committed, ``(what, path, result)``."""
    lines = [f"artifact written to {out}"] if out else []
    for what, path, result in targets:
        lines.append(f"{what} {'written to' if result.written else 'unchanged at'} {path}")
    if any(what == "artifact" for what, _path, _result in targets) or out:
        return lines
    if status == "compiled":
        lines.append(
            f"artifact not written: --write saves it as {state_dir / COMPILED.filename} (and"
            " merges the sessions into the pool there), --out FILE writes it anywhere"
        )
    elif status == "converged":
        lines.append("no artifact written: nothing new to save")
    else:
        lines.append("no artifact written: the gate kept the incumbent surface")
    return lines


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "compile", help="compile a tighter surface behind the gate (score never rises)"
    )
    add_corpus_inputs(parser, surface_required=True)
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
    add_corpus_reading(parser)
    add_state_options(parser)
    parser.add_argument(
        "--write",
        action="store_true",
        help="use and update the state directory's compiled.json and observation-pool.json",
    )
    add_steering_options(parser)
    add_redact_option(parser)
    add_json(parser)
    add_report_options(parser)
    parser.set_defaults(handler=run)


def _same_file(first: Path | None, second: Path | None) -> bool:
    return (
        first is not None
        and second is not None
        and os.path.abspath(first) == os.path.abspath(second)
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    started = time.monotonic()
    metric_version = metric_version_of(args)
    # Metric v3 reads and writes version-2 artifacts (a version-1 file is migration data).
    compiled_kind = COMPILED_V3 if metric_version >= 3 else COMPILED
    surface = surface_of(args, args.surface)
    repairs = load_optional_repairs(args.repairs)
    state_dir = state_dir_of(args)
    check_state_generation(args, state_dir)
    artifact_path = Path(args.artifact) if args.artifact else None
    if artifact_path is None and args.write:
        artifact_path = state_dir / COMPILED.filename
    pool_path = Path(args.pool) if args.pool else None
    if pool_path is None and args.write:
        pool_path = state_dir / POOL.filename
    compiled_target = state_dir / COMPILED.filename if args.write else None
    # The files this compile both reads and rewrites are snapshotted: the writes happen only
    # if they are unchanged when the locks are taken, otherwise the compile runs again on
    # what the other writer left (a concurrent import or compile is never lost).
    checked_artifact = _same_file(artifact_path, compiled_target)
    reads: list[tuple[Path, StoreKind]] = []
    if checked_artifact and compiled_target is not None:
        reads.append((compiled_target, compiled_kind))
    if pool_path is not None:
        reads.append((pool_path, POOL))
    options = read_options_of(args, surface)
    steering = steering_of(args)
    if steering is not None and metric_version >= 3:
        raise EntropyInputError(
            "steering chooses among metric v2's restrictions; metric v3 compiles none"
            " (drop the steering options or use --metric-version 2)"
        )
    redact_values = redact_values_of(args)

    def plan(
        snapshots: Sequence[Snapshot],
    ) -> tuple[tuple[CompileRun, Unenforced], list[Write]]:
        held = {snap.kind.filename: snap for snap in snapshots}
        if checked_artifact:
            incumbent = held[COMPILED.filename].file
        else:
            incumbent = (
                load_state_file(artifact_path, compiled_kind, required=False)
                if artifact_path
                else None
            )
        if args.artifact and incumbent is None:
            raise EntropyInputError("compiled surface file not found", source=args.artifact)
        pool = held[POOL.filename].file if pool_path is not None else None
        with watch_unenforced() as met:
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
                steering=steering,
                redact_values=redact_values,
                metric_version=metric_version,
            )
        check_corpus(args, run_.diagnostics)  # before anything is written
        writes = []
        if pool_path is not None and run_.pool is not None:
            writes.append(Write(pool_path, POOL, run_.pool.file))
        artifact = run_.outcome.artifact
        if compiled_target is not None and run_.outcome.status == "compiled" and artifact:
            writes.append(Write(compiled_target, compiled_kind, artifact))
        return (run_, met), writes  # a redo's record replaces what an earlier try met

    (run_, met), saved = update_many(reads, plan)  # damage raises, naming the file (exit 2)
    if args.write:
        record_state_generation(args, state_dir)  # a v3 compile marks its state (v2: nothing)
    outcome = run_.outcome
    pool_note = ""
    if pool_path is not None and run_.pool is not None:
        merged = run_.pool
        pool_note = (
            f"pool: {merged.merged_sessions} merged · {merged.skipped_sessions} unchanged"
            f" · {merged.dropped_observations} unloadable observations dropped"
            + oversized_note(merged)
        )
    written = []
    if outcome.status == "compiled" and outcome.artifact is not None:
        if args.out:
            write_document(Path(args.out), compiled_kind, outcome.artifact)
            written.append(args.out)
        if compiled_target is not None:
            written.append(str(compiled_target))
    targets = []  # the commit's results, in the order plan() listed the writes
    results = iter(saved)
    if pool_path is not None and run_.pool is not None:
        targets.append(("pool", pool_path, next(results)))
    if compiled_target is not None and outcome.status == "compiled" and outcome.artifact:
        targets.append(("artifact", compiled_target, next(results)))
    out_written = args.out if outcome.status == "compiled" and outcome.artifact else None
    where_lines = _written_lines(outcome.status, out_written, targets, state_dir)
    result = run_.steered.to_json() if run_.steered is not None else outcome.to_json()
    if met.patterns:
        result["unsupportedPatterns"] = sorted(met.patterns)  # added only when there are some
    if met.refs:
        result["externalRefs"] = sorted(met.refs)  # likewise: refs never fetched, so not enforced
    warnings = unmatched_tokens(steering, outcome.proposals)
    for warning in warnings:
        sys.stderr.write(f"warning: {terminal_text(warning)}\n")
    if warnings:
        result["warnings"] = warnings  # added only when there are some
    if args.json:
        print_json(out, result)
    else:
        review = entropy_review_signals(outcome.proposals)
        if metric_version >= 3:
            review = [p for p in outcome.proposals if p["kind"] in REVIEW_KINDS]
        lines = []
        if outcome.status == "compiled" and outcome.after is not None and metric_version >= 3:
            notice = format_compile_notice_v3(
                outcome.report.score, outcome.after.score, len(review), review_hint=REVIEW_HINT
            )
            if not written:
                notice = notice.replace(
                    "entropy: background optimization complete", "entropy: compiled, not saved", 1
                )
            lines.append(notice)
        elif outcome.status == "compiled" and outcome.after is not None:
            notice = format_compile_notice(
                run_.steered.shown_proposals() if run_.steered else outcome.proposals,
                outcome.report.score,
                outcome.after.score,
                (time.monotonic() - started) * 1000,
                len(review),
                review_hint=REVIEW_HINT,
            )
            if not written:  # nothing is in force: not the loop's "optimization complete"
                notice = notice.replace(
                    "entropy: background optimization complete", "entropy: compiled, not saved", 1
                )
            lines.append(notice)
        elif outcome.status == "converged":
            # With an incumbent the trial has something to replay; without one, nothing.
            held = CONVERGED_INCUMBENT if outcome.artifact is not None else CONVERGED
            if metric_version >= 3:
                held = CONVERGED_V3 if outcome.artifact is not None else CONVERGED_V3_EMPTY
            lines.append(
                f"entropy: {held} · score {js_string(outcome.report.score)} (lower is better)"
            )
        else:
            reasons = "; ".join((outcome.gate or {}).get("reasons", []))
            lines.append(f"entropy: compile rejected by the gate · {reasons} · surface kept")
        lines.extend(where_lines)
        if pool_note:
            lines.append(pool_note)
        lines.extend(steering_lines(result))
        lines.extend(f"review: {format_review_signal(signal)}" for signal in review)
        lines.extend(unsupported_pattern_lines(met))
        print_lines(out, lines, spec=True)  # the compile notice is the spec's text
    write_reports(args, "compile", result, surface=surface, inputs=args.sessions)
    return EXIT_FAILED if outcome.status == "rejected" else EXIT_OK
