"""State-store scenarios shared by the concurrency tests and ``bench/stress_store.py``: the
demo surface with spare tools no session calls, and peer artifacts that adopt one entry on
one of them (so an import's effect can be told apart from any compile's)."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_entropy.core.canonical import schema_digest

DEMO = Path(__file__).resolve().parents[1] / "corpora" / "demo"
SPARE_REF = "mcp.spare.tool{}"


def surface_with_spare_tools(directory: Path, count: int, name: str = "surface.json") -> Path:
    """The demo surface plus ``count`` tools no session calls, written to ``directory``."""
    surface = json.loads((DEMO / "surface.json").read_text(encoding="utf-8"))
    for index in range(count):
        surface["actions"].append(
            {
                "ref": SPARE_REF.format(index),
                "inputSchema": {
                    "type": "object",
                    "properties": {"mode": {"type": "string", "enum": ["a", "b", "c"]}},
                },
            }
        )
    path = directory / name
    path.write_text(json.dumps(surface), encoding="utf-8")
    return path


def peer_for(
    surface: Path, index: int, directory: Path, *, tools: int | None = None
) -> tuple[Path, str]:
    """Peer artifact ``index`` adopting one entry on a spare tool (``index``, or ``index``
    modulo ``tools``): a quarantine when ``index`` is even, an enum overlay when odd.
    Returns the file and the ref it touches."""
    schemas = {
        action["ref"]: action["inputSchema"]
        for action in json.loads(surface.read_text(encoding="utf-8"))["actions"]
    }
    ref = SPARE_REF.format(index % tools if tools else index)
    digest = schema_digest(schemas[ref])
    overlay = json.loads(json.dumps(schemas[ref]))
    overlay["properties"]["mode"]["enum"] = ["a", "b"]
    artifact = {
        "version": 1,
        "metricVersion": 2,
        "actions": [] if index % 2 == 0 else [
            {"ref": ref, "inputSchema": overlay, "baseSchemaDigest": digest}
        ],
        "quarantined": [{"ref": ref, "baseSchemaDigest": digest}] if index % 2 == 0 else [],
        "applied": [],
        "gate": {"passed": True, "beforeScore": 1.0, "afterScore": 1.0, "reasons": []},
        "evidenceDigest": f"peer-{index}",
    }  # fmt: skip
    path = directory / f"peer-{index}.json"
    path.write_text(json.dumps(artifact), encoding="utf-8")
    return path, ref
