"""Every compiler-side conformance vector (vectors/compiler.json): §5-§11 exactly."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest

from pytest_entropy.core.artifact import (
    apply_compiled_surface,
    compiled_surface_effect_changed,
    effective_schema_for,
    is_quarantined_ref,
    merge_compiled_surfaces,
    parse_compiled_surface_artifact,
    quarantined_ref_names,
    serialize_artifact,
)
from pytest_entropy.core.canonical import canonical_json, file_text, stable_json_hash
from pytest_entropy.core.compiler import compile_entropy_surface, replay_successful_calls
from pytest_entropy.core.gate import apply_proposals_to_surface, evaluate_gate
from pytest_entropy.core.meter import measure, report_hash
from pytest_entropy.core.notices import format_compile_notice, format_review_notice
from pytest_entropy.core.pool import (
    merge_observation_window,
    observation_window_digest,
    parse_observation_pool,
    pool_to_value_observations,
)
from pytest_entropy.core.proposals import (
    entropy_review_key,
    entropy_review_signals,
    format_review_signal,
    propose_entropy_reductions,
)
from pytest_entropy.core.trial import run_entropy_trial
from tests.vectors import bits, cases_of, ids, same_float, strict_json


def _cases(kind: str) -> Any:
    found = cases_of("compiler", kind, key="kind")
    assert found, kind
    return pytest.mark.parametrize("case", found, ids=ids(found))


def _parse_text(text: str | None) -> tuple[bool, Any]:
    """(parsed?, value) as the reference's JSON.parse would see a file text."""
    if text is None:
        return False, None
    try:
        return True, strict_json(text)
    except ValueError:
        return True, ValueError


@_cases("proposeEntropyReductions")
def test_propose(case: dict[str, Any]) -> None:
    given = case["input"]
    expected = case["expected"]
    report = measure(given["traces"], given.get("surface"), given.get("repairs"))
    assert report_hash(report) == expected["reportHash"]
    proposals = propose_entropy_reductions(
        report,
        given["traces"],
        given.get("surface"),
        given.get("repairs"),
        given.get("valueObservations"),
    )
    assert proposals == expected["proposals"]
    assert canonical_json(proposals) == canonical_json(expected["proposals"])
    review = entropy_review_signals(proposals)
    assert review == expected["reviewSignals"]
    assert [format_review_signal(signal) for signal in review] == expected["reviewSignalTexts"]
    assert entropy_review_key(review) == expected["reviewKey"]


@_cases("applyProposalsToSurface")
def test_apply_proposals(case: dict[str, Any]) -> None:
    surface = case["input"]["surface"]
    before = json.dumps(surface)
    result = apply_proposals_to_surface(surface, case["input"]["proposals"])
    assert result == case["expected"]["surface"]
    assert (json.dumps(surface) == before) is case["expected"]["inputUnchanged"]


@_cases("evaluateGate")
def test_gate(case: dict[str, Any]) -> None:
    assert evaluate_gate(case["input"]["before"], case["input"]["after"]) == case["expected"]


@_cases("compileEntropySurface")
def test_compile(case: dict[str, Any]) -> None:
    given = copy.deepcopy(case["input"])
    snapshot = json.dumps(given)
    outcome = compile_entropy_surface(
        given["traces"],
        given["surface"],
        given.get("repairs"),
        given.get("valueObservations"),
        given.get("auditCalls"),
        given.get("artifact"),
        given.get("catalogDigest"),
    )
    expected = case["expected"]
    assert outcome.to_json() == expected["outcome"]
    assert canonical_json(outcome.to_json()) == canonical_json(expected["outcome"])
    assert report_hash(outcome.report) == expected["reportHash"]
    if "afterHash" in expected:
        assert outcome.after is not None
        assert report_hash(outcome.after) == expected["afterHash"]
    if "artifactFileText" in expected:
        assert outcome.artifact is not None
        text = serialize_artifact(outcome.artifact)
        assert text == expected["artifactFileText"]
        assert hashlib.sha256(text.encode()).hexdigest() == expected["artifactFileSha256"]
        assert stable_json_hash(outcome.artifact) == expected["artifactHash"]
        changed = compiled_surface_effect_changed(given.get("artifact"), outcome.artifact)
        assert changed is expected["effectChanged"]
    if expected.get("artifactIsInput"):
        assert outcome.artifact is given["artifact"]
    assert json.dumps(given) == snapshot  # inputs are never mutated


@_cases("serializeArtifact")
def test_serialize_artifact(case: dict[str, Any]) -> None:
    artifact = case["input"]["artifact"]
    expected = case["expected"]
    text = serialize_artifact(artifact)
    assert text == expected["fileText"]
    assert len(text.encode()) == expected["fileBytes"]
    assert hashlib.sha256(text.encode()).hexdigest() == expected["fileSha256"]
    assert stable_json_hash(artifact) == expected["artifactHash"]
    assert (
        canonical_json(expected["evidenceDigestInput"]) == expected["evidenceDigestCanonicalJson"]
    )
    assert stable_json_hash(expected["evidenceDigestInput"]) == expected["evidenceDigest"]


@_cases("applyCompiledSurface")
def test_apply_compiled_surface(case: dict[str, Any]) -> None:
    live = case["input"]["live"]
    before = json.dumps(case["input"])
    result = apply_compiled_surface(live, case["input"]["artifact"])
    assert result == case["expected"]["surface"]
    assert (result is live) is case["expected"]["returnsLiveObject"]
    assert json.dumps(case["input"]) == before


@_cases("effectiveSchemaFor")
def test_effective_schema(case: dict[str, Any]) -> None:
    given = case["input"]
    assert (
        effective_schema_for(given["ref"], given["liveSchema"], given["artifact"])
        == case["expected"]
    )


@_cases("isQuarantinedRef")
def test_is_quarantined(case: dict[str, Any]) -> None:
    given = case["input"]
    assert (
        is_quarantined_ref(given["ref"], given["liveSchema"], given["artifact"]) is case["expected"]
    )


@_cases("quarantinedRefNames")
def test_quarantined_names(case: dict[str, Any]) -> None:
    assert quarantined_ref_names(case["input"]["artifact"]) == set(case["expected"])


@_cases("compiledSurfaceEffectChanged")
def test_effect_changed(case: dict[str, Any]) -> None:
    given = case["input"]
    assert compiled_surface_effect_changed(given["before"], given["after"]) is case["expected"]


@_cases("replaySuccessfulCalls")
def test_replay(case: dict[str, Any]) -> None:
    given = case["input"]
    violations = replay_successful_calls(
        given["candidate"],
        given["before"],
        given["traces"],
        given["touched"],
        given.get("auditCalls"),
    )
    assert violations == case["expected"]


@_cases("parseCompiledSurfaceArtifact")
def test_parse_artifact(case: dict[str, Any]) -> None:
    _, value = _parse_text(case["input"]["valueText"])
    parsed = parse_compiled_surface_artifact(value)
    assert parsed == case["expected"]
    if parsed is not None:
        # The normalised artifact re-serialises in the canonical key order.
        assert list(parsed) == [
            "version",
            "metricVersion",
            "actions",
            "quarantined",
            "applied",
            "gate",
            "evidenceDigest",
        ]


def _load(text: str | None, parser: Any, label: str) -> dict[str, Any]:
    """What the store's load returns for a file text (the I/O-free part)."""
    present, value = _parse_text(text)
    if not present:
        return {}
    if value is ValueError:
        return {"error": f"{label} is malformed JSON"}
    parsed = parser(value)
    if parsed is None:
        return {"error": f"{label} is invalid"}
    return {"file": parsed}


@_cases("loadCompiledSurface")
def test_load_compiled_surface(case: dict[str, Any]) -> None:
    result = _load(case["input"]["fileText"], parse_compiled_surface_artifact, "compiled surface")
    assert result == case["expected"]


@_cases("loadObservationPool")
def test_load_observation_pool(case: dict[str, Any]) -> None:
    result = _load(case["input"]["fileText"], parse_observation_pool, "observation pool")
    assert result == case["expected"]


@_cases("observationWindowDigest")
def test_window_digest(case: dict[str, Any]) -> None:
    assert observation_window_digest(case["input"]["observations"]) == case["expected"]


UNLOADABLE = (
    "pool:empty-key-unloadable",
    "pool:nul-in-ref-unloadable",
    "pool:padded-key-trimmed-on-load",
)


@_cases("mergeObservationWindow")
def test_merge_observation_window(case: dict[str, Any]) -> None:
    given = case["input"]
    expected = case["expected"]
    loaded = _load(given["poolText"], parse_observation_pool, "observation pool")
    pool = loaded.get("file")
    # Reference mode reproduces the reference byte for byte, defects included.
    merged = merge_observation_window(pool, given["windows"], drop_unloadable=False)
    assert file_text(merged.file) == expected["fileText"]
    assert merged.merged_sessions == expected["mergedSessions"]
    assert merged.skipped_sessions == expected["skippedSessions"]
    assert [o.to_json() for o in pool_to_value_observations(merged.file)] == expected[
        "valueObservations"
    ]
    assert [
        observation_window_digest(window["observations"]) for window in given["windows"]
    ] == expected["windowDigests"]
    reload = _load(expected["fileText"], parse_observation_pool, "observation pool")
    if "reload" in expected:
        assert reload == expected["reload"]
    else:
        assert reload == {"file": strict_json(expected["fileText"])}
    # The product's default never writes a pool that does not load back as written.
    safe = merge_observation_window(pool, given["windows"])
    assert parse_observation_pool(strict_json(file_text(safe.file))) == safe.file
    if case["id"] not in UNLOADABLE:
        assert safe.file == merged.file
        assert safe.dropped_observations == 0
    else:
        assert safe.dropped_observations == 1


@_cases("runEntropyTrial")
def test_trial(case: dict[str, Any]) -> None:
    given = case["input"]
    trial = run_entropy_trial(
        given["traces"], given["live"], given.get("artifact"), given.get("auditCalls")
    )
    expected = dict(case["expected"])
    delta_bits = expected.pop("deltaBits", None)
    result = trial.to_json()
    if delta_bits is not None:
        assert same_float(result["delta"], bits(delta_bits))
        expected["delta"] = result["delta"]
    assert result == expected
    assert list(result) == [
        "verdict",
        "declaredScore",
        "effectiveScore",
        "delta",
        "totals",
        "divergences",
    ]


@_cases("mergeCompiledSurfaces")
def test_merge_compiled_surfaces(case: dict[str, Any]) -> None:
    given = case["input"]
    merged = merge_compiled_surfaces(given["local"], given["incoming"], given["live"])
    assert file_text(merged["file"]) == case["expected"]["fileText"]
    assert merged["droppedOverlays"] == case["expected"]["droppedOverlays"]
    assert merged["droppedQuarantines"] == case["expected"]["droppedQuarantines"]


@_cases("formatEntropyCompileNotice")
def test_compile_notice(case: dict[str, Any]) -> None:
    given = case["input"]
    notice = format_compile_notice(
        given["proposals"],
        given["beforeScore"],
        given["afterScore"],
        given["elapsedMs"],
        given.get("reviewCount", 0),
    )
    assert notice == case["expected"]


@_cases("formatEntropyReviewSignal")
def test_review_signal_text(case: dict[str, Any]) -> None:
    assert format_review_signal(case["input"]["proposal"]) == case["expected"]


@_cases("formatEntropyReviewNotice")
def test_review_notice(case: dict[str, Any]) -> None:
    assert format_review_notice(case["input"]["proposals"]) == case["expected"]


@_cases("entropyReviewKey")
def test_review_key(case: dict[str, Any]) -> None:
    assert entropy_review_key(case["input"]["proposals"]) == case["expected"]


def test_every_compiler_vector_kind_is_covered() -> None:
    kinds = {case["kind"] for case in cases_of("compiler")}
    tested = {
        "proposeEntropyReductions", "applyProposalsToSurface", "evaluateGate",
        "compileEntropySurface", "serializeArtifact", "applyCompiledSurface",
        "effectiveSchemaFor", "isQuarantinedRef", "quarantinedRefNames",
        "compiledSurfaceEffectChanged", "replaySuccessfulCalls", "parseCompiledSurfaceArtifact",
        "loadCompiledSurface", "loadObservationPool", "observationWindowDigest",
        "mergeObservationWindow", "runEntropyTrial", "mergeCompiledSurfaces",
        "formatEntropyCompileNotice", "formatEntropyReviewSignal", "formatEntropyReviewNotice",
        "entropyReviewKey",
    }  # fmt: skip
    assert kinds == tested
    assert len(cases_of("compiler")) == 261
