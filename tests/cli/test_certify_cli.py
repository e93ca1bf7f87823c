"""``pytest-entropy certify``, ``trial`` and ``measure --baseline`` in-process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.certify import CHECK_IDS

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SESSIONS = str(DEMO / "sessions")
SURFACE = str(DEMO / "surface.json")
FIXTURES = json.loads(
    (Path(__file__).resolve().parents[2] / "corpora" / "certification" / "fixtures.json").read_text(
        encoding="utf-8"
    )
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _split(out: str) -> tuple[list[str], Any]:
    summary, _, report = out.partition("\n\n")
    return summary.splitlines(), json.loads(report)


def test_certify_prints_summary_then_the_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "report.json"
    code, out, err = run(capsys, "certify", "--report", str(target))
    assert (code, err) == (0, "")
    lines, report = _split(out)
    assert lines[0] == "Entropy certification (metric v2)"
    assert lines[1] == "  converged: score 0.21875 · static freedom 3.5"
    assert lines[-1] == "  PASS"
    assert [line[4:] for line in lines if line.startswith("  ✓ ")] == list(CHECK_IDS)
    assert report["kind"] == "pi-fabric.entropy-certification"
    assert target.read_text() == out.partition("\n\n")[2]


def test_certify_corpus_mode_errors_are_failed_checks_exit_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = run(capsys, "certify", "--sessions", str(tmp_path / "none"))
    assert code == 1
    lines, report = _split(out)
    assert lines[-2:] == [f"  ✗ corpus-mode — sessions directory not found: {tmp_path / 'none'}",
                          "  FAIL"]  # fmt: skip
    assert report["evaluation"]["failed"] == ["corpus-mode"]
    code, out, _ = run(capsys, "certify", "--surface", SURFACE)
    assert code == 1
    assert "  ✗ corpus-mode — --surface requires --sessions" in out


def test_certify_corpus_and_trial(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    compiled = tmp_path / "compiled.json"
    assert main(["compile", "--sessions", SESSIONS, "--surface", SURFACE, "--out",
                 str(compiled)]) == 0  # fmt: skip
    capsys.readouterr()
    code, out, _ = run(capsys, "certify", "--sessions", SESSIONS, "--surface", SURFACE,
                       "--trial", "--artifact", str(compiled))  # fmt: skip
    assert code == 0
    lines, report = _split(out)
    assert "  corpus: 34 operations · score 0.406227 · rejections/1k 96.774194" in lines
    assert any(line.startswith("  surface: 7 actions · freedom 18.136988") for line in lines)
    assert any(line.startswith("  trial: clean · score 0.406227 → 0.393515") for line in lines)
    # The spec's sections, then the user's corpus checks (issue 29), in their own section.
    assert list(report) == ["kind", "version", "metricVersion", "fixtures", "corpus", "surface",
                            "trial", "evaluation", "corpusChecks", "checks"]  # fmt: skip


def test_certify_trial_without_sessions_warns(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "certify", "--trial", "--format", "json")
    assert code == 0
    assert err == "warning: --trial needs --sessions; no trial ran (spec §14 #13)\n"
    assert len(json.loads(out)["evaluation"]["checks"]) == 20


def test_certify_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "certify", "--format", "markdown")
    assert code == 0
    assert out.startswith("## Entropy certification (metric v2): PASS\n")
    assert "| `trial-audit-replay` | ✓ pass |" in out


def test_certify_reports_a_crash_as_the_spec_says(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import pytest_entropy.run.certification as certification

    def explode(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(certification.Certification, "report", explode)
    code, out, err = run(capsys, "certify")
    assert (code, out) == (1, "")
    assert err == "Entropy certification failed to execute: boom\n"


# ---------------------------------------------------------------------------- trial


def _trial_files(tmp_path: Path, formats: list[str]) -> tuple[str, str, str]:
    trial = FIXTURES["trial"]
    ops = [
        {"type": "call", "sequence": i, **op}
        for i, op in enumerate(trial["traces"][0]["operations"])
    ]
    envelope = {
        "kind": "pi-fabric.execution", "version": 1, "outcome": "succeeded",
        "phases": ["trial"], "operations": ops,
        "counts": {"droppedValues": 0, "truncatedValues": 0, "redactedValues": 0,
                   "droppedOperations": 0},
    }  # fmt: skip
    audits = [{"ref": "mcp.render", "args": {"format": value}} for value in formats]
    line = {
        "type": "message",
        "message": {"role": "toolResult", "toolName": "fabric_exec",
                    "details": {"trace": envelope, "audits": audits}},
    }  # fmt: skip
    session = tmp_path / "s.jsonl"
    session.write_text(json.dumps(line, separators=(",", ":")) + "\n")
    surface = tmp_path / "surface.json"
    surface.write_text(json.dumps(trial["live"]))
    artifact = tmp_path / "compiled.json"
    artifact.write_text(json.dumps(trial["artifact"]))
    return str(session), str(surface), str(artifact)


def test_trial_json_is_the_trial_object_and_costs_exit_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    session, surface, artifact = _trial_files(tmp_path, ["pdf", "docx", "html"])
    code, out, _ = run(capsys, "trial", "--sessions", session, "--surface", surface,
                       "--artifact", artifact, "--json")  # fmt: skip
    assert code == 1
    trial = json.loads(out)
    assert list(trial) == ["verdict", "declaredScore", "effectiveScore", "delta", "totals",
                           "divergences"]  # fmt: skip
    assert trial["totals"] == {"operations": 3, "bothAccept": 2, "bothReject": 0,
                               "tighteningCost": 1, "typedFailureWin": 0, "quarantineWin": 0,
                               "quarantineCost": 0}  # fmt: skip
    assert trial["divergences"] == [
        {"ref": "mcp.render", "trialClass": "tightening-cost", "count": 1}
    ]
    code, out, _ = run(capsys, "trial", "--sessions", session, "--surface", surface,
                       "--artifact", artifact)  # fmt: skip
    assert code == 1
    assert out.splitlines()[0].startswith("trial: costly · score ")
    assert "FAIL: 1 held-out successful calls rejected by the compiled schema" in out


def test_trial_reads_the_state_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    session, surface, artifact = _trial_files(tmp_path, ["pdf", "html"])
    state = tmp_path / "state"
    state.mkdir()
    # No artifact: the trial replays against an empty overlay (issue 14), writing nothing.
    code, out, _ = run(capsys, "trial", "--sessions", session, "--surface", surface,
                       "--state-dir", str(state), "--json")  # fmt: skip
    assert code == 0
    assert json.loads(out)["verdict"] == "no-evidence"
    assert json.loads(out)["delta"] == 0
    code, out, _ = run(capsys, "trial", "--sessions", session, "--surface", surface,
                       "--state-dir", str(state))  # fmt: skip
    assert code == 0
    assert out.startswith("trial: no-evidence · ")
    assert f"no compiled artifact at {state / 'compiled.json'}" in out
    assert list(state.iterdir()) == []
    (state / "compiled.json").write_text("{ nope")
    code, _, err = run(capsys, "trial", "--sessions", session, "--surface", surface,
                       "--state-dir", str(state))  # fmt: skip
    assert code == 2
    assert "compiled surface is malformed JSON" in err
    (state / "compiled.json").write_text(Path(artifact).read_text())
    code, out, _ = run(capsys, "trial", "--sessions", session, "--surface", surface,
                       "--state-dir", str(state), "--json")  # fmt: skip
    assert code == 0
    assert json.loads(out)["verdict"] == "clean"


# ------------------------------------------------------------------ measure --baseline


def test_measure_baseline_life_cycle(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    baseline = str(tmp_path / "entropy-baseline.json")
    monkeypatch.setenv("CI", "true")
    code, _, err = run(capsys, "measure", "--sessions", SESSIONS, "--baseline", baseline, "--json")
    assert code == 1
    assert "CI never creates one" in err
    monkeypatch.setenv("CI", "0")
    code, out, _ = run(capsys, "measure", "--sessions", SESSIONS, "--baseline", baseline)
    assert code == 0
    assert "entropy baseline created: 'corpus'" in out
    monkeypatch.setenv("CI", "true")
    code, out, err = run(capsys, "measure", "--sessions", SESSIONS, "--surface", SURFACE,
                         "--baseline", baseline, "--json")  # fmt: skip
    assert code == 1
    json.loads(out)  # stdout stays machine-readable; the verdict went to stderr
    assert "entropy rose above the baseline 'corpus'" in err
    assert "run with --update-baseline" in err
    code, _, _ = run(capsys, "measure", "--sessions", SESSIONS, "--surface", SURFACE,
                     "--baseline", baseline, "--update-baseline")  # fmt: skip
    assert code == 0
    code, out, _ = run(capsys, "measure", "--sessions", SESSIONS, "--baseline", baseline)
    assert code == 0
    assert "the baseline can be lowered (run with --update-baseline)" in out


def test_update_baseline_needs_a_baseline(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "measure", "--sessions", SESSIONS, "--update-baseline")
    assert code == 2
    assert "--update-baseline needs --baseline FILE" in err


def test_certify_output_format_and_the_old_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    for output_format in ("json", "markdown", "text"):
        code, new, _ = run(capsys, "certify", "--output-format", output_format)
        assert code == 0
        code, old, _ = run(capsys, "certify", "--format", output_format)
        assert code == 0
        assert new == old
    assert new.startswith("Entropy certification (metric v2)\n")
    # --output-format wins over the deprecated spelling.
    code, out, _ = run(capsys, "certify", "--format", "markdown", "--output-format", "json")
    assert (code, json.loads(out)["kind"]) == (0, "pi-fabric.entropy-certification")
    code, helped, _ = run(capsys, "certify", "--help")
    assert code == 0
    helped = " ".join(helped.split())
    assert "--output-format {text,markdown,json}" in helped
    assert "Deprecated: text, markdown and json here still select the output format" in helped


def test_certify_format_is_the_session_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, default, _ = run(capsys, "certify", "--sessions", SESSIONS, "--output-format", "json")
    assert code == 0
    code, native, _ = run(
        capsys, "certify", "--sessions", SESSIONS, "--format", "fabric", "--output-format", "json"
    )
    assert (code, native) == (0, default)

    from pytest_entropy.ingest import registry
    from tests import toy_format

    corpus = tmp_path / "toy"
    corpus.mkdir()
    (corpus / "one.toy").write_text('TOYCALLS\nsearch\t{"q": "a"}\tok\nfetch\t{"id": 1}\terror\n')
    registry.register_session_format(toy_format.FORMAT)
    try:
        code, out, _ = run(
            capsys,
            "certify",
            "--sessions",
            str(corpus),
            "--format",
            "toy",
            "--output-format",
            "json",
        )
    finally:
        registry.unregister_session_format("toy")
    assert code == 0
    totals = json.loads(out)["corpus"]["totals"]
    assert (totals["operations"], totals["failed"]) == (2, 1)


def test_trial_text_rounds_the_raw_delta_for_reading(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    state = str(tmp_path / "state")
    common = ["--sessions", SESSIONS, "--surface", SURFACE, "--state-dir", state]
    code, _, err = run(capsys, "compile", *common, "--write")
    assert code == 0, err
    code, out, _ = run(capsys, "trial", *common, "--json")
    assert (code, json.loads(out)["delta"]) == (0, -0.012712000000000001)  # exact, as before
    code, out, _ = run(capsys, "trial", *common)
    assert code == 0
    assert out.splitlines()[0] == (
        "trial: clean · score 0.406227 → 0.393515 (delta -0.012712) · wins 0 · costs 0"
    )


def test_a_trial_delta_too_small_for_six_decimals_still_shows() -> None:
    from pytest_entropy.cli.commands.trial import _delta_text

    assert [_delta_text(value) for value in (0.0, -1e-9, 0.0078125, -0.10169399999999995)] == [
        "0.000000",
        "-1.00e-9",
        "0.007813",
        "-0.101694",
    ]
