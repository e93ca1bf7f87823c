"""Corpus mode, the trial checks and the report of the certification (spec §12.1-§12.2)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.core.canonical import file_text
from pytest_entropy.core.certify import (
    CHECK_IDS,
    NO_AGENT_ARTIFACT,
    CheckResult,
    certification_report,
    markdown_lines,
    summary_lines,
)
from pytest_entropy.core.meter import measure
from pytest_entropy.core.records import Trace
from pytest_entropy.core.status import surface_hash
from pytest_entropy.run.certification import (
    Certification,
    CertificationOptions,
    CheckOutcome,
    _corpus_files,
    _scan_corpus,
    build_report,
)
from pytest_entropy.sources.resources import corpora_path
from tests.vectors import cases

FIXTURES = json.loads(corpora_path("certification", "fixtures.json").read_text(encoding="utf-8"))
TRIAL = FIXTURES["trial"]


def _write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _trace_line(entry: str, operations: list[dict[str, Any]], audits: list[Any]) -> str:
    envelope = {
        "kind": "pi-fabric.execution",
        "version": 1,
        "outcome": "succeeded",
        "phases": ["trial"],
        "operations": [
            {"type": "call", "sequence": index, **operation}
            for index, operation in enumerate(operations)
        ],
        "counts": {
            "droppedValues": 0,
            "truncatedValues": 0,
            "redactedValues": 0,
            "droppedOperations": 0,
        },
    }
    record = {
        "id": entry,
        "type": "message",
        "message": {
            "role": "toolResult",
            "toolCallId": f"call-{entry}",
            "toolName": "fabric_exec",
            "content": [{"type": "text", "text": "ok"}],
            "details": {"success": True, "trace": envelope, "audits": audits},
        },
    }
    return json.dumps(record, separators=(",", ":"))


def _trial_corpus(directory: Path, formats: list[str]) -> tuple[Path, Path]:
    """The V2-CV-28 situation as a session file, its live surface beside it."""
    directory.mkdir(parents=True, exist_ok=True)
    operations = [
        {"ref": op["ref"], "args": op["args"], "outcome": op["outcome"]}
        | ({"failureStage": op["failureStage"]} if "failureStage" in op else {})
        for op in TRIAL["traces"][0]["operations"]
    ]
    audits = [{"ref": "mcp.render", "args": {"format": value}} for value in formats]
    _write_lines(directory / "s.jsonl", [_trace_line("t", operations, audits), ""])
    surface = directory.parent / "surface.json"
    surface.write_text(json.dumps(TRIAL["live"]), encoding="utf-8")
    return directory, surface


def _artifact_file(tmp_path: Path, artifact: Any = None) -> Path:
    path = tmp_path / "artifact.json"
    path.write_text(json.dumps(TRIAL["artifact"] if artifact is None else artifact))
    return path


def _outcome(options: CertificationOptions, check_id: str) -> CheckOutcome:
    return Certification(options).run(check_id)


# ----------------------------------------------------------------------- corpus mode


def test_corpus_mode_is_one_scan_across_files(tmp_path: Path) -> None:
    vector = next(case for case in cases("ingestion") if case["id"] == "V2-CV-19:corpus-mode")
    for entry in vector["files"]:
        _write_lines(tmp_path / entry["file"], entry["lines"])
    evidence = _scan_corpus(_corpus_files(tmp_path))
    expected = vector["corpusMode"]["expectedTraces"]
    assert [trace.to_json() for trace in evidence.traces] == expected
    outcome = _outcome(CertificationOptions(sessions=str(tmp_path)), "corpus-mode")
    assert outcome.result == CheckResult("corpus-mode", True, "files 2 traces 1 operations 2")
    traces = [Trace.from_json(trace) for trace in expected]
    assert outcome.sections == {"corpus": measure(traces, catalog_digest="(sessions)").to_json()}
    assert outcome.sections["corpus"]["byModel"][0]["model"] == "p/m"
    assert dict(outcome.properties)["entropy_score"] == outcome.sections["corpus"]["score"]


def test_corpus_files_are_the_direct_jsonl_in_code_unit_order(tmp_path: Path) -> None:
    for name in ("b.jsonl", "a.jsonl", "\uffff.jsonl", "\U0001f600.jsonl", "c.jsonl.gz", "d.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "e.jsonl").write_text("")
    (tmp_path / "dir.jsonl").mkdir()
    names = [path.name for path in _corpus_files(tmp_path)]
    # U+1F600 is the surrogate pair D83D DE00, which sorts before U+FFFF in UTF-16.
    assert names == ["a.jsonl", "b.jsonl", "\U0001f600.jsonl", "\uffff.jsonl"]


def test_surface_without_sessions_fails_corpus_mode(tmp_path: Path) -> None:
    options = CertificationOptions(surface=str(tmp_path / "s.json"))
    assert options.planned_check_ids()[-1] == "corpus-mode"
    outcome = _outcome(options, "corpus-mode")
    assert outcome.result == CheckResult("corpus-mode", False, "--surface requires --sessions")


def test_missing_sessions_directory_fails_corpus_mode_and_skips_the_trial(tmp_path: Path) -> None:
    options = CertificationOptions(sessions=str(tmp_path / "nope"), trial=True)
    run = Certification(options)
    assert (
        run.run("corpus-mode").result.evidence
        == f"sessions directory not found: {tmp_path / 'nope'}"
    )
    assert run.run("trial-costs").skipped == "corpus mode failed"
    report = run.report()
    assert [check["id"] for check in report["evaluation"]["checks"]][-1] == "corpus-mode"
    assert report["evaluation"]["failed"] == ["corpus-mode"]


def test_an_empty_corpus_fails(tmp_path: Path) -> None:
    outcome = _outcome(CertificationOptions(sessions=str(tmp_path)), "corpus-mode")
    assert outcome.result == CheckResult("corpus-mode", False, "files 0 traces 0 operations 0")


def test_an_invalid_surface_is_a_failed_check_not_a_crash(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 2}')
    outcome = _outcome(
        CertificationOptions(sessions=str(tmp_path), surface=str(bad)), "corpus-mode"
    )
    assert not outcome.result.passed
    assert "surface snapshot must be" in outcome.result.evidence


def test_with_a_surface_the_catalog_is_its_hash_and_a_summary_is_added(tmp_path: Path) -> None:
    sessions, surface = _trial_corpus(tmp_path / "s", ["pdf"])
    outcome = _outcome(
        CertificationOptions(sessions=str(sessions), surface=str(surface)), "corpus-mode"
    )
    assert outcome.result.passed
    assert outcome.sections["corpus"]["catalogDigest"] == surface_hash(TRIAL["live"])
    assert outcome.sections["surface"] == {
        "path": str(surface),
        "actions": 1,
        "freedomTotal": 0.264160,
        "freedomMean": 0.264160,
        "digest": surface_hash(TRIAL["live"]),
    }


# ---------------------------------------------------------------------------- trial


def test_trial_needs_a_surface(tmp_path: Path) -> None:
    options = CertificationOptions(sessions=str(tmp_path), trial=True)
    run = Certification(options)
    assert run.run("trial-mode").result == CheckResult(
        "trial-mode", False, "--trial requires --surface"
    )
    assert run.run("trial-costs").skipped is not None


def test_trial_without_sessions_is_ignored() -> None:
    options = CertificationOptions(trial=True)
    assert options.trial_ignored
    assert options.planned_check_ids() == CHECK_IDS


@pytest.mark.parametrize(
    ("content", "evidence"),
    [(None, "artifact not found: {}"), ("{ nope", "artifact is invalid: {}"),
     ("{}", "artifact is invalid: {}")],
)  # fmt: skip
def test_trial_artifact_errors(tmp_path: Path, content: str | None, evidence: str) -> None:
    sessions, surface = _trial_corpus(tmp_path / "s", ["pdf"])
    artifact = tmp_path / "artifact.json"
    if content is not None:
        artifact.write_text(content)
    options = CertificationOptions(str(sessions), str(surface), trial=True, artifact=str(artifact))
    assert _outcome(options, "trial-mode").result == CheckResult(
        "trial-mode", False, evidence.format(artifact)
    )


def test_trial_from_the_agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sessions, surface = _trial_corpus(tmp_path / "s", ["pdf"])
    agent = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    options = CertificationOptions(str(sessions), str(surface), trial=True)
    assert _outcome(options, "trial-mode").result.evidence == NO_AGENT_ARTIFACT
    compiled = agent / "fabric" / "entropy" / "compiled.json"
    compiled.parent.mkdir(parents=True)
    compiled.write_text("{ nope")
    assert _outcome(options, "trial-mode").result.evidence == "compiled surface is malformed JSON"
    compiled.write_text(json.dumps(TRIAL["artifact"]))
    run = Certification(options)
    assert run.run("trial-mode").result.passed
    assert run.run("trial-costs").result.passed is True


def test_a_tightening_cost_fails_trial_costs(tmp_path: Path) -> None:
    sessions, surface = _trial_corpus(tmp_path / "s", ["pdf", "docx", "html"])
    options = CertificationOptions(
        str(sessions), str(surface), trial=True, artifact=str(_artifact_file(tmp_path))
    )
    run = Certification(options)
    costs = run.run("trial-costs")
    assert costs.result == CheckResult(
        "trial-costs", False, "1 held-out successful calls rejected by the compiled schema"
    )
    trial = costs.sections["trial"]
    assert list(trial) == [
        "verdict", "declaredScore", "effectiveScore", "delta", "totals", "divergences"
    ]  # fmt: skip
    assert trial["verdict"] == "costly"
    assert trial["totals"]["tighteningCost"] == 1
    report = run.report()
    assert report["trial"] == trial
    # The spec's sections, then the user's corpus checks (issue 29), in their own section.
    assert list(report) == [
        "kind", "version", "metricVersion", "fixtures", "corpus", "surface", "trial", "evaluation",
        "corpusChecks", "checks",
    ]  # fmt: skip
    assert report["evaluation"]["failed"] == ["trial-costs"]


def test_a_clean_trial_passes(tmp_path: Path) -> None:
    sessions, surface = _trial_corpus(tmp_path / "s", ["pdf", "html", "pdf"])
    options = CertificationOptions(
        str(sessions), str(surface), trial=True, artifact=str(_artifact_file(tmp_path))
    )
    report = Certification(options).report()
    assert report["evaluation"]["passed"] is True
    assert report["trial"]["verdict"] == "clean"
    assert [check["id"] for check in report["evaluation"]["checks"]][-3:] == [
        "corpus-mode", "trial-mode", "trial-costs"
    ]  # fmt: skip


# --------------------------------------------------------------------------- report


def test_the_report_does_not_depend_on_the_order_outcomes_arrive(tmp_path: Path) -> None:
    sessions, surface = _trial_corpus(tmp_path / "s", ["pdf"])
    options = CertificationOptions(
        str(sessions), str(surface), trial=True, artifact=str(_artifact_file(tmp_path))
    )
    run = Certification(options)
    outcomes = run.run_all()
    shuffled = outcomes[:]
    random.Random(7).shuffle(shuffled)
    # Outcomes that crossed a process boundary as JSON assemble to the same bytes.
    crossed = [CheckOutcome.from_json(json.loads(json.dumps(o.to_json()))) for o in shuffled]
    expected = file_text(run.report(outcomes))
    assert file_text(build_report(run.fixture_summary(), crossed, run.planned_check_ids())) == (
        expected
    )


def test_summary_lines_follow_the_spec_layout() -> None:
    report = certification_report(
        {
            "converged": {"score": 0.21875, "staticFreedom": 3.5},
            "wobble": {"shapeEntropyBits": 0.270426, "failureStageEntropyBits": 0.666667,
                       "churnRate": 0.32, "flowEntropyBits": 0.666667},
            "ratchet": {"beforeScore": 0.323019, "afterScore": 0.304789, "delta": -0.01823,
                        "proposals": [{}, {}]},
        },
        [CheckResult("a", True, "fine"), CheckResult("b", False, "broken")],
        corpus={"score": 0.4, "totals": {"operations": 34, "invocationRejectionsPer1k": 100.0}},
        surface={"actions": 7, "freedomTotal": 18.1, "freedomMean": 2.5,
                 "digest": "883d637c354d0123"},
        trial={"verdict": "costly", "declaredScore": 0.02, "effectiveScore": 0.01,
               "delta": -0.01, "totals": {"typedFailureWin": 1, "quarantineWin": 2,
                                          "tighteningCost": 3, "quarantineCost": 4}},
    )  # fmt: skip
    assert summary_lines(report) == [
        "Entropy certification (metric v2)",
        "  converged: score 0.21875 · static freedom 3.5",
        "  wobble: shape 0.270426 bits · stages 0.666667 · churn 0.32 · flow 0.666667",
        "  ratchet: 0.323019 → 0.304789 (delta -0.01823) · 2 proposals",
        "  corpus: 34 operations · score 0.4 · rejections/1k 100",
        "  surface: 7 actions · freedom 18.1 (mean 2.5) · digest 883d637c354d",
        "  trial: costly · score 0.02 → 0.01 (delta -0.01) · wins 3 · costs 7",
        "  ✓ a",
        "  ✗ b — broken",
        "  FAIL",
    ]
    markdown = markdown_lines(report)
    assert markdown[0] == "## Entropy certification (metric v2): FAIL"
    assert "| `b` | ✗ **fail** | broken |" in markdown
