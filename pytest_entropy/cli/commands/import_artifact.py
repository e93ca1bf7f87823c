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
    refuse_unavailable,
)
from pytest_entropy.core.artifact import (
    merge_compiled_surfaces,
    parse_compiled_surface_artifact,
    without_widening_overlays,
)
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.ingest.surfaces import load_json_file
from pytest_entropy.report.names import terminal_text
from pytest_entropy.state.store import COMPILED, update_path

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


def run(args: argparse.Namespace, out: TextIO) -> int:
    refuse_unavailable(args, "import")
    check_state_generation(args, state_dir_of(args))
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
