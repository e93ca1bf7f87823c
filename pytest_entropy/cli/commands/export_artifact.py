"""``pytest-entropy export-artifact``: write the machine's compiled artifact for sharing."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    add_json,
    add_state_options,
    print_json,
    state_dir_of,
)
from pytest_entropy.cli.generation import add_metric_version_option, metric_version_of
from pytest_entropy.core.artifact import serialize_artifact
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.report.names import terminal_text
from pytest_entropy.state.files import ensure_state_directory
from pytest_entropy.state.store import COMPILED, COMPILED_V3, load_path, write_file_atomic

NOTHING_TO_EXPORT = "No compiled surface to export; wait for a compile to pass its gate"


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "export-artifact", help="write the compiled artifact (default STATE_DIR/artifact.json)"
    )
    parser.add_argument(
        "--artifact",
        metavar="FILE",
        help="the artifact to export (default: STATE_DIR/compiled.json)",
    )
    parser.add_argument("--out", metavar="FILE", help="where (default: STATE_DIR/artifact.json)")
    add_state_options(parser)
    add_metric_version_option(parser)
    add_json(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    state_dir = state_dir_of(args)
    v3 = metric_version_of(args) >= 3
    source = Path(args.artifact) if args.artifact else state_dir / COMPILED.filename
    # Under metric v3 the file is read as a version-2 artifact (a version-1 one as migration
    # data) and written as loaded, as the upstream's export writes its loaded file.
    loaded = load_path(source, COMPILED_V3 if v3 else COMPILED)
    if loaded.error is not None:
        raise EntropyInputError(loaded.error, source=str(source))
    if loaded.file is None:
        sys.stderr.write(NOTHING_TO_EXPORT + "\n")
        return EXIT_FAILED
    artifact = loaded.file
    if args.out:
        target = Path(args.out)
    else:
        target = state_dir / "artifact.json"
        ensure_state_directory(state_dir)
    written = write_file_atomic(target, serialize_artifact(artifact))
    path = target.resolve()
    tightened, quarantined = len(artifact["actions"]), len(artifact["quarantined"])
    if v3:
        plans = len(artifact.get("normalizations") or ())
        if args.json:
            print_json(out, {"path": str(path), "normalizations": plans, "written": written})
        else:
            out.write(
                f"Exported compiled surface ({plans} normal forms) → {terminal_text(str(path))}\n"
            )
    elif args.json:
        print_json(
            out,
            {
                "path": str(path),
                "tightened": tightened,
                "quarantined": quarantined,
                "written": written,
            },
        )
    else:
        out.write(
            f"Exported compiled surface ({tightened} tightened · {quarantined} quarantined)"
            f" → {terminal_text(str(path))}\n"
        )
    return EXIT_OK
