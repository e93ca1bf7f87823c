"""Properties of the ratchet, the no-increase assertion and the certification report."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_entropy.core.canonical import file_text
from pytest_entropy.core.certify import CHECK_IDS, CheckResult
from pytest_entropy.run.certification import CheckOutcome, build_report
from pytest_entropy.testing import strategies as es
from pytest_entropy.testing.assertions import assert_no_entropy_increase, compare_surfaces
from pytest_entropy.testing.ratchet import baseline_text, check_baseline, tracked_values


@given(es.surface_pairs())
def test_a_tightening_never_raises_entropy(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    before, after = pair
    comparison = assert_no_entropy_increase(before, after)
    assert comparison.after_total <= comparison.before_total
    # The other way round is a loosening: caught whenever the total moved at all.
    if comparison.before_total - comparison.after_total > 1e-6:
        assert compare_surfaces(after, before).rose


@settings(max_examples=30)
@given(es.surface_pairs(), st.lists(es.traces(), max_size=3))
def test_with_sessions_a_tightening_keeps_the_static_score(
    pair: tuple[dict[str, Any], dict[str, Any]], traces: list[dict[str, Any]]
) -> None:
    before, after = pair
    comparison = compare_surfaces(before, after, traces)
    assert comparison.before_report is not None and comparison.after_report is not None
    assert comparison.after_report.static_score <= comparison.before_report.static_score


@settings(max_examples=30)  # each example writes a file under the lock, with fsync
@given(es.surface_pairs())
def test_the_ratchet_holds_for_a_tightening(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    before, after = pair
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "entropy-baseline.json"
        assert check_baseline(path, "s", before).status == "created"
        result = check_baseline(path, "s", after, ci=True)
        assert result.passed
        assert result.status in ("unchanged", "lowered")


@settings(max_examples=25)
@given(st.lists(es.surfaces(), min_size=1, max_size=4), st.randoms())
def test_the_baseline_file_does_not_depend_on_insertion_order(
    surfaces: list[dict[str, Any]], rng: random.Random
) -> None:
    entries = {f"test-{i}": tracked_values(s).to_json() for i, s in enumerate(surfaces)}
    names = list(entries)
    rng.shuffle(names)
    assert baseline_text({name: entries[name] for name in names}) == baseline_text(entries)


@given(st.permutations(list(CHECK_IDS)), st.lists(st.booleans(), min_size=20, max_size=20))
def test_the_report_is_assembled_in_the_spec_order(order: list[str], passed: list[bool]) -> None:
    verdicts = dict(zip(CHECK_IDS, passed, strict=True))
    outcomes = [CheckOutcome(CheckResult(i, verdicts[i], "e")) for i in order]
    report = build_report({}, outcomes, CHECK_IDS)
    canonical = build_report({}, sorted(outcomes, key=lambda o: CHECK_IDS.index(o.result.id)),
                             CHECK_IDS)  # fmt: skip
    assert file_text(report) == file_text(canonical)
    assert report["evaluation"]["failed"] == [i for i in CHECK_IDS if not verdicts[i]]
    assert report["evaluation"]["passed"] is all(passed)
