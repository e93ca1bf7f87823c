"""The v3 certification check list (notes §9.2, CV-30): every check passes on this port."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from pytest_entropy.core.certify.fixtures import Ports
from pytest_entropy.core.certify.v3 import (
    V3_CHECK_IDS,
    V3_CHECKS,
    V3Run,
    run_v3_checks,
    v3_certification_report,
    v3_summary_lines,
)
from pytest_entropy.core.meter import report_hash
from pytest_entropy.run.certification_report import v3_ports

# The upstream's in-memory check ids, in its order (run-entropy.mjs @ a76ea93).
UPSTREAM_IDS = (
    "metric-v3-exact", "sample-count-invariance", "diagnostics-not-objective",
    "allfail-nonzero", "determinism-double-run", "static-compilation",
    "empty-corpus-compilation", "historical-outcomes-unchanged", "compile-determinism",
    "identical-plans-converge", "static-preservation", "canonical-identity",
    "normalization-idempotence", "ambiguity-and-loss-refusal", "unsupported-schema-no-plan",
    "forged-plan-refusal", "schema-drift-refusal", "exact-plan-merge", "legacy-inert-migration",
    "artifact-store-roundtrip", "ingestion-requires-trace-envelope", "ingestion-verbatim-audits",
    "ingestion-model-attribution", "ingestion-value-observations", "ingestion-trial-verbatim",
    "same-normalizer-trial", "no-quarantine-wins",
)  # fmt: skip


@pytest.fixture(scope="module")
def run() -> V3Run:
    return V3Run(v3_ports())


def test_the_list_is_the_upstream_list() -> None:
    assert V3_CHECK_IDS == UPSTREAM_IDS


@pytest.mark.parametrize("check", V3_CHECKS, ids=V3_CHECK_IDS)
def test_every_check_passes(run: V3Run, check: Any) -> None:
    result = check.result(run)
    assert result.passed, result.details
    assert result.evidence == ""


def test_the_fixture_report_has_the_upstream_values(run: V3Run) -> None:
    # notes CV-30 [derived] values of the metric fixture, without a catalogue digest.
    report = run.report
    assert report_hash(report) == "6a7a3d246d20fc066ae3c966e88e8b2e95faea3b7a07d25cf6bf8257abf06875"
    checks = run_v3_checks(run)
    document = v3_certification_report(run.fixtures_summary(), checks)
    assert (document["kind"], document["version"], document["metricVersion"]) == (
        "pi-fabric.entropy-certification", 2, 3
    )  # fmt: skip
    assert document["evaluation"] == {
        "passed": True,
        "checks": [{"id": i, "passed": True, "evidence": ""} for i in UPSTREAM_IDS],
        "failed": [],
    }
    assert document["fixtures"]["compiler"] == {"status": "compiled", "normalizations": 1}
    assert document["fixtures"]["ingestion"]["traces"] == 2
    lines = v3_summary_lines(document)
    assert lines[0] == "Entropy certification (metric v3; offline normal forms)"
    assert lines[1] == "  PASS metric-v3-exact" and lines[-1] == "  PASS"


class _BrokenStore:
    def save(self, artifact: Any) -> bool:
        return True

    def load(self) -> tuple[dict[str, Any] | None, str | None]:
        return {"version": 2}, None


@contextmanager
def _broken() -> Iterator[Any]:
    yield _BrokenStore()


def test_a_store_that_loses_the_artifact_fails_the_roundtrip() -> None:
    ports = v3_ports()
    broken = V3Run(Ports(ports.scan_lines, _broken))
    check = next(c for c in V3_CHECKS if c.id == "artifact-store-roundtrip")
    assert not check.result(broken).passed
    assert not check.result(V3Run(Ports(ports.scan_lines))).passed


def test_a_scanner_that_keeps_unguarded_audits_fails_the_envelope_check() -> None:
    from pytest_entropy.core.records import AuditCall

    class _Leaky:
        traces: tuple[Any, ...] = ()
        value_observations: tuple[Any, ...] = ()
        audit_calls = (AuditCall("mcp.report.render", {"format": "invented"}),)

    run = V3Run(Ports(lambda lines: _Leaky()))
    check = next(c for c in V3_CHECKS if c.id == "ingestion-requires-trace-envelope")
    result = check.result(run)
    summary = v3_summary_lines(v3_certification_report({}, [result]))
    assert not result.passed and summary[-2:] == [
        "  FAIL ingestion-requires-trace-envelope — ", "  FAIL"
    ]  # fmt: skip
