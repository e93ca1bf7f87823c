"""compile, trial, import and certify under ``--metric-version 3`` from the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.canonical import file_text
from pytest_entropy.core.v3.compiler import compile_entropy_surface_v3
from pytest_entropy.core.v3.trial import run_entropy_trial_v3
from tests.sessions_support import write_native_sessions
from tests.v3_artifact_support import LIVE, certification_traces, legacy_artifact

pytest_plugins = ("pytester",)


def v3(capsys: pytest.CaptureFixture[str], command: str, *argv: str) -> tuple[int, str, str]:
    code = main([command, "--metric-version", "3", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def corpus(tmp_path: Path) -> dict[str, str]:
    traces = [{**trace, "taskKey": "t"} for trace in certification_traces()]
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    write_native_sessions(sessions / "a.jsonl", traces)
    surface = tmp_path / "surface.json"
    surface.write_text(json.dumps(LIVE), encoding="utf-8")
    return {
        "sessions": str(sessions),
        "surface": str(surface),
        "state": str(tmp_path / "state"),
        "traces": json.dumps(traces),
    }


def test_compile_writes_the_version_2_artifact_and_then_converges(
    capsys: pytest.CaptureFixture[str], corpus: dict[str, str]
) -> None:
    inputs = ("--sessions", corpus["sessions"], "--surface", corpus["surface"])
    code, out, err = v3(capsys, "compile", *inputs, "--state-dir", corpus["state"], "--write")
    assert code == 0, err
    assert "entropy: background optimization complete · entropy score unchanged at 0.333333" in out
    written = (Path(corpus["state"]) / "compiled.json").read_text(encoding="utf-8")
    expected = compile_entropy_surface_v3(json.loads(corpus["traces"]), LIVE).artifact
    assert written == file_text(expected)
    code, out, err = v3(capsys, "compile", *inputs, "--state-dir", corpus["state"], "--write")
    assert code == 0, err
    assert "converged: the artifact already holds every normal form" in out
    assert (Path(corpus["state"]) / "compiled.json").read_text(encoding="utf-8") == written


def test_compile_migrates_a_legacy_artifact_that_v2_would_keep(
    capsys: pytest.CaptureFixture[str], corpus: dict[str, str], tmp_path: Path
) -> None:
    legacy = tmp_path / "legacy.json"
    legacy.write_text(file_text(legacy_artifact()), encoding="utf-8")
    inputs = ("--sessions", corpus["sessions"], "--surface", corpus["surface"])
    code, out, err = v3(capsys, "compile", *inputs, "--artifact", str(legacy), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["status"] == "compiled"
    assert (result["artifact"]["version"], result["artifact"]["actions"]) == (2, [])


def test_trial_replays_through_the_normaliser_and_exits_0_when_clean(
    capsys: pytest.CaptureFixture[str], corpus: dict[str, str]
) -> None:
    inputs = ("--sessions", corpus["sessions"], "--surface", corpus["surface"])
    assert v3(capsys, "compile", *inputs, "--state-dir", corpus["state"], "--write")[0] == 0
    code, out, err = v3(capsys, "trial", *inputs, "--state-dir", corpus["state"], "--json")
    assert code == 0, err
    traces = json.loads(corpus["traces"])
    artifact = compile_entropy_surface_v3(traces, LIVE).artifact
    audits = [{"ref": op["ref"], "args": op["args"]} for op in traces[0]["operations"]]
    assert json.loads(out) == run_entropy_trial_v3(traces, LIVE, artifact, audits).to_json()
    code, out, _ = v3(capsys, "trial", *inputs, "--state-dir", corpus["state"])
    assert out.startswith("trial: clean · representation wins 1 · historical score unchanged")


def test_import_keeps_proven_plans_and_drops_legacy_restrictions(
    capsys: pytest.CaptureFixture[str], corpus: dict[str, str], tmp_path: Path
) -> None:
    artifact = compile_entropy_surface_v3([], LIVE).artifact
    assert artifact is not None
    forged = json.loads(json.dumps(artifact))
    forged["normalizations"][0]["rules"].pop()
    peers = {}
    for name, value in (("legacy", legacy_artifact()), ("v3", artifact), ("forged", forged)):
        peers[name] = tmp_path / f"{name}.json"
        peers[name].write_text(file_text(value), encoding="utf-8")
    state = Path(corpus["state"])
    argv = ("--surface", corpus["surface"], "--state-dir", corpus["state"], "--json")
    # A peer's legacy restrictions are dropped and counted: nothing of them is adopted.
    code, out, err = v3(capsys, "import", str(peers["legacy"]), *argv)
    assert code == 0, err
    result: dict[str, Any] = json.loads(out)
    assert (result["droppedOverlays"], result["droppedQuarantines"]) == (1, 1)
    assert (result["written"], result["normalizations"]) == (True, 0)
    code, out, err = v3(capsys, "import", str(peers["v3"]), *argv)
    assert code == 0, err
    result = json.loads(out)
    assert (result["written"], result["normalizations"], result["adoptedNormalizations"]) == (
        True,
        1,
        1,
    )
    on_disk = json.loads((state / "compiled.json").read_text(encoding="utf-8"))
    assert on_disk["version"] == 2 and on_disk["normalizations"] == artifact["normalizations"]
    # A forged plan proves nothing: dropped, counted, and the file keeps its bytes.
    before = (state / "compiled.json").read_bytes()
    code, out, err = v3(capsys, "import", str(peers["forged"]), *argv)
    assert code == 0, err
    result = json.loads(out)
    assert (result["written"], result["droppedNormalizations"]) == (False, 1)
    assert (state / "compiled.json").read_bytes() == before
    # The directory now holds v3 state: a v2 import into it is refused (exit 2).
    code = main(["import", str(peers["legacy"]), *argv[:-1]])
    assert code == 2
    assert "metric v3 state" in capsys.readouterr().err


def test_a_v2_command_refuses_a_version_2_artifact_with_exit_2(
    capsys: pytest.CaptureFixture[str], corpus: dict[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "v3.json"
    path.write_text(file_text(compile_entropy_surface_v3([], LIVE).artifact), encoding="utf-8")
    inputs = ("--sessions", corpus["sessions"], "--surface", corpus["surface"])
    code = main(["trial", *inputs, "--artifact", str(path)])
    assert code == 2
    assert "compiled surface is invalid" in capsys.readouterr().err


def test_certify_runs_the_v3_list_and_its_corpus_mode(
    capsys: pytest.CaptureFixture[str], corpus: dict[str, str]
) -> None:
    code, out, err = v3(capsys, "certify", "--output-format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["version"], report["metricVersion"], report["evaluation"]["failed"]) == (
        2,
        3,
        [],
    )
    assert len(report["evaluation"]["checks"]) == 27
    inputs = ("--sessions", corpus["sessions"], "--surface", corpus["surface"])
    assert v3(capsys, "compile", *inputs, "--state-dir", corpus["state"], "--write")[0] == 0
    code, out, err = v3(capsys, "certify", *inputs, "--trial", "--state-dir", corpus["state"])
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "Entropy certification (metric v3; offline normal forms)"
    assert lines[1] == "  corpus: 3 action operations; rejection rate 0.333333"
    assert "  PASS corpus-mode" in lines and "  PASS trial-costs" in lines
    code, out, _ = v3(capsys, "certify", "--artifact", "x.json")
    assert code == 1
    assert "  FAIL artifact-mode — --artifact requires --trial" in out.splitlines()


def test_export_artifact_writes_the_loaded_version_2_file(
    capsys: pytest.CaptureFixture[str], corpus: dict[str, str], tmp_path: Path
) -> None:
    from pytest_entropy.core.v3.artifact import parse_compiled_surface_artifact

    inputs = ("--sessions", corpus["sessions"], "--surface", corpus["surface"])
    assert v3(capsys, "compile", *inputs, "--state-dir", corpus["state"], "--write")[0] == 0
    target = tmp_path / "shared.json"
    code, out, err = v3(
        capsys, "export-artifact", "--state-dir", corpus["state"], "--out", str(target)
    )
    assert code == 0, err
    assert out.startswith("Exported compiled surface (1 normal forms)")
    compiled = json.loads((Path(corpus["state"]) / "compiled.json").read_text(encoding="utf-8"))
    # As upstream's export: the file as its loader returns it (plans right after the version).
    assert target.read_text(encoding="utf-8") == file_text(
        parse_compiled_surface_artifact(compiled)
    )
    assert list(json.loads(target.read_text(encoding="utf-8")))[:2] == ["version", "normalizations"]


def test_watch_once_compiles_normal_forms_and_marks_the_state(
    capsys: pytest.CaptureFixture[str], corpus: dict[str, str]
) -> None:
    argv = ("--sessions", corpus["sessions"], "--surface", corpus["surface"])
    code, out, err = v3(capsys, "watch", *argv, "--state-dir", corpus["state"], "--once")
    assert code == 0, err
    assert out.startswith(
        "entropy: background optimization complete · entropy score unchanged at 0.333333"
    )
    state = Path(corpus["state"])
    expected = compile_entropy_surface_v3(json.loads(corpus["traces"]), LIVE).artifact
    assert (state / "compiled.json").read_text(encoding="utf-8") == file_text(expected)
    assert json.loads((state / "metric-generation.json").read_text()) == {"metricVersion": 3}
    # Nothing new on the next tick: no notice, nothing rewritten.
    code, out, err = v3(capsys, "watch", *argv, "--state-dir", corpus["state"], "--once")
    assert (code, out) == (0, ""), err
    code, _, err = v3(capsys, "watch", *argv, "--state-dir", corpus["state"], "--once", "--partial")
    assert code == 2 and "metric v3 compiles none" in err


def test_pytest_certifies_a_corpus_with_the_v3_list(
    pytester: pytest.Pytester, corpus: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    markdown = pytester.path / "certify.md"
    result = pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        "--entropy-certify-only",
        "--entropy-metric-version=3",
        f"--entropy-sessions={corpus['sessions']}",
        f"--entropy-surface={corpus['surface']}",
        f"--entropy-markdown={markdown}",
    )
    result.assert_outcomes(passed=28)  # the 27 checks, then corpus-mode
    result.stdout.fnmatch_lines(
        ["entropy certification (metric v3): PASS · 28 of 28 checks passed*"]
    )
    assert "corpus-mode" in markdown.read_text(encoding="utf-8")
