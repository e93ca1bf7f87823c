"""What a read file was, once its lines are scanned: unrecognised (no line of any known
format) or damaged (a malformed line), counted in its diagnostics (issue 29: nothing
passes on nothing)."""

from __future__ import annotations

import os

from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.registry import rereadable
from pytest_entropy.sources.urls import is_url

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Final

__all__ = ["NOT_CLAIMED", "NO_KNOWN_FORMAT", "count_passed_over", "judge_file"]

# Why a file is unrecognised: its lines were read and none was a session record, or (a
# directory walk under --format auto) no reader's detector claimed it, so it was not read.
NO_KNOWN_FORMAT: Final = "no line of any known session format"
NOT_CLAIMED: Final = "no session reader recognised it (--format auto)"


def judge_file(location: str, diagnostics: ScanDiagnostics, session_format: str = "") -> None:
    """A readable file none of whose lines is of any known format (random bytes under a
    ``.jsonl`` name) is counted as unrecognised, never silently as a few malformed lines;
    a file that held a malformed line is named as damaged. ``session_format``: the read's
    ``--format`` (under ``auto`` a pipe that yielded nothing is named, with why)."""
    if diagnostics.malformed_lines:
        _add_damaged(diagnostics, location)
    if session_format == "auto" and diagnostics.held_no_record() and _is_pipe(location):
        diagnostics.unrecognized(location, _PIPE_UNDER_AUTO)
        return
    if diagnostics.yielded_nothing():
        problem = _not_json_objects(location)
        if problem:
            diagnostics.unrecognized(location, f"{NO_KNOWN_FORMAT}: {problem}")


_PROBE_BYTES: Final = 1 << 20


# Why a pipe or FIFO yielded nothing under --format auto: its head cannot be read twice,
# so no detector saw it and it was read as native trace lines (``resolve_format``).
_PIPE_UNDER_AUTO: Final = (
    "a pipe is read as trace lines under --format auto (its first bytes cannot be read"
    " twice to detect its format); name its format with --format FORMAT"
)


def _is_pipe(location: str) -> bool:
    return not is_url(location) and not rereadable(location)


def _not_json_objects(location: str) -> str:
    """Why a local file that yielded no record is no session file: ``""`` when it holds at
    least one JSON object line among its first MiB (a session file of headers only is a
    session file; random bytes are not), else what its lines are (``"none of its 3 lines
    is JSON"``). URLs and compressed files are given the benefit of the doubt."""
    if is_url(location) or not location.endswith(".jsonl") or not os.path.isfile(location):
        return ""  # never open a FIFO or a device here: it may never answer
    import json

    try:
        with open(location, "rb") as handle:
            head = handle.read(_PROBE_BYTES)
    except OSError:
        return ""  # the read itself already counted what went wrong
    lines = not_json = 0
    for line in head.split(b"\n"):
        if not line.strip():
            continue
        lines += 1
        try:
            if isinstance(json.loads(line), dict):
                return ""
        except (ValueError, RecursionError):
            # Nested past the decoder's depth: no session record (the scan counted the line).
            not_json += 1
    what = "JSON" if not_json == lines else "a JSON object"
    if lines == 1:
        return f"its one line is not {what}"
    if len(head) == _PROBE_BYTES:
        return f"none of the {lines:,} lines of its first MiB is {what}"
    return f"none of its {lines:,} lines is {what}"


def _add_damaged(diagnostics: ScanDiagnostics, name: str) -> None:
    if len(diagnostics.damaged_names) < ScanDiagnostics.NAME_LIMIT:
        diagnostics.damaged_names.append(name)


def count_passed_over(diagnostics: ScanDiagnostics, location: str, why: str) -> None:
    """Count one file a directory walk passed over (``why``: the listing's ``SKIPPED_*``)
    as a read counts it: a surface or companion file, an unreadable odd entry (a FIFO, a
    dangling link) with why, or an unrecognised file."""
    from pytest_entropy.ingest.base import (
        SKIPPED_COMPANION,
        SKIPPED_SPECIAL,
        SKIPPED_SURFACE,
        special_file_problem,
    )

    if why == SKIPPED_SURFACE:
        diagnostics.surface_files += 1
    elif why == SKIPPED_COMPANION:
        diagnostics.companion_files += 1
    elif why == SKIPPED_SPECIAL:
        diagnostics.unreadable(location, special_file_problem(location))
    else:
        diagnostics.unrecognized(location, NOT_CLAIMED)
