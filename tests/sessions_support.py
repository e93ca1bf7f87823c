"""Native session files written from vector traces, for the command-line tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

COUNTS = {"droppedValues": 0, "truncatedValues": 0, "redactedValues": 0, "droppedOperations": 0}


def write_native_sessions(
    path: Path, traces: list[dict[str, Any]], unaudited: frozenset[str] = frozenset()
) -> str:
    """Native session lines, every call but those of ``unaudited`` refs audited."""
    lines = []
    for trace in traces:
        operations = [
            {"type": "call", "sequence": i, **op} for i, op in enumerate(trace["operations"])
        ]
        envelope = {
            "kind": "pi-fabric.execution",
            "version": 1,
            "outcome": "succeeded",
            "phases": [trace["taskKey"]],
            "operations": operations,
            "counts": COUNTS,
        }
        audits = [
            {"ref": op["ref"], "args": op["args"]}
            for op in trace["operations"]
            if op["ref"] not in unaudited
        ]
        details = {"trace": envelope, "audits": audits}
        record = {"type": "message", "message": {"role": "toolResult", "details": details}}
        lines.append(json.dumps(record, separators=(",", ":")))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)
