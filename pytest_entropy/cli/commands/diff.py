"""``pytest-entropy diff BEFORE AFTER``: what a schema change lets through, per parameter.

Exit 1 when anything loosened (a tool accepts a call it refused before, or containment
could not be decided) or the static freedom total rose; 0 otherwise. ``--baseline FILE``
honours the loosenings a ratchet baseline accepted. ``git:REV:PATH`` names a surface file as
committed at ``REV`` (``git:HEAD:tools.json``, ``git:origin/main:tools.json``), read with
``git show`` from the local repository (never fetched), so a pre-commit hook or a CI job can
diff against the base without a checkout of it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    add_format_options,
    add_json,
    add_mcp_timeout_option,
    print_json,
    print_lines,
    surface_of,
)
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.jscompat import js_string
from pytest_entropy.core.surface_diff import SurfaceDiff, diff_snapshots


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "diff",
        help="classify every schema change between two surfaces (loosened, tightened, ...)",
    )
    parser.add_argument(
        "before",
        metavar="BEFORE",
        help="the surface before (file or source; git:REV:PATH for a committed file)",
    )
    parser.add_argument("after", metavar="AFTER", help="the surface after (file or source)")
    parser.add_argument(
        "--baseline",
        metavar="FILE",
        help="a ratchet baseline whose accepted loosenings do not fail the diff",
    )
    add_format_options(parser, sessions=False)
    add_mcp_timeout_option(parser)
    add_json(parser)
    parser.set_defaults(handler=run)


def diff_lines(diff: SurfaceDiff) -> list[str]:
    """The human rendering: one summary line, then one line per change."""
    counts = [
        ("loosened", diff.loosened),
        ("tightened", diff.tightened),
        ("added", diff.added),
        ("removed", diff.removed),
        ("neutral", diff.neutral),
        ("unknown", diff.unknown),
    ]
    summary = " · ".join(f"{name} {len(changes)}" for name, changes in counts)
    if diff.accepted:
        summary += f" · accepted {len(diff.accepted)}"
    freedom = f"freedom {js_string(diff.freedom_before)} → {js_string(diff.freedom_after)}"
    lines = [f"{summary} · {freedom}"]
    for name, changes in [*counts[:5], ("accepted", diff.accepted)]:
        lines.extend(f"  {name}: {change.text()}" for change in changes)
    if diff.freedom_rose:
        lines.append(f"  the static freedom total rose ({freedom})")
    return lines


GIT_PREFIX = "git:"


def _committed(spec: str, directory: Path) -> str:
    """``git:REV:PATH`` written to a file in ``directory`` (a path relative to the working
    directory, as git's ``REV:./PATH`` means it); any other source as it is."""
    if not spec.startswith(GIT_PREFIX) or Path(spec).exists():
        return spec
    revision, separator, path = spec[len(GIT_PREFIX) :].partition(":")
    if not separator or not revision or not path:
        raise EntropyInputError("expected git:REV:PATH (e.g. git:HEAD:tools.json)", source=spec)
    where = path if os.path.isabs(path) or path.startswith("./") else f"./{path}"
    try:
        shown = subprocess.run(
            ["git", "show", f"{revision}:{where}"], capture_output=True, check=False, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise EntropyInputError(f"git show failed: {error}", source=spec) from None
    if shown.returncode != 0:
        reason = shown.stderr.decode("utf-8", "replace").strip().splitlines()
        raise EntropyInputError(
            f"git show failed: {reason[0] if reason else shown.returncode}", source=spec
        )
    target = directory / Path(path).name
    target.write_bytes(shown.stdout)
    return str(target)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from pytest_entropy.testing.ratchet import accepted_loosenings

    accepted = accepted_loosenings(args.baseline) if args.baseline else []
    with tempfile.TemporaryDirectory(prefix="entropy-diff-") as scratch:
        before = surface_of(args, _committed(args.before, Path(scratch)))
    after = surface_of(args, args.after)
    diff = diff_snapshots(before, after, accepted=accepted)
    if args.json:
        print_json(out, diff.to_json())
    else:
        print_lines(out, diff_lines(diff))
    return EXIT_FAILED if diff.failed else EXIT_OK
