"""The v2 check list (spec §12.3): every check passes on the spec's fixtures and goes red
when its input (or, for the purity and determinism checks, the code it guards) is broken."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import pytest_entropy.core.certify.checks as certify_checks
import pytest_entropy.core.certify.fixtures as certify_fixtures
from pytest_entropy.core.certify import (
    CHECK_IDS,
    ArtifactStore,
    CheckResult,
    FixtureRun,
    Fixtures,
    Ports,
    check_by_id,
    run_check,
)
from pytest_entropy.run.certification import default_ports, load_fixtures, temporary_store

SPEC_ORDER = [
    "determinism-double-run",
    "converged-corpus-exact",
    "wobble-math-exact",
    "ratchet-proposals",
    "surface-apply-purity",
    "ratchet-monotone",
    "ratchet-converged",
    "compiler-loop",
    "compiler-converged",
    "compiled-surface-overlay",
    "compiler-gate-reject",
    "compiled-store-roundtrip",
    "score-decomposition",
    "structure-proposals",
    "session-jsonl-ingestion",
    "session-model-attribution",
    "audit-value-observations",
    "closed-domain-guard",
    "pooled-evidence",
    "trial-audit-replay",
]


def _run(
    check_id: str, fixtures: Fixtures | None = None, ports: Ports | None = None
) -> CheckResult:
    run = FixtureRun(fixtures or load_fixtures(), ports or default_ports())
    return run_check(check_by_id(check_id), run)


def test_the_check_list_is_the_spec_table_in_order() -> None:
    assert list(CHECK_IDS) == SPEC_ORDER


@pytest.mark.parametrize("check_id", SPEC_ORDER)
def test_every_check_passes_on_the_spec_fixtures(check_id: str) -> None:
    result = _run(check_id)
    assert result.passed, result.evidence
    assert result.id == check_id
    assert result.to_json() == {"id": check_id, "passed": True, "evidence": result.evidence}


# ------------------------------------------------------------------ breaking the inputs


def op(ref: str, args: dict[str, Any], outcome: str = "succeeded", stage: str | None = None):
    out: dict[str, Any] = {"ref": ref, "args": args, "outcome": outcome}
    if stage is not None:
        out["failureStage"] = stage
    return out


class _Flaky(list[Any]):
    """A corpus that reads differently the second time (an unstable input source)."""

    reads = 0

    def __iter__(self) -> Iterator[Any]:
        type(self).reads += 1
        items = list.__iter__(self)
        return items if type(self).reads % 2 else iter(list(items)[:-1])


def _with(fixtures: Fixtures, **changes: Any) -> Fixtures:
    return dataclasses.replace(fixtures, **changes)


def _ratchet_plus(f: Fixtures, *ops: dict[str, Any]) -> Fixtures:
    traces = copy.deepcopy(f.ratchet_traces)
    traces.append({"operations": list(ops), "taskKey": "ratchet"})
    return _with(f, ratchet_traces=traces)


def _break_determinism(f: Fixtures) -> Fixtures:
    return _with(f, wobble_traces=_Flaky(f.wobble_traces))


def _break_converged(f: Fixtures) -> Fixtures:
    traces = copy.deepcopy(f.converged_traces)
    traces[0]["operations"].append(op("pi.read", {"path": "src/c.ts"}, "failed", "validate"))
    return _with(f, converged_traces=traces)


def _break_wobble(f: Fixtures) -> Fixtures:
    traces = copy.deepcopy(list(f.wobble_traces))
    del traces[2]["operations"][2]  # the churned entryId call
    return _with(f, wobble_traces=traces)


def _break_ratchet_proposals(f: Fixtures) -> Fixtures:
    traces = copy.deepcopy(f.ratchet_traces)
    for operation in traces[1]["operations"]:
        operation["outcome"] = "succeeded"
        operation.pop("failureStage", None)
    return _with(f, ratchet_traces=traces)


def _break_monotone(f: Fixtures) -> Fixtures:
    surface = copy.deepcopy(f.ratchet_surface)
    surface["actions"][2]["inputSchema"]["required"] = []
    return _with(f, ratchet_surface=surface)


def _break_ratchet_converged(f: Fixtures) -> Fixtures:
    # An overloaded ref keeps proposing a (review-only) split in every round.
    puts = [op("mcp.store.put", {"key": "k", "value": "v"}) for _ in range(3)]
    puts += [op("mcp.store.put", {"prefix": "p", "limit": 10}) for _ in range(3)]
    return _ratchet_plus(f, *puts)


def _break_compiler(f: Fixtures) -> Fixtures:
    # A quarantined ref that once succeeded: the replay gate rejects the compile.
    return _ratchet_plus(f, op("mcp.flaky.run", {"mode": "fast"}))


def _break_overlay(f: Fixtures) -> Fixtures:
    surface = copy.deepcopy(f.ratchet_surface)
    surface["actions"].append({"ref": "pi.extra", "inputSchema": {"type": "object"}})
    return _with(f, ratchet_surface=surface)


def _break_gate_reject(f: Fixtures) -> Fixtures:
    case = copy.deepcopy(f.gate_reject)
    case["traces"][0]["operations"][-1]["args"]["format"] = "pdf"
    return _with(f, gate_reject=case)


def _break_decomposition(f: Fixtures) -> Fixtures:
    surface = copy.deepcopy(f.converged_surface)
    surface["actions"][2]["inputSchema"]["properties"]["command"] = {"type": "boolean"}
    return _with(f, converged_surface=surface)


def _break_structure(f: Fixtures) -> Fixtures:
    return _with(f, structure_traces=[f.structure_traces[0], *f.structure_traces[2:]])


def _break_ingestion(f: Fixtures) -> Fixtures:
    return _with(f, ingestion_lines=[line for line in f.ingestion_lines if "entry-2" not in line])


def _break_attribution(f: Fixtures) -> Fixtures:
    lines = [line for line in f.ingestion_lines if "entry-model-1" not in line]
    return _with(f, ingestion_lines=lines)


def _break_audit_values(f: Fixtures) -> Fixtures:
    surface = copy.deepcopy(f.annotated_surface)
    del surface["actions"][0]["inputSchema"]["properties"]["format"]["x-fabric-enum-candidate"]
    return _with(f, annotated_surface=surface)


def _break_closed_domain(f: Fixtures) -> Fixtures:
    case = copy.deepcopy(f.closed_domain)
    schema = case["surface"]["actions"][0]["inputSchema"]
    schema["properties"]["format"] = {"type": "string", "enum": ["html", "pdf", "web"]}
    return _with(f, closed_domain=case)


def _break_pooled(f: Fixtures) -> Fixtures:
    case = copy.deepcopy(f.pooled)
    case["windows"][1]["observations"] = case["windows"][0]["observations"]
    return _with(f, pooled=case)


def _break_trial(f: Fixtures) -> Fixtures:
    case = copy.deepcopy(f.trial)
    case["auditCalls"][1]["args"]["format"] = "pdf"
    return _with(f, trial=case)


BREAKERS: dict[str, Callable[[Fixtures], Fixtures]] = {
    "determinism-double-run": _break_determinism,
    "converged-corpus-exact": _break_converged,
    "wobble-math-exact": _break_wobble,
    "ratchet-proposals": _break_ratchet_proposals,
    "ratchet-monotone": _break_monotone,
    "ratchet-converged": _break_ratchet_converged,
    "compiler-loop": _break_compiler,
    "compiler-converged": _break_compiler,
    "compiled-surface-overlay": _break_overlay,
    "compiler-gate-reject": _break_gate_reject,
    "score-decomposition": _break_decomposition,
    "structure-proposals": _break_structure,
    "session-jsonl-ingestion": _break_ingestion,
    "session-model-attribution": _break_attribution,
    "audit-value-observations": _break_audit_values,
    "closed-domain-guard": _break_closed_domain,
    "pooled-evidence": _break_pooled,
    "trial-audit-replay": _break_trial,
}


@pytest.mark.parametrize("check_id", sorted(BREAKERS))
def test_each_check_goes_red_when_its_fixture_is_broken(check_id: str) -> None:
    result = _run(check_id, BREAKERS[check_id](load_fixtures()))
    assert not result.passed
    assert result.evidence
    assert result.details, "a failure explains itself line by line"


def test_a_broken_fixture_names_expected_and_actual() -> None:
    result = _run("converged-corpus-exact", _break_converged(load_fixtures()))
    assert "score: expected 0.21875, got " in result.evidence


# ------------------------------------------------------- breaking the guarded code


def _patch(monkeypatch: pytest.MonkeyPatch, name: str, value: Any) -> None:
    """Replace ``name`` wherever the certification modules call it."""
    for module in (certify_fixtures, certify_checks):
        if hasattr(module, name):
            monkeypatch.setattr(module, name, value)


def test_surface_apply_purity_catches_a_mutating_rewrite(monkeypatch: pytest.MonkeyPatch) -> None:
    real = (
        getattr(certify_fixtures, "apply_proposals_to_surface", None)
        or certify_checks.apply_proposals_to_surface
    )

    def mutating(surface: Any, proposals: Any) -> Any:
        out = real(surface, proposals)
        surface["actions"][0]["inputSchema"]["properties"]["format"]["enum"].pop()
        return out

    _patch(monkeypatch, "apply_proposals_to_surface", mutating)
    result = _run("surface-apply-purity")
    assert not result.passed
    assert "input surface JSON changed at character" in result.evidence


def test_determinism_catches_a_meter_with_hidden_state(monkeypatch: pytest.MonkeyPatch) -> None:
    real = getattr(certify_fixtures, "measure", None) or certify_checks.measure
    calls = iter(range(1000))

    def stateful(traces: Any, *rest: Any, **options: Any) -> Any:
        return real(traces, catalog_digest=f"run-{next(calls)}")

    _patch(monkeypatch, "measure", stateful)
    result = _run("determinism-double-run")
    assert not result.passed
    assert result.evidence.startswith("hashes ")


def test_compiler_converged_requires_the_same_artifact_object(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = (
        getattr(certify_fixtures, "compile_entropy_surface", None)
        or certify_checks.compile_entropy_surface
    )

    def copying(*args: Any, **kwargs: Any) -> Any:
        outcome = real(*args, **kwargs)
        if outcome.status == "converged" and outcome.artifact is not None:
            return dataclasses.replace(outcome, artifact=copy.deepcopy(outcome.artifact))
        return outcome

    _patch(monkeypatch, "compile_entropy_surface", copying)
    result = _run("compiler-converged")
    assert not result.passed
    assert "expected the same artifact object" in result.evidence


class _LeakyStore:
    """A store that rewrites identical bytes and loads something else."""

    def save(self, artifact: Any) -> bool:
        return True

    def load(self) -> tuple[dict[str, Any] | None, str | None]:
        return {"version": 1}, None


@contextmanager
def _leaky() -> Iterator[ArtifactStore]:
    yield _LeakyStore()


def test_store_roundtrip_catches_a_store_that_always_writes() -> None:
    result = _run("compiled-store-roundtrip", ports=Ports(default_ports().scan_lines, _leaky))
    assert not result.passed
    assert "second save written: expected false, got true" in result.evidence
    assert "JSON-equal" in result.evidence


def test_store_roundtrip_needs_a_store() -> None:
    result = _run("compiled-store-roundtrip", ports=Ports(default_ports().scan_lines))
    assert not result.passed


def test_the_real_store_roundtrip_uses_a_fresh_directory_each_time() -> None:
    with temporary_store() as first, temporary_store() as second:
        assert first.load() == (None, None)
        assert second.load() == (None, None)


def test_a_check_that_raises_is_a_failed_check() -> None:
    broken = _with(load_fixtures(), trial={"traces": []})
    result = _run("trial-audit-replay", broken)
    assert not result.passed
    assert result.evidence.startswith("raised KeyError")


def test_every_check_is_described() -> None:
    for check_id in CHECK_IDS:
        check = check_by_id(check_id)
        assert check.asserts and check.vector.startswith("V2-CV-")
    with pytest.raises(KeyError):
        check_by_id("no-such-check")


def test_checks_that_guard_code_are_broken_above() -> None:
    # Every check is made to fail in this module, by its fixture or by its guarded code.
    guarded = {"surface-apply-purity", "compiled-store-roundtrip"}
    assert set(BREAKERS) | guarded == set(CHECK_IDS)
