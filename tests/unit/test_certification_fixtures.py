"""The shipped certification fixtures equal the spec's §13.0 definitions.

``corpora/certification`` was transcribed from the spec's notation; the conformance
vectors were produced by the reference implementation from the same definitions, so every
fixture must equal the inputs of the vector its check cites.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_entropy.core.canonical import schema_digest
from pytest_entropy.run.certification import load_fixtures
from pytest_entropy.sources.resources import corpora_path
from tests.vectors import cases

SHIPPED = json.loads(corpora_path("certification", "fixtures.json").read_text(encoding="utf-8"))


def _case(file: str, case_id: str) -> dict[str, Any]:
    found = [case for case in cases(file) if case["id"] == case_id]
    assert len(found) == 1, case_id
    return found[0]


@pytest.mark.parametrize(
    ("section", "fields", "file", "case_id"),
    [
        ("converged", ("traces", "surface"), "metric", "V2-CV-06"),
        ("wobble", ("traces",), "metric", "V2-CV-07"),
        ("structure", ("traces",), "metric", "V2-CV-16:structure-hl"),
    ],
)
def test_metric_fixtures_match_the_vectors(
    section: str, fields: tuple[str, ...], file: str, case_id: str
) -> None:
    case = _case(file, case_id)
    for field in fields:
        assert SHIPPED[section][field] == case[field], (section, field)


@pytest.mark.parametrize(
    ("section", "fields", "case_id"),
    [
        ("ratchet", {"traces": "traces", "surface": "surface", "repairs": "repairs"},
         "V2-CV-10:compile"),
        ("gateReject", {"traces": "traces", "surface": "surface",
                        "valueObservations": "valueObservations"}, "V2-CV-13"),
        ("closedDomain", {"traces": "traces", "surface": "surface"}, "V2-CV-21"),
        ("pooled", {"windows": "windows"}, "V2-CV-22:merge-once"),
        ("pooled", {"traces": "traces", "surface": "surface"}, "V2-CV-22:pooled-proposal"),
        ("trial", {"live": "live", "artifact": "artifact", "traces": "traces",
                   "auditCalls": "auditCalls"}, "V2-CV-28"),
        ("ingestion", {"annotatedSurface": "surface"}, "V2-CV-17:traces-only"),
    ],
)  # fmt: skip
def test_compiler_fixtures_match_the_vectors(
    section: str, fields: dict[str, str], case_id: str
) -> None:
    given = _case("compiler", case_id)["input"]
    for ours, theirs in fields.items():
        assert SHIPPED[section][ours] == given[theirs], (section, ours)


def test_the_ingestion_corpus_is_the_vector_line_for_line() -> None:
    assert load_fixtures().ingestion_lines == _case("ingestion", "V2-CV-17")["lines"]


def test_the_trial_artifact_is_pinned_to_the_live_schema() -> None:
    trial = SHIPPED["trial"]
    live_schema = trial["live"]["actions"][0]["inputSchema"]
    assert trial["artifact"]["actions"][0]["baseSchemaDigest"] == schema_digest(live_schema)


def test_loading_gives_a_fresh_copy_each_time() -> None:
    first = load_fixtures()
    first.converged_traces.clear()
    assert load_fixtures().converged_traces == SHIPPED["converged"]["traces"]
