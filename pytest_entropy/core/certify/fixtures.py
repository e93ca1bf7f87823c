"""The certification fixtures, the ports a check needs, and one run over them (spec §13.0)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

from pytest_entropy.core.canonical import js_stringify
from pytest_entropy.core.compiler import CompileOutcome, compile_entropy_surface
from pytest_entropy.core.gate import apply_proposals_to_surface, evaluate_gate
from pytest_entropy.core.meter import measure
from pytest_entropy.core.proposals import Proposal
from pytest_entropy.core.proposals import propose_entropy_reductions as propose
from pytest_entropy.core.records import AuditCall, Report, Trace, ValueObservation

CERTIFICATION_KIND = "pi-fabric.entropy-certification"
CERTIFICATION_VERSION = 1
FIXTURES_KIND = "pytest-entropy.certification-fixtures"

# Evidence strings of §12.1, shared by the CLI and the plugin.
SURFACE_REQUIRES_SESSIONS = "--surface requires --sessions"
TRIAL_REQUIRES_SURFACE = "--trial requires --surface"
NO_AGENT_ARTIFACT = "no compiled surface in the agent dir (pass --artifact <path>)"


def sessions_not_found(directory: str) -> str:
    """The ``corpus-mode`` evidence for a missing sessions directory."""
    return f"sessions directory not found: {directory}"


def trial_mode_failure(reason: str) -> CheckResult:
    """The ``trial-mode`` check failing with one of the §12.1 reasons."""
    return CheckResult("trial-mode", False, reason)


# ------------------------------------------------------------------------------ records


@dataclass(frozen=True, slots=True)
class CheckResult:
    """``{id, passed, evidence}``; ``details`` (one line per mismatch) is not serialised."""

    id: str
    passed: bool
    evidence: str
    details: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "passed": self.passed, "evidence": self.evidence}

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> CheckResult:
        return cls(str(value["id"]), bool(value["passed"]), str(value["evidence"]))


class SessionScan(Protocol):
    """What one scan over session lines yields (``ingest.native.ScanRecords``)."""

    @property
    def traces(self) -> Sequence[Trace]: ...

    @property
    def value_observations(self) -> Sequence[ValueObservation]: ...

    @property
    def audit_calls(self) -> Sequence[AuditCall]: ...


LineScanner = Callable[[Sequence[str]], SessionScan]


class ArtifactStore(Protocol):
    """A ``compiled.json`` store in a temporary agent directory (spec §1.8)."""

    def save(self, artifact: Mapping[str, Any]) -> bool:
        """Save under the lock; ``True`` when bytes were written."""
        ...

    def load(self) -> tuple[dict[str, Any] | None, str | None]:
        """``(file, error)``: ``(None, None)`` when there is no file."""
        ...


@dataclass(frozen=True, slots=True)
class Ports:
    """The effects a check may use, supplied by the runner outside the core."""

    scan_lines: LineScanner
    temporary_store: Callable[[], AbstractContextManager[ArtifactStore]] | None = None


@dataclass(frozen=True, slots=True)
class Fixtures:
    """The spec's shared fixtures (§13.0), as shipped in ``corpora/certification``."""

    converged_traces: list[Any]
    converged_surface: dict[str, Any]
    wobble_traces: Sequence[Any]
    ratchet_traces: list[Any]
    ratchet_surface: dict[str, Any]
    ratchet_repairs: list[Any]
    structure_traces: list[Any]
    ingestion_lines: list[str]
    annotated_surface: dict[str, Any]
    gate_reject: dict[str, Any]
    closed_domain: dict[str, Any]
    pooled: dict[str, Any]
    trial: dict[str, Any]

    @classmethod
    def from_json(cls, data: Mapping[str, Any], ingestion_lines: Sequence[str]) -> Fixtures:
        """Build from ``fixtures.json`` and the lines of its ingestion JSONL file."""
        if data.get("kind") != FIXTURES_KIND or data.get("version") != 1:
            raise ValueError(f"not a certification fixtures file (kind {data.get('kind')!r})")
        return cls(
            converged_traces=data["converged"]["traces"],
            converged_surface=data["converged"]["surface"],
            wobble_traces=data["wobble"]["traces"],
            ratchet_traces=data["ratchet"]["traces"],
            ratchet_surface=data["ratchet"]["surface"],
            ratchet_repairs=data["ratchet"]["repairs"],
            structure_traces=data["structure"]["traces"],
            ingestion_lines=list(ingestion_lines),
            annotated_surface=data["ingestion"]["annotatedSurface"],
            gate_reject=data["gateReject"],
            closed_domain=data["closedDomain"],
            pooled=data["pooled"],
            trial=data["trial"],
        )


# ------------------------------------------------------------------ expectations


def _same(actual: Any, expected: Any) -> bool:
    """Exact equality that keeps JavaScript's types apart (``True`` is not ``1``)."""
    if isinstance(actual, bool) or isinstance(expected, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return actual == expected
    if isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
        return len(actual) == len(expected) and all(map(_same, actual, expected))
    if isinstance(expected, dict) and isinstance(actual, dict):
        return actual.keys() == expected.keys() and all(
            _same(actual[key], expected[key]) for key in expected
        )
    return type(actual) is type(expected) and bool(actual == expected)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return js_stringify(value)
    except (TypeError, ValueError):
        return repr(value)


class Expect:
    """Collects ``label: expected X, got Y`` lines; the evidence is the first mismatches."""

    def __init__(self) -> None:
        self.mismatches: list[str] = []
        self.observed: list[str] = []

    def equal(self, label: str, actual: Any, expected: Any) -> None:
        self.observed.append(f"{label} {_text(actual)}")
        if not _same(actual, expected):
            self.mismatches.append(f"{label}: expected {_text(expected)}, got {_text(actual)}")

    def true(self, label: str, condition: bool, actual: Any = None) -> None:
        shown = "" if actual is None else f" (got {_text(actual)})"
        self.observed.append(label if condition else f"not {label}")
        if not condition:
            self.mismatches.append(f"expected {label}{shown}")

    def result(self, check_id: str, evidence: str | None = None) -> CheckResult:
        if self.mismatches:
            return CheckResult(check_id, False, "; ".join(self.mismatches), tuple(self.mismatches))
        return CheckResult(check_id, True, evidence or " ".join(self.observed))


def kinds_of(proposals: Sequence[Mapping[str, Any]]) -> list[str]:
    return [str(proposal.get("kind")) for proposal in proposals]


def schema_of(surface: Mapping[str, Any], ref: str) -> Any:
    for action in surface.get("actions") or ():
        if action.get("ref") == ref:
            return action.get("inputSchema")
    return None


def enum_of(surface: Mapping[str, Any], ref: str, key: str) -> Any:
    schema = schema_of(surface, ref)
    if not isinstance(schema, dict):
        return None
    prop = (schema.get("properties") or {}).get(key)
    return prop.get("enum") if isinstance(prop, dict) else None


# ------------------------------------------------------------------------ the run


class FixtureRun:
    """Everything the fixture checks compute, each computed once on first use."""

    def __init__(self, fixtures: Fixtures, ports: Ports) -> None:
        self.fixtures = fixtures
        self.ports = ports

    @cached_property
    def converged(self) -> Report:
        return measure(self.fixtures.converged_traces, self.fixtures.converged_surface)

    @cached_property
    def wobble(self) -> Report:
        return measure(self.fixtures.wobble_traces)

    @cached_property
    def ratchet_before(self) -> Report:
        f = self.fixtures
        return measure(f.ratchet_traces, f.ratchet_surface, f.ratchet_repairs)

    @cached_property
    def ratchet_proposals(self) -> list[Proposal]:
        f = self.fixtures
        return propose(self.ratchet_before, f.ratchet_traces, f.ratchet_surface, f.ratchet_repairs)

    @cached_property
    def ratchet_apply(self) -> tuple[dict[str, Any], str, str]:
        """``(compiled surface, input JSON before, input JSON after)``."""
        surface = self.fixtures.ratchet_surface
        before = js_stringify(surface)
        compiled = apply_proposals_to_surface(surface, self.ratchet_proposals)
        return compiled, before, js_stringify(surface)

    @cached_property
    def ratchet_after(self) -> Report:
        f = self.fixtures
        return measure(f.ratchet_traces, self.ratchet_apply[0], f.ratchet_repairs)

    @cached_property
    def ratchet_gate(self) -> dict[str, Any]:
        return evaluate_gate(self.ratchet_before, self.ratchet_after)

    @cached_property
    def ratchet_round_two(self) -> list[Proposal]:
        f = self.fixtures
        return propose(
            self.ratchet_after, f.ratchet_traces, self.ratchet_apply[0], f.ratchet_repairs
        )

    @cached_property
    def compiled(self) -> CompileOutcome:
        f = self.fixtures
        return compile_entropy_surface(f.ratchet_traces, f.ratchet_surface, f.ratchet_repairs)

    @cached_property
    def ingestion(self) -> SessionScan:
        return self.ports.scan_lines(self.fixtures.ingestion_lines)

    @cached_property
    def ingestion_report(self) -> Report:
        return measure(self.ingestion.traces)

    @cached_property
    def structure_proposals(self) -> list[Proposal]:
        traces = self.fixtures.structure_traces
        return propose(measure(traces), traces)

    # ---- the report's ``fixtures`` section (spec §12.2)

    def summary(self) -> dict[str, Any]:
        """``fixtures``: one entry per corpus; an entry that raises reports its error."""
        sections: dict[str, Callable[[], dict[str, Any]]] = {
            "converged": self._converged_summary,
            "wobble": self._wobble_summary,
            "ratchet": self._ratchet_summary,
            "compiler": self._compiler_summary,
            "structure": lambda: {"proposals": self.structure_proposals},
            "ingestion": self._ingestion_summary,
        }
        out: dict[str, Any] = {}
        for name, build in sections.items():
            try:
                out[name] = build()
            except Exception as error:  # a broken fixture must not hide the other sections
                out[name] = {"error": f"{type(error).__name__}: {error}"}
        return out

    def _converged_summary(self) -> dict[str, Any]:
        report = self.converged
        return {
            "score": report.score,
            "staticFreedom": report.static_freedom,
            "totals": report.totals.to_json(),
        }

    def _wobble_summary(self) -> dict[str, Any]:
        report = self.wobble
        return {
            "score": report.score,
            "shapeEntropyBits": report.shape_entropy_bits,
            "failureStageEntropyBits": report.failure_stage_entropy_bits,
            "churnRate": report.churn_rate,
            "navigationRatio": report.navigation_ratio,
            "flowEntropyBits": report.flow_entropy_bits,
        }

    def _ratchet_summary(self) -> dict[str, Any]:
        gate = self.ratchet_gate
        return {
            "beforeScore": self.ratchet_before.score,
            "afterScore": self.ratchet_after.score,
            "delta": gate["delta"],
            "proposals": self.ratchet_proposals,
            "gate": gate,
        }

    def _compiler_summary(self) -> dict[str, Any]:
        outcome = self.compiled
        return {
            "status": outcome.status,
            "beforeScore": outcome.report.score,
            "afterScore": outcome.after.score if outcome.after is not None else None,
            "applied": (outcome.artifact or {}).get("applied", []),
        }

    def _ingestion_summary(self) -> dict[str, Any]:
        report = self.ingestion_report
        return {
            "traces": len(self.ingestion.traces),
            "operations": report.totals.operations,
            "valueObservations": len(self.ingestion.value_observations),
            "byModel": [row.to_json() for row in report.by_model],
        }
