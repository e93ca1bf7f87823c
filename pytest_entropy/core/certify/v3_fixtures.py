"""The fixtures of metric v3's certification (notes CV-30), built in code as upstream's are.

One report-render action whose schema licenses every normal-form rule, a trace that spells
a call wrongly, calls it rightly, fails after invocation and navigates once, a legacy
version-1 artifact pinned to that schema, and a small session JSONL for ingestion; the
:class:`V3Run` computes each measurement, compile and trial of them once.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from functools import cached_property
from typing import Any, Final

from pytest_entropy.core.canonical import schema_digest, stable_json_hash
from pytest_entropy.core.certify.fixtures import Ports
from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.records import Report
from pytest_entropy.core.v3.artifact import empty_compiled_surface
from pytest_entropy.core.v3.compiler import V3CompileOutcome, compile_entropy_surface_v3
from pytest_entropy.core.v3.meter import finalize_v3
from pytest_entropy.core.v3.trial import V3TrialReport, run_entropy_trial_v3

__all__ = [
    "AUDIT_SCHEMA",
    "CANONICAL",
    "CERTIFICATION_VERSION_V3",
    "REF",
    "SCHEMA",
    "SPILLED",
    "V3Run",
    "ingestion_lines",
    "measure_v3",
    "same",
    "unguarded_line",
]

CERTIFICATION_VERSION_V3: Final = 2

REF: Final = "mcp.report.render"
SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "outputFormat": {"type": "string", "enum": ["pdf", "html", "rare-format"]},
        "limit": {"type": "integer", "minimum": 1},
        "note": {"type": "string"},
    },
    "required": ["outputFormat", "limit"],
}
CANONICAL: Final[dict[str, Any]] = {"outputFormat": "rare-format", "limit": 2}
SPILLED: Final[dict[str, Any]] = {"output-format": "RARE FORMAT", "limit": "2", "note": None}
AUDIT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"format": {"type": "string", "enum": ["pdf", "html", "rare"]}},
    "required": ["format"],
}

_COUNTS: Final = {
    "droppedValues": 0,
    "truncatedValues": 0,
    "redactedValues": 0,
    "droppedOperations": 0,
}


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _session_line(entry_id: str, trace: Any, audits: Any) -> str:
    details = {"success": True, "trace": trace, "audits": audits, "phases": ["build"]}
    message = {
        "role": "toolResult",
        "toolCallId": f"call-{entry_id}",
        "toolName": "fabric_exec",
        "content": [{"type": "text", "text": "ok"}],
        "details": details,
    }
    return _compact({"id": entry_id, "type": "message", "message": message})


def ingestion_lines() -> list[str]:
    """The ingestion fixture's session lines: a broken line, a user message, two model
    changes and two executions (the second keeps no trace arguments but audits them)."""
    first = {
        "kind": "pi-fabric.execution",
        "version": 1,
        "outcome": "succeeded",
        "phases": ["build"],
        "operations": [
            {"type": "call", "sequence": 0, "ref": "pi.read",
             "args": {"path": "src/a.ts", "limit": 10}, "outcome": "succeeded"},
            {"type": "call", "sequence": 1, "ref": "pi.bash", "args": {"command": "ls"},
             "outcome": "failed", "failureStage": "invoke", "error": "boom"},
        ],
        "counts": _COUNTS,
    }  # fmt: skip
    formats = ["pdf"] * 7 + ["html"]
    render = {
        "kind": "pi-fabric.execution",
        "version": 1,
        "outcome": "succeeded",
        "phases": ["build"],
        "operations": [
            {"type": "call", "sequence": i, "ref": REF, "args": {}, "outcome": "succeeded"}
            for i in range(len(formats))
        ],
        "counts": _COUNTS,
    }
    first_audits = [
        {"ref": "pi.read", "args": {"path": "src/a.ts", "limit": 10}},
        {"ref": "pi.bash", "args": {"command": "ls"}},
    ]
    user = {"role": "user", "content": "hi"}
    return [
        "{ not json",
        _compact({"id": "entry-0", "type": "message", "message": user}),
        _compact({"id": "entry-model-1", "type": "model_change", "provider": "zro",
                  "modelId": "kimi-k3"}),
        _session_line("entry-1", first, first_audits),
        _compact({"id": "entry-model-2", "type": "model_change", "provider": "coralbricks",
                  "modelId": "glm-5.3-fp4"}),
        _session_line("entry-2", render, [{"ref": REF, "args": {"format": f}} for f in formats]),
        "",
    ]  # fmt: skip


def unguarded_line() -> str:
    details = {"audits": [{"ref": REF, "args": {"format": "invented"}}], "trace": {"version": 1}}
    return _compact(
        {"type": "message", "message": {"role": "toolResult", "toolName": "fabric_exec",
                                        "details": details}}
    )  # fmt: skip


def _op(args: Any, outcome: str = "succeeded", stage: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"ref": REF, "args": args, "outcome": outcome}
    if stage is not None:
        out["failureStage"] = stage
    return out


def same(first: Any, second: Any) -> bool:
    """Upstream's ``same``: equal schema digests (the stable hash)."""
    return bool(schema_digest(first) == schema_digest(second))


def measure_v3(
    traces: Sequence[Any], surface: Any = None, catalog_digest: str | None = None
) -> Report:
    """``measureEntropy`` of metric v3 on in-memory traces."""
    state = MeterState(retain_terms=False)
    state.add_traces(traces)
    return finalize_v3(state, surface, None, catalog_digest)


class V3Run:
    """Everything the v3 checks compute, each once on first use."""

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        self.live: dict[str, Any] = {"version": 1, "actions": [{"ref": REF, "inputSchema": SCHEMA}]}
        self.traces: list[dict[str, Any]] = [
            {
                "model": "fixture/model",
                "operations": [
                    _op(SPILLED, "failed", "validate"),
                    _op(CANONICAL),
                    _op(CANONICAL, "failed", "invoke"),
                    {"ref": "fabric.discovery.search", "args": {}, "outcome": "succeeded"},
                ],
            }
        ]
        self.snapshot = stable_json_hash({"traces": self.traces, "surface": self.live})

    @cached_property
    def report(self) -> Report:
        return measure_v3(self.traces, self.live)

    @cached_property
    def repeated(self) -> Report:
        return measure_v3([*self.traces, *self.traces, *self.traces], self.live)

    @cached_property
    def allfail(self) -> Report:
        return measure_v3([{"operations": self.traces[0]["operations"][:1]}])

    @cached_property
    def compiled(self) -> V3CompileOutcome:
        return compile_entropy_surface_v3(self.traces, self.live)

    @property
    def artifact(self) -> dict[str, Any]:
        artifact = self.compiled.artifact
        if artifact is None:
            raise ValueError(f"the fixture compile wrote no artifact ({self.compiled.status})")
        return artifact

    @property
    def plan(self) -> dict[str, Any]:
        plans = self.artifact["normalizations"]
        if not plans:
            raise ValueError("the fixture artifact holds no plan")
        plan: dict[str, Any] = plans[0]
        return plan

    @cached_property
    def legacy(self) -> dict[str, Any]:
        tightened = copy.deepcopy(SCHEMA)
        tightened["properties"]["outputFormat"] = {"type": "string", "enum": ["pdf"]}
        digest = schema_digest(SCHEMA)
        return {
            **empty_compiled_surface(),
            "version": 1,
            "metricVersion": 2,
            "actions": [{"ref": REF, "inputSchema": tightened, "baseSchemaDigest": digest}],
            "quarantined": [{"ref": REF, "baseSchemaDigest": digest}],
        }

    @cached_property
    def ingestion(self) -> Any:
        return self.ports.scan_lines(ingestion_lines())

    @cached_property
    def ingestion_report(self) -> Report:
        return measure_v3(self.ingestion.traces)

    @cached_property
    def trial(self) -> V3TrialReport:
        audits = [{"ref": REF, "args": SPILLED}, {"ref": REF, "args": CANONICAL}]
        return run_entropy_trial_v3(self.traces, self.live, self.artifact, audits)

    def fixtures_summary(self) -> dict[str, Any]:
        """The report's ``fixtures`` section, as upstream writes it."""
        return {
            "metric": self.report.to_json(),
            "allfail": self.allfail.to_json(),
            "compiler": {
                "status": self.compiled.status,
                "normalizations": len(self.artifact["normalizations"]),
            },
            "ingestion": {
                "traces": len(self.ingestion.traces),
                "byModel": [row.to_json() for row in self.ingestion_report.by_model],
            },
            "trial": self.trial.to_json(),
        }
