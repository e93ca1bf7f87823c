"""Generated corpora that make the compiler do everything: tighten, quarantine, reject.

Every corpus is native session files written by the package's own :class:`NativeWriter`
over a fixed surface built to trigger each proposal kind, with the audits stripped from
some traces (so refs are audited in some files and replayed from trace arguments in
others), an empty file, a file with no traces, and one file far larger than the rest.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_entropy.core.records import AuditCall, Trace, ValueObservation
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.writer import ForeignCall, ForeignTrace, NativeWriter
from pytest_entropy.run.corpus import (
    CorpusRead,
    EngineOptions,
    measure_plan,
    read_corpus,
    source_files,
)
from pytest_entropy.sources.scan import read_file_evidence

SURFACE: dict[str, Any] = {
    "version": 1,
    "actions": [
        {
            "ref": "app.render",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "format": {"type": "string", "enum": ["html", "pdf", "png", "svg", "txt"]},
                    "page": {"type": "integer"},
                },
                "required": ["format"],
            },
        },
        {
            "ref": "app.search",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "mode": {"type": "string", "x-fabric-enum-candidate": True},
                    "q": {"type": "string"},
                },
            },
        },
        {
            "ref": "app.flaky",
            "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
        },
        {
            "ref": "app.shaky",
            "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
        },
        {
            "ref": "app.multi",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {}, "c": {"type": "number"}},
            },
        },
        {"ref": "app.open", "inputSchema": {"type": "object"}},
        {"ref": "app.edit", "inputSchema": {"type": "object"}},
        {
            "ref": "app.save",
            "inputSchema": {
                "type": "object",
                "properties": {"target": {"type": "string", "enum": ["disk", "cloud", "tape"]}},
            },
        },
    ],
}

MODELS = ("acme/alpha", "acme/beta", None)


def _call(rng: random.Random, profile: dict[str, float]) -> list[ForeignCall]:
    roll = rng.random()
    if roll < 0.3:
        fmt = "html" if rng.random() < profile["render_bias"] else rng.choice(["pdf", "png"])
        args: dict[str, Any] = {"format": fmt}
        if rng.random() < 0.3:
            args["page"] = rng.randrange(1, 4)
        return [ForeignCall("app.render", args, "succeeded")]
    if roll < 0.45:
        mode = "exact" if rng.random() < 0.7 else rng.choice(["fuzzy", "regex"])
        return [
            ForeignCall("app.search", {"mode": mode, "q": f"q{rng.randrange(50)}"}, "succeeded")
        ]
    if roll < 0.55 and rng.random() < profile["flaky_rate"]:
        ok = rng.random() < profile["flaky_success"]
        stage = None if ok else rng.choice(["validate", "invoke", "guard"])
        name = rng.choice(["app.flaky", "app.shaky"])
        return [ForeignCall(name, {"x": "y"}, "succeeded" if ok else "failed", stage)]
    if roll < 0.7:
        args = rng.choice([{"a": "k"}, {"b": [1], "c": 2}, {"d": True}])
        return [ForeignCall("app.multi", args, "succeeded")]
    calls = [
        ForeignCall("app.open", {"path": "p"}, "succeeded"),
        ForeignCall("app.edit", {"text": "t"}, "succeeded"),
        ForeignCall("app.save", {"target": "disk" if rng.random() < 0.8 else "cloud"}, "succeeded"),
    ]
    if rng.random() < 0.2:
        calls.append(ForeignCall("app.save", {"target": "tape"}, "succeeded"))
    return calls


def _strip_audits(line: bytes) -> bytes:
    record = json.loads(line)
    record["message"]["details"].pop("audits", None)
    return json.dumps(record, separators=(",", ":")).encode()


def session_bytes(rng: random.Random, traces: int, profile: dict[str, float]) -> bytes:
    writer = NativeWriter(ReadOptions(surface=SURFACE), ScanDiagnostics())
    out: list[bytes] = []
    for number in range(traces):
        trace = ForeignTrace(rng.choice(["build", "fix", "verify"]), rng.choice(MODELS))
        for _ in range(rng.randrange(1, 5)):
            trace.calls.extend(_call(rng, profile))
        for line in writer.lines(trace):
            if b'"pi-fabric.execution"' in line and rng.random() < profile["strip_audits"]:
                line = _strip_audits(line)
            out.append(line)
        if number % 7 == 3:
            out.append(b'{"type":"message","message":{"role":"user","content":"hi"}}')
    return b"".join(line + b"\n" for line in out)


def write_corpus(directory: Path, seed: int, *, files: int = 6) -> list[Path]:
    """A generated corpus. The seed picks the profile: ``seed % 4 == 0`` has no flaky tool
    (the enum tightening compiles), ``1`` a flaky tool that sometimes succeeds (the
    quarantine is rejected by its audits), ``2`` one that never succeeds, with no audits at
    all (the quarantine compiles), ``3`` one that sometimes succeeds, with no audits (the
    quarantine is rejected by every successful trace call)."""
    rng = random.Random(seed)
    profile = [
        {"flaky_rate": 0.0, "flaky_success": 0.0, "strip_audits": 0.4},
        {"flaky_rate": 1.0, "flaky_success": rng.choice([0.2, 0.45]), "strip_audits": 0.4},
        {"flaky_rate": 1.0, "flaky_success": 0.0, "strip_audits": 1.0},
        {"flaky_rate": 1.0, "flaky_success": 0.3, "strip_audits": 1.0},
    ][seed % 4]
    profile["render_bias"] = rng.choice([0.55, 0.8, 0.95])
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(files):
        traces = 200 if index == 1 else rng.randrange(3, 12)
        path = directory / f"{index:02d}.jsonl"
        path.write_bytes(session_bytes(rng, traces, profile))
        paths.append(path)
    empty = directory / "90-empty.jsonl"
    empty.write_bytes(b"")
    quiet = directory / "91-no-traces.jsonl"
    quiet.write_bytes(b'{"type":"session","id":"s"}\n')
    broken = directory / "92-broken.jsonl"
    broken.write_bytes(b'{"pi-fabric.execution" nope\n' + session_bytes(rng, 4, profile))
    return [*paths, empty, quiet, broken]


@dataclass(slots=True)
class OnePass:
    """The reference the pipeline is held to: every file read alone, in order, by hand."""

    traces: list[Trace] = field(default_factory=list)
    value_observations: list[ValueObservation] = field(default_factory=list)
    audit_calls: list[AuditCall] = field(default_factory=list)
    windows: list[dict[str, Any]] = field(default_factory=list)


def one_pass(paths: Sequence[Path]) -> OnePass:
    """Each file's evidence by ``read_file_evidence`` and its ``{file, observations}``
    window, without the corpus pipeline."""
    out = OnePass()
    for path in paths:
        evidence = read_file_evidence(path)
        if evidence is None:
            continue
        out.traces.extend(evidence.traces)
        out.value_observations.extend(evidence.value_observations)
        out.audit_calls.extend(evidence.audit_calls)
        out.windows.append(
            {"file": os.path.abspath(path), "observations": evidence.value_observations}
        )
    return out


def measured(
    sources: Sequence[Any], *, options: ReadOptions | None = None, **engine: Any
) -> CorpusRead:
    """The pipeline's measurement of ``sources`` on the engine ``engine`` names."""
    return read_corpus(source_files(sources), measure_plan(options), EngineOptions(**engine))
