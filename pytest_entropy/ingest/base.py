"""What every session reader shares: how to read, which files are sessions, opening them."""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from pytest_entropy.ingest.diagnostics import ScanDiagnostics

SESSION_SUFFIXES = (".jsonl", ".jsonl.gz")
NATIVE_FORMAT = "fabric"


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """How to read session files; travels (pickled) to worker processes.

    ``session_format`` is ``auto``, ``fabric`` (the native trace-envelope JSONL) or the name
    of a registered foreign reader. ``surface`` lets foreign readers classify failure
    stages by replaying recorded arguments against the declared schemas. ``ref_prefix``
    goes before every foreign tool name (empty: the format's own default, ``pi.`` for Pi
    sessions); ``redact`` drops secret-like values from the audits a reader writes.
    """

    session_format: str = "auto"
    surface: dict[str, Any] | None = None
    ref_prefix: str = ""
    redact: bool = False


# A foreign reader turns one file into native session lines (model_change lines and
# fabric_exec trace lines with audits), so everything downstream - the guard, the meter,
# `convert` - treats every format alike. Readers register here by name.
SessionReader = Callable[[Path, ReadOptions, ScanDiagnostics], Iterable[bytes]]
# A surface reader turns a parsed tool list (and its source, for messages) into a snapshot.
SurfaceReader = Callable[[Any, str], dict[str, Any]]


def is_session_name(name: str) -> bool:
    return name.endswith(SESSION_SUFFIXES)


def open_session(path: Path) -> IO[bytes]:
    """Open a session file for binary reading; ``.gz`` files decompress transparently."""
    if path.name.endswith(".gz"):
        return cast(IO[bytes], gzip.open(path, "rb"))
    return open(path, "rb")
