"""``pytest-entropy import``: merge a peer's artifact, adopting only digest-proven entries."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Final, TextIO

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
from pytest_entropy.cli.generation import (
    add_metric_version_option,
    check_state_generation,
    metric_version_of,
    record_state_generation,
)
from pytest_entropy.core.artifact import (
    merge_compiled_surfaces,
    parse_compiled_surface_artifact,
    without_widening_overlays,
)
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.v3 import artifact as v3_artifact
from pytest_entropy.ingest.surfaces import load_json_file
from pytest_entropy.report.names import terminal_text
from pytest_entropy.state.store import COMPILED, COMPILED_V3, update_path

# The entry lists of an artifact an import can add to.
ENTRY_LISTS: Final = ("actions", "quarantined")


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "import", help="merge a peer's compiled artifact (digest-proven entries only)"
    )
    parser.add_argument("path", metavar="ARTIFACT", help="the artifact file to import")
    add_surface_option(parser, required=True)
    add_format_options(parser, sessions=False)
    add_metric_version_option(parser)
    add_state_options(parser)
    parser.add_argument(
        "--no-quarantines",
        action="store_true",
        help="adopt no quarantine from the peer (its overlays are still merged)",
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def _run_v3(args: argparse.Namespace, out: TextIO) -> int:
    """Metric v3's import: keep the peer's plans that re-derive exactly from the live
    schemas; every legacy overlay and quarantine (the peer's and the local file's) is
    dropped and counted, and the state file becomes a version-2 artifact."""
    incoming = v3_artifact.parse_compiled_surface_artifact(load_json_file(args.path, "artifact"))
    if incoming is None:
        raise EntropyInputError(f"Artifact is invalid: {args.path}")
    live = surface_of(args, args.surface)
    target = state_dir_of(args) / COMPILED_V3.filename
    outcome: dict[str, Any] = {}

    def merge(local: dict[str, Any] | None) -> dict[str, Any]:
        merged = v3_artifact.merge_compiled_surfaces(local, incoming, live)
        outcome.update(merged)
        outcome["local"] = local
        return dict(merged["file"])

    def adopts_nothing(local: dict[str, Any] | None, merged: dict[str, Any]) -> bool:
        # As under v2 (docs/decisions.md): a version-2 local file whose plans in force the
        # import leaves as they are keeps its bytes; a version-1 file is migrated.
        if local is None or local.get("version") != v3_artifact.COMPILED_SURFACE_VERSION_2:
            return False
        return not v3_artifact.compiled_surface_effect_changed(local, merged)

    saved = update_path(Path(target), COMPILED_V3, merge, keep=adopts_nothing)
    if saved.written:
        record_state_generation(args, target.parent)  # the directory now holds v3 state
    artifact = saved.file if saved.written or outcome["local"] is None else outcome["local"]
    local_plans = len(v3_artifact.plans_of(outcome["local"]))
    plans = len(v3_artifact.plans_of(artifact))
    if args.json:
        print_json(
            out,
            {
                "path": str(target.resolve()),
                "written": saved.written,
                "normalizations": plans,
                "adoptedNormalizations": plans - local_plans if saved.written else 0,
                "droppedOverlays": outcome["droppedOverlays"],
                "droppedQuarantines": outcome["droppedQuarantines"],
                "droppedNormalizations": outcome["droppedNormalizations"],
                "artifact": artifact,
            },
        )
    else:
        legacy = outcome["droppedOverlays"] + outcome["droppedQuarantines"]
        out.write(
            f"Imported compiled surface: {plans} normal forms ·"
            f" {outcome['droppedNormalizations']} dropped (not proven against the live surface)"
            f" · {legacy} legacy restrictions dropped (inert under metric v3)\n"
        )
        where = terminal_text(str(target.resolve()))
        if saved.written:
            out.write(f"wrote {where}\n")
        else:
            out.write(f"adopted nothing: {where} left as it was\n")
    return EXIT_OK


def run(args: argparse.Namespace, out: TextIO) -> int:
    check_state_generation(args, state_dir_of(args))
    if metric_version_of(args) >= 3:
        return _run_v3(args, out)
    incoming = parse_compiled_surface_artifact(load_json_file(args.path, "artifact"))
    if incoming is None:
        raise EntropyInputError(f"Artifact is invalid: {args.path}")
    live = surface_of(args, args.surface)
    # The reference adopts any digest-proven entry; we also refuse proven overlays that
    # would widen the live schema (docs/decisions.md), so an import only ever tightens.
    incoming, refused_widenings = without_widening_overlays(incoming, live)
    # A quarantine hides a tool; its digest is computed from the public schema, so anyone
    # can prove one. --no-quarantines keeps the peer's overlays and refuses its quarantines.
    refused_quarantines = len(incoming["quarantined"]) if args.no_quarantines else 0
    if args.no_quarantines:
        incoming = {**incoming, "quarantined": []}
    target = state_dir_of(args) / COMPILED.filename
    outcome: dict[str, Any] = {}

    def merge(local: dict[str, Any] | None) -> dict[str, Any]:
        merged = merge_compiled_surfaces(local, incoming, live)
        outcome.update(merged)
        outcome["local"] = local
        outcome["localOverlays"] = len((local or {}).get("actions") or ())
        outcome["localQuarantines"] = len((local or {}).get("quarantined") or ())
        local_refs = {entry["ref"] for entry in (local or {}).get("quarantined") or ()}
        outcome["adoptedQuarantineRefs"] = [
            entry["ref"]
            for entry in merged["file"]["quarantined"]
            if entry["ref"] not in local_refs
        ]
        return dict(merged["file"])

    def adopts_nothing(local: dict[str, Any] | None, merged: dict[str, Any]) -> bool:
        # The merge only ever appends entries, so equal counts mean nothing was adopted.
        # The reference would still save (a new evidenceDigest naming the source, perhaps a
        # longer ledger); an import that changes no entry in force writes nothing instead
        # (docs/decisions.md), so the file keeps its bytes and mtime, or stays absent.
        before = local or {}
        return all(len(merged[key]) == len(before.get(key) or ()) for key in ENTRY_LISTS)

    # damage raises, naming the file
    saved = update_path(Path(target), COMPILED, merge, keep=adopts_nothing)
    # What is in force: the merged file, or the local one when the import kept it.
    artifact = saved.file if saved.written or outcome["local"] is None else outcome["local"]
    adopted_refs: list[str] = outcome["adoptedQuarantineRefs"]
    tightened, quarantined = len(artifact["actions"]), len(artifact["quarantined"])
    dropped = outcome["droppedOverlays"] + outcome["droppedQuarantines"] + refused_widenings
    adopted_overlays = tightened - outcome["localOverlays"]
    adopted_quarantines = quarantined - outcome["localQuarantines"]
    if args.json:
        print_json(
            out,
            {
                "path": str(target.resolve()),
                "written": saved.written,
                "tightened": tightened,
                "quarantined": quarantined,
                "adoptedOverlays": adopted_overlays,
                "adoptedQuarantines": adopted_quarantines,
                "droppedOverlays": outcome["droppedOverlays"],
                "droppedQuarantines": outcome["droppedQuarantines"],
                "refusedWidenings": refused_widenings,
                "refusedQuarantines": refused_quarantines,
                "adoptedQuarantineRefs": adopted_refs,
                "artifact": artifact,
            },
        )
    else:
        out.write(
            f"Imported compiled surface: {tightened} tightened · {quarantined} quarantined ·"
            f" {dropped} dropped (base digest mismatch)\n"
        )
        if refused_widenings:
            out.write(f"refused {refused_widenings} overlays that would widen the live schema\n")
        if adopted_overlays or adopted_quarantines:
            out.write(
                f"adopted {adopted_overlays} overlays and {adopted_quarantines} quarantines"
                f" → {terminal_text(str(target.resolve()))}\n"
            )
        else:
            out.write(f"adopted nothing: {terminal_text(str(target.resolve()))} left as it was\n")
        if adopted_refs:
            out.write(
                terminal_text(
                    f"adopted quarantines (these tools are now hidden): {', '.join(adopted_refs)}"
                )
                + "\n"
            )
        if refused_quarantines:
            out.write(f"refused {refused_quarantines} quarantines (--no-quarantines)\n")
    return EXIT_OK
