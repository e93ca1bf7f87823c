"""A toy session and surface format, written as a format module of ``ingest/`` would be.

The whole format is this module: a reader, a detector and a directory rule gathered in
``FORMAT`` (and a surface reader in ``SURFACE_FORMAT``). ``tests/unit/test_format_registry.py``
adds it with one registry call and reads it through ``measure``.

A toy session file starts with the line ``TOYCALLS``; every further line is
``<tool>\\t<JSON arguments>\\t<ok|error>``, and the file is one trace whose task key is the
file's stem. A toy surface is ``{"toy": {<tool>: <JSON Schema>, ...}}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pytest_entropy.ingest.base import (
    ReadOptions,
    SessionFormat,
    SurfaceFormat,
    open_session,
)
from pytest_entropy.ingest.detection import sorted_files
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.writer import ForeignCall, ForeignTrace, NativeWriter

_MAGIC = b"TOYCALLS\n"


def read_toy(path: Path, options: ReadOptions, diagnostics: ScanDiagnostics) -> Iterator[bytes]:
    """Native lines of one toy file."""
    with open_session(path) as stream:
        lines = stream.read().decode().splitlines()[1:]
    trace = ForeignTrace(path.name.split(".")[0])
    for line in lines:
        name, arguments, outcome = line.split("\t")
        diagnostics.foreign_records += 1
        trace.calls.append(
            ForeignCall(name, json.loads(arguments), "succeeded" if outcome == "ok" else "failed")
        )
    yield from NativeWriter(options, diagnostics, default_prefix="toy.").lines(trace)


def detect_toy(path: Path, head: bytes) -> bool:
    """A toy file starts with its magic line."""
    return head.startswith(_MAGIC)


def toy_files(root: Path) -> list[Path]:
    """A directory means its ``*.toy`` files, by name."""
    return sorted_files(root, lambda name: name.endswith(".toy"), recursive=False)


def read_toy_surface(value: Any, source: str) -> dict[str, Any]:
    """A toy surface: tools and schemas under ``toy``."""
    return {
        "version": 1,
        "actions": [{"ref": name, "inputSchema": schema} for name, schema in value["toy"].items()],
    }


FORMAT = SessionFormat("toy", read_toy, detector=detect_toy, directory_files=toy_files)
SURFACE_FORMAT = SurfaceFormat("toy", read_toy_surface, ref_prefix="toy.")
