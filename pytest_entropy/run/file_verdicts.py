"""What a read file was, once its lines are scanned: unrecognised (no line of any known
format) or damaged (a malformed line), counted in its diagnostics (issue 29: nothing
passes on nothing)."""

from __future__ import annotations

import os

from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.sources.urls import is_url

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Final

__all__ = ["judge_file"]


def judge_file(location: str, diagnostics: ScanDiagnostics) -> None:
    """A readable file none of whose lines is of any known format (random bytes under a
    ``.jsonl`` name) is counted as unrecognised, never silently as a few malformed lines;
    a file that held a malformed line is named as damaged."""
    if diagnostics.malformed_lines:
        _add_damaged(diagnostics, location)
    if diagnostics.yielded_nothing() and not _holds_json_objects(location):
        diagnostics.unrecognized(location, "no line of any known session format")


_PROBE_BYTES: Final = 1 << 20


def _holds_json_objects(location: str) -> bool:
    """Whether a local file that yielded no record holds at least one JSON object line
    among its first MiB (a session file of headers only is a session file; random bytes
    are not). URLs and compressed files are given the benefit of the doubt."""
    if is_url(location) or not location.endswith(".jsonl") or not os.path.isfile(location):
        return True  # never open a FIFO or a device here: it may never answer
    import json

    try:
        with open(location, "rb") as handle:
            head = handle.read(_PROBE_BYTES)
    except OSError:
        return True  # the read itself already counted what went wrong
    for line in head.split(b"\n"):
        if not line.strip():
            continue
        try:
            if isinstance(json.loads(line), dict):
                return True
        except (ValueError, RecursionError):
            # Nested past the decoder's depth: no session record (the scan counted the line).
            continue
    return False


def _add_damaged(diagnostics: ScanDiagnostics, name: str) -> None:
    if len(diagnostics.damaged_names) < ScanDiagnostics.NAME_LIMIT:
        diagnostics.damaged_names.append(name)
