"""Federation under attack: crafted artifacts never widen the local surface.

    python bench/federation_attack.py [--artifacts 2000] [--seed 3]

Starts from a real compile of the demo corpus (a local artifact that tightens
``mcp.report.render.format`` and quarantines ``mcp.flaky.sync``), then imports crafted peer
artifacts through the same path as ``pytest-entropy import`` (parse with the artifact guard,
refuse widening overlays, digest-proven merge). Attacks, mixed at random:

* widen an enum (a proven digest and an overlay with more values, or no enum at all);
* resurrect a quarantined ref (an overlay or quarantine entry for it, proven or forged);
* overflow the ledger (hundreds of applied entries, or more than 256 — refused by the guard);
* carry digests of schemas that are not live (stale, forged, unknown refs);
* wrong versions, missing fields.

After every import it probes a fixed set of calls (every enum value of every property, some
out-of-domain values, every ref, unknown refs) with ``validate_call`` and counts a widening
whenever a call accepted after the import was rejected before it. Prints Markdown for
``docs/reliability.md``.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "corpora" / "demo"

from pytest_entropy.core.artifact import (  # noqa: E402
    merge_compiled_surfaces,
    parse_compiled_surface_artifact,
    without_widening_overlays,
)
from pytest_entropy.core.canonical import schema_digest  # noqa: E402
from pytest_entropy.core.enforce import validate_call  # noqa: E402


def local_artifact() -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-m", "pytest_entropy", "compile", "--sessions", str(DEMO / "sessions"),
         "--surface", str(DEMO / "surface.json"), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    artifact = json.loads(result.stdout)["artifact"]
    parsed = parse_compiled_surface_artifact(artifact)
    assert parsed is not None
    return parsed


def probes(surface: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    for action in surface["actions"]:
        properties = action["inputSchema"].get("properties", {})
        for name, schema in properties.items():
            values = [*list(schema.get("enum", [])), "pdf", "zzz", "", 5, None]
            for value in values:
                base = dict.fromkeys(action["inputSchema"].get("required", []), "x")
                calls.append((action["ref"], {**base, name: value}))
        calls.append((action["ref"], {}))
    calls.append(("mcp.ghost.run", {}))
    return calls


def craft(rng: random.Random, live: dict[str, Any], local: dict[str, Any]) -> Any:
    declared = {a["ref"]: a["inputSchema"] for a in live["actions"]}
    refs = sorted(declared)
    artifact: dict[str, Any] = {
        "version": 1, "metricVersion": 2, "actions": [], "quarantined": [], "applied": [],
        "gate": {"passed": True, "beforeScore": 1, "afterScore": 0.5, "reasons": []},
        "evidenceDigest": f"peer-{rng.random()}",
    }  # fmt: skip
    for _ in range(rng.randrange(1, 5)):
        attack = rng.randrange(8)
        ref = rng.choice([*refs, "mcp.ghost.run"])
        schema = copy.deepcopy(declared.get(ref, {"type": "object"}))
        digest = schema_digest(declared[ref]) if ref in declared else schema_digest(schema)
        if attack == 0:  # widen an enum under a proven digest
            for prop in schema.get("properties", {}).values():
                if isinstance(prop, dict) and "enum" in prop:
                    prop["enum"] = [*list(prop["enum"]), "zzz", "pdf2"]
            artifact["actions"].append(
                {"ref": ref, "inputSchema": schema, "baseSchemaDigest": digest}
            )
        elif attack == 1:  # drop every constraint under a proven digest
            artifact["actions"].append(
                {"ref": ref, "inputSchema": {"type": "object"}, "baseSchemaDigest": digest}
            )
        elif attack == 2:  # resurrect the local quarantine
            target = local["quarantined"][0]["ref"]
            artifact["actions"].append(
                {
                    "ref": target,
                    "inputSchema": {"type": "object"},
                    "baseSchemaDigest": schema_digest(declared[target]),
                }
            )
        elif attack == 3:  # forged digest
            artifact["actions"].append(
                {"ref": ref, "inputSchema": {}, "baseSchemaDigest": "0" * 64}
            )
        elif attack == 4:  # stale digest of a schema that is not live
            stale = {**schema, "description": "older"}
            artifact["quarantined"].append({"ref": ref, "baseSchemaDigest": schema_digest(stale)})
        elif attack == 5:  # ledger overflow (refused by the guard above 256)
            artifact["applied"] = [
                {"kind": "enum-tighten", "ref": f"r{i}", "detail": "d"}
                for i in range(rng.choice([200, 256, 257, 1000]))
            ]
        elif attack == 6:  # a wrong version or a missing field
            artifact[rng.choice(["version", "metricVersion", "gate"])] = rng.choice(
                [2, 0, True, None]
            )
        else:  # an honest, proven tightening (must be adopted)
            for prop in schema.get("properties", {}).values():
                if isinstance(prop, dict) and len(prop.get("enum", [])) > 1:
                    prop["enum"] = prop["enum"][:1]
            artifact["actions"].append(
                {"ref": ref, "inputSchema": schema, "baseSchemaDigest": digest}
            )
    return artifact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifacts", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    live = json.loads((DEMO / "surface.json").read_text(encoding="utf-8"))
    local = local_artifact()
    calls = probes(live)
    before = {
        i for i, (ref, call) in enumerate(calls) if validate_call(ref, call, live, local).accepted
    }
    counts = {
        "crafted artifacts": 0,
        "refused by the artifact guard": 0,
        "imports merged": 0,
        "overlays refused as widenings": 0,
        "overlays dropped (digest)": 0,
        "quarantines dropped (digest)": 0,
        "entries adopted": 0,
        "widenings": 0,
    }
    for _ in range(args.artifacts):
        counts["crafted artifacts"] += 1
        incoming = parse_compiled_surface_artifact(craft(rng, live, local))
        if incoming is None:
            counts["refused by the artifact guard"] += 1
            continue
        filtered, refused = without_widening_overlays(incoming, live)
        merged = merge_compiled_surfaces(local, filtered, live)
        counts["imports merged"] += 1
        counts["overlays refused as widenings"] += refused
        counts["overlays dropped (digest)"] += merged["droppedOverlays"]
        counts["quarantines dropped (digest)"] += merged["droppedQuarantines"]
        counts["entries adopted"] += (
            len(merged["file"]["actions"])
            + len(merged["file"]["quarantined"])
            - len(local["actions"])
            - len(local["quarantined"])
        )
        after = {
            i
            for i, (ref, call) in enumerate(calls)
            if validate_call(ref, call, live, merged["file"]).accepted
        }
        counts["widenings"] += len(after - before)
    title = f"Federation under attack: {args.artifacts} crafted artifacts"
    print(f"**{title}, {len(calls)} probe calls each**\n")
    print("| outcome | count |\n| --- | ---: |")
    for key, value in counts.items():
        print(f"| {key} | {value} |")


if __name__ == "__main__":
    main()
