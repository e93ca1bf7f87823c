"""Every primitive conformance vector of the spec (vectors/primitives.json), exactly."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_entropy.core.canonical import canonical_json
from pytest_entropy.core.fingerprint import (
    shannon_entropy_bits,
    shape_signature,
    signature_distance,
    static_freedom,
    surface_freedom_report,
    trend_from_scores,
)
from pytest_entropy.core.inputs import entropy_repair_rows, live_surface_snapshot
from pytest_entropy.core.jscompat import (
    compare_code_units,
    js_to_fixed,
    json_number_text,
    round_metric,
    sort_code_units,
    value_key,
)
from tests.vectors import cases_of, ids, number_input, same_float, strict_json


def _cases(fn: str) -> Any:
    found = cases_of("primitives", fn)
    assert found, fn
    return pytest.mark.parametrize("case", found, ids=ids(found))


@_cases("roundMetric")
def test_round_metric(case: dict[str, Any]) -> None:
    got = round_metric(number_input(case))
    assert same_float(got, number_input(case, "expected"))


@_cases("jsNumberToString")
def test_js_number_text(case: dict[str, Any]) -> None:
    assert json_number_text(number_input(case)) == case["expected"]


FINITE_NUMBER_TEXTS = [
    c for c in cases_of("primitives", "jsNumberToString") if not c.get("nonFinite")
]


@pytest.mark.parametrize("case", FINITE_NUMBER_TEXTS, ids=ids(FINITE_NUMBER_TEXTS))
def test_js_number_text_of_python_parsed_input(case: dict[str, Any]) -> None:
    # JSON text parsed by Python keeps big integers exact; formatting must still follow the
    # double JavaScript would hold (spec pitfall 7).
    value = strict_json(case["inputText"])
    assert json_number_text(value) == case["expected"]


@_cases("formatEntropyMetric")
def test_to_fixed_six(case: dict[str, Any]) -> None:
    assert js_to_fixed(number_input(case), 6) == case["expected"]


@_cases("compareCodeUnits")
def test_compare_code_units(case: dict[str, Any]) -> None:
    assert compare_code_units(*case["input"]) == case["expected"]


@_cases("sortCodeUnits")
def test_sort_code_units(case: dict[str, Any]) -> None:
    assert sort_code_units(case["input"]) == case["expected"]


@_cases("canonicalKeyOrder")
def test_canonical_key_order(case: dict[str, Any]) -> None:
    text = canonical_json(dict.fromkeys(case["input"], 0))
    assert list(json.loads(text)) == case["expected"]


@_cases("shapeSignature")
def test_shape_signature(case: dict[str, Any]) -> None:
    assert shape_signature(number_input(case)) == case["expected"]


@_cases("signatureDistance")
def test_signature_distance(case: dict[str, Any]) -> None:
    got = signature_distance(*case["input"])
    assert same_float(got, float(number_input(case, "expected")))


@_cases("shannonEntropyBits")
def test_shannon(case: dict[str, Any]) -> None:
    got = shannon_entropy_bits(number_input(case))
    assert same_float(got, float(number_input(case, "expected")))


@_cases("staticFreedomFromSchema")
def test_static_freedom(case: dict[str, Any]) -> None:
    got = static_freedom(number_input(case))
    assert same_float(got, float(number_input(case, "expected")))


@_cases("trendFromScores")
def test_trend(case: dict[str, Any]) -> None:
    got = trend_from_scores(number_input(case))
    expected = number_input(case, "expected")
    assert got == expected
    assert list(got) == list(expected)  # "first"/"last" are omitted, never null


@_cases("surfaceFreedomReport")
def test_surface_freedom_report(case: dict[str, Any]) -> None:
    assert surface_freedom_report(number_input(case)) == case["expected"]


@_cases("observationIdentity")
def test_observation_identity(case: dict[str, Any]) -> None:
    record = number_input(case)
    identity = record["ref"] + "\u0000" + record["key"] + "\u0000" + value_key(record["value"])
    assert identity == case["expected"]


@_cases("liveSurfaceSnapshot")
def test_live_surface_snapshot(case: dict[str, Any]) -> None:
    assert live_surface_snapshot(case["input"]) == case["expected"]


@_cases("entropyRepairRows")
def test_repair_rows(case: dict[str, Any]) -> None:
    assert [row.to_json() for row in entropy_repair_rows(case["input"])] == case["expected"]
