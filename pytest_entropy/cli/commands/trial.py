"""``pytest-entropy trial``: replay recorded calls against the declared and compiled surfaces.

The held-out trial (spec §10) classifies every recorded call; audited refs replay their
verbatim audit arguments. Each file is scanned alone, on the engine the options name.
Exit 1 when any held-out successful call is rejected by the compiled schema (a tightening
cost - the certification's rule); quarantine costs are reported without failing.
"""

from __future__ import annotations

import argparse
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
    load_state_file,
    print_json,
    print_lines,
    read_options_of,
    session_sources_of,
    state_dir_of,
    surface_of,
    unsupported_pattern_lines,
)
from pytest_entropy.cli.generation import check_state_generation, metric_version_of
from pytest_entropy.cli.reports import add_report_options, write_reports
from pytest_entropy.cli.steering import (
    add_explain_option,
    add_redact_option,
    explain_of,
    redact_values_of,
)
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.jscompat import js_string, js_to_exponential, js_to_fixed
from pytest_entropy.core.regex import watch_unenforced
from pytest_entropy.core.trial import TrialReport
from pytest_entropy.core.v3.trial import V3TrialReport
from pytest_entropy.report.text import TRIAL_CLASSES
from pytest_entropy.run.trial import trial_sources, trial_sources_v3
from pytest_entropy.run.trial_explain import explained_trial_sources
from pytest_entropy.state.store import COMPILED, COMPILED_V3, StoreKind

# The v3 trial's classes in its summary line (notes §7.2).
V3_TRIAL_CLASSES = (
    ("bothAccept", "both accept"),
    ("bothReject", "both reject"),
    ("normalizationWin", "normalization wins"),
    ("tighteningCost", "tightening costs"),
    ("canonicalIdentityCost", "canonical identity costs"),
    ("idempotenceCost", "idempotence costs"),
)


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "trial", help="held-out trial: replay recorded calls against the compiled artifact"
    )
    add_corpus_inputs(parser, surface_required=True, repairs=False)
    parser.add_argument(
        "--artifact",
        metavar="FILE",
        help="the compiled artifact (default: STATE_DIR/compiled.json)",
    )
    add_state_options(parser)
    add_corpus_reading(parser)
    add_explain_option(parser)
    add_redact_option(parser)
    add_json(parser)
    add_report_options(parser)
    parser.set_defaults(handler=run)


def _artifact(
    args: argparse.Namespace, kind: StoreKind = COMPILED
) -> tuple[dict[str, Any] | None, Path]:
    """The artifact to replay against and where it was looked for; ``None`` when the state
    directory holds none (the trial then runs against an empty overlay: ``no-evidence``)."""
    path = Path(args.artifact) if args.artifact else state_dir_of(args) / kind.filename
    return load_state_file(path, kind, required=bool(args.artifact)), path


def trial_lines_v3(trial: V3TrialReport) -> list[str]:
    """The human summary of a v3 trial (representation replay)."""
    totals = trial.totals
    lines = [
        f"trial: {trial.verdict} · representation wins {totals['normalizationWin']} ·"
        f" historical score unchanged {js_string(trial.declared_score)} · costs {trial.costs()}",
        f"calls: {totals['operations']} replayed · "
        + " · ".join(f"{totals[key]} {label}" for key, label in V3_TRIAL_CLASSES),
    ]
    if trial.divergences:
        lines.append("divergences:")
        lines.extend(
            f"  {row['ref']}  {row['trialClass']}  {row['count']}" for row in trial.divergences
        )
    if trial.costs():
        lines.append(
            f"FAIL: {trial.costs()} replayed calls broke a normal-form law (tightening,"
            " canonical identity or idempotence)"
        )
    return lines


def _run_v3(args: argparse.Namespace, out: TextIO) -> int:
    if explain_of(args):
        raise EntropyInputError("--explain explains metric v2's trial classes; drop it under v3")
    surface = surface_of(args, args.surface)
    artifact, artifact_path = _artifact(args, COMPILED_V3)
    options = read_options_of(args, surface)
    with watch_unenforced() as met:
        sources = session_sources_of(args, options)
        trial, diagnostics = trial_sources_v3(
            sources, surface, artifact, options=options, engine=engine_options_of(args)
        )
    check_corpus(args, diagnostics)
    if args.json:
        print_json(out, trial.to_json())
    else:
        print_lines(out, trial_lines_v3(trial))
        if artifact is None:
            print_lines(
                out,
                [f"no compiled artifact at {artifact_path}: no plan to replay; nothing written"],
            )
        print_lines(out, unsupported_pattern_lines(met))
    write_reports(args, "trial", trial.to_json(), surface=surface, inputs=args.sessions)
    return EXIT_FAILED if trial.costs() > 0 else EXIT_OK


def _delta_text(delta: float) -> str:
    """The trial's raw delta for reading: six decimals, as ``measure`` prints scores, or
    ``toExponential(2)`` for a change too small to show in six (a change never reads as
    none, as in the compile notice). ``--json`` and the certification summary keep it exact.

    >>> _delta_text(-0.012712000000000001), _delta_text(-1e-9), _delta_text(0.0)
    ('-0.012712', '-1.00e-9', '0.000000')
    """
    text = js_to_fixed(delta, 6)
    if delta != 0 and float(text) == 0:
        return js_to_exponential(delta, 2)
    return text


def trial_lines(trial: TrialReport) -> list[str]:
    """The human summary of a trial."""
    totals = trial.totals
    wins = totals["typedFailureWin"] + totals["quarantineWin"]
    costs = totals["tighteningCost"] + totals["quarantineCost"]
    lines = [
        f"trial: {trial.verdict} · score {js_to_fixed(trial.declared_score, 6)} →"
        f" {js_to_fixed(trial.effective_score, 6)} (delta {_delta_text(trial.delta)})"
        f" · wins {wins} · costs {costs}",
        f"calls: {totals['operations']} replayed · "
        + " · ".join(f"{totals[key]} {label}" for key, label in TRIAL_CLASSES),
    ]
    if trial.divergences:
        lines.append("divergences:")
        lines.extend(
            f"  {row['ref']}  {row['trialClass']}  {row['count']}" for row in trial.divergences
        )
    cost = totals["tighteningCost"]
    if cost:
        lines.append(
            f"FAIL: {cost} held-out successful calls rejected by the compiled schema"
            " (the compile overfit its window)"
        )
    return lines


def run(args: argparse.Namespace, out: TextIO) -> int:
    if not args.artifact:
        check_state_generation(args, state_dir_of(args))
    if metric_version_of(args) >= 3:
        return _run_v3(args, out)
    surface = surface_of(args, args.surface)
    artifact, artifact_path = _artifact(args)
    options = read_options_of(args, surface)
    explanations = None
    with watch_unenforced() as met:
        sources = session_sources_of(args, options)
        engine = engine_options_of(args)
        if explain_of(args):
            trial, diagnostics, explanations = explained_trial_sources(
                sources,
                surface,
                artifact,
                options=options,
                engine=engine,
                redact_values=redact_values_of(args),
            )
        else:
            trial, diagnostics = trial_sources(
                sources, surface, artifact, options=options, engine=engine
            )
    check_corpus(args, diagnostics)
    if args.json:
        value = trial.to_json()
        if explanations is not None:
            value["explanations"] = explanations  # added only with --explain
        print_json(out, value)
    else:
        print_lines(out, trial_lines(trial))
        print_lines(out, [f"explain: {row['text']}" for row in explanations or ()])
        if artifact is None:
            print_lines(
                out,
                [
                    f"no compiled artifact at {artifact_path}: replayed against an empty overlay"
                    " (nothing compiled yet, or the compile converged); nothing written"
                ],
            )
        print_lines(out, unsupported_pattern_lines(met))
    write_reports(args, "trial", trial.to_json(), surface=surface, inputs=args.sessions)
    return EXIT_FAILED if trial.tightening_cost > 0 else EXIT_OK
