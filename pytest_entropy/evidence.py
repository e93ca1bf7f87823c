"""Window evidence: what the compiler reads from a set of session files (spec §9.3 R14).

Each file is scanned alone (its own model cursor); traces, value observations and audit
calls are concatenated in file order, and every readable file contributes one observation
window ``{file: absolute path, observations}`` for the pool, even when it is empty.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .core.records import AuditCall, Trace, ValueObservation
from .ingest.fabric import ScanDiagnostics
from .sessions import ReadOptions, read_file_evidence

__all__ = ["WindowEvidence", "read_window_evidence"]


@dataclass(slots=True)
class WindowEvidence:
    traces: list[Trace] = field(default_factory=list)
    value_observations: list[ValueObservation] = field(default_factory=list)
    audit_calls: list[AuditCall] = field(default_factory=list)
    windows: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: ScanDiagnostics = field(default_factory=ScanDiagnostics)


def read_window_evidence(
    paths: Sequence[Path], options: ReadOptions | None = None
) -> WindowEvidence:
    """Scan every file alone, in the given order, and gather the window evidence."""
    window = WindowEvidence()
    for path in paths:
        evidence = read_file_evidence(path, diagnostics=window.diagnostics, options=options)
        if evidence is None:
            continue
        window.traces.extend(evidence.traces)
        window.value_observations.extend(evidence.value_observations)
        window.audit_calls.extend(evidence.audit_calls)
        window.windows.append(
            {"file": os.path.abspath(path), "observations": evidence.value_observations}
        )
    return window
