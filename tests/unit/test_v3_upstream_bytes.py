"""Our metric v3 against the bytes the upstream's own implementation produced.

Each case under ``tests/data/v3-upstream/`` holds a synthetic corpus (native trace lines), a
surface and the upstream's outputs for them (``upstream.json``, made by running the
upstream's v3 modules under node with ``tests/data/v3_upstream.mjs``; see its header and
``tests/data/v3_upstream_cases.py``). The test runs our CLI with ``--metric-version 3``
(measure, propose, compile twice, compile with a pool, trial with and without the artifact,
pool, import) and our API on the same inputs and compares report hashes, the sha256 of each
object's compact JSON (so nothing depends on how Python re-serialises a number) and the bytes
of compiled.json, the pool file and the imported artifact.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy import measure, report_hash
from pytest_entropy.core.canonical import file_text, js_stringify, stable_json_hash
from pytest_entropy.core.enforce import normalize_arguments, validate_call
from pytest_entropy.core.status import surface_hash
from pytest_entropy.core.v3.artifact import merge_compiled_surfaces, parse_compiled_surface_artifact
from pytest_entropy.core.v3.compiler import compile_entropy_surface_v3
from pytest_entropy.core.v3.trial import run_entropy_trial_v3
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.surfaces import load_repairs, load_surface
from pytest_entropy.sources.scan import read_file_evidence
from tests.v3_upstream_support import (
    assert_matches_upstream,
    our_artifact_outputs,
    our_outputs,
    run_cli,
    sha_compact,
    sha_text,
)

DATA = Path(__file__).parent.parent / "data" / "v3-upstream"
CASES = sorted(path.name for path in DATA.iterdir() if (path / "upstream.json").is_file())


def _upstream(name: str) -> dict[str, Any]:
    return json.loads((DATA / name / "upstream.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return {name: our_outputs(DATA / name, tmp_path_factory.mktemp(name)) for name in CASES}


def test_the_cases_are_there() -> None:
    assert {"demo", "witnesses", "open-surface", "bench", "bench-many-files"} <= set(CASES)


@pytest.mark.parametrize("name", CASES)
def test_every_artifact_equals_the_upstreams(name: str, outputs: dict[str, Any]) -> None:
    ours, upstream = outputs[name], _upstream(name)
    # Readable differences first (the objects are in the golden), then the bytes.
    assert ours["report"] == upstream["report"]
    assert ours["proposals"] == upstream["proposals"]
    assert ours["proposalsFromTraces"] == upstream["proposalsFromTraces"]
    assert sha_compact(ours["proposalsFromTraces"]) == sha_compact(upstream["proposalsFromTraces"])
    assert ours["compile"] == upstream["compile"]
    assert ours["compileWithPool"]["proposals"] == upstream["compileWithPool"]["proposals"]
    assert ours["trialBare"] == upstream["trialBare"]
    if upstream["compiledJson"] is not None:
        assert ours["trial"] == upstream["trial"]
        assert ours["compiledJson"] == upstream["compiledJson"]
        assert ours["mergeJson"] is not None
    if upstream["poolNamedException"] is None:
        assert ours["poolFile"] == upstream["pool"]["file"]
        assert ours["poolJson"] == upstream["poolJson"]
    else:
        # audits the pool's loader would refuse are left out (a named exception); the
        # upstream's pool of the same windows without them is compared by hash below
        assert ours["poolFile"] != upstream["pool"]["file"]
    assert_matches_upstream(ours, upstream)


@pytest.mark.parametrize("name", CASES)
def test_exit_statuses(name: str, outputs: dict[str, Any]) -> None:
    ours, upstream = outputs[name], _upstream(name)
    assert ours["exit"]["propose"] == ours["exit"]["pool"] == 0
    assert ours["exit"]["compile"] == ours["exit"]["compileWithPool"] == 0
    if upstream["compiledJson"] is not None:
        assert ours["exit"]["trial"] == (1 if upstream["trial"]["verdict"] == "costly" else 0)
        assert ours["exit"]["import"] == 0


@pytest.mark.parametrize("name", CASES)
def test_api_measure_compile_and_trial(name: str) -> None:
    """The Python API on records read in v3 (``measure``, the v3 compile and trial, the
    merge) gives the same bytes as the upstream."""
    upstream = _upstream(name)
    spec = json.loads((DATA / name / "spec.json").read_text(encoding="utf-8"))
    surface = load_surface(DATA / name / spec["surface"])
    repairs = load_repairs(DATA / name / spec["repairs"]) if spec.get("repairs") else None
    options = ReadOptions("fabric", metric_version=3)
    traces, observations, audits = [], [], []
    for file in spec["sessions"]:
        evidence = read_file_evidence(DATA / name / file, options=options)
        assert evidence is not None
        traces += evidence.traces
        observations += evidence.value_observations
        audits += evidence.audit_calls
    report = measure(traces, surface, repairs, surface_hash(surface), metric_version=3)
    assert report_hash(report) == upstream["reportHash"]
    assert sha_compact(report.to_json()) == upstream["compact"]["report"]
    outcome = compile_entropy_surface_v3(traces, surface, repairs, observations, audits)
    assert sha_compact(outcome.to_json()) == upstream["compact"]["compile"]
    artifact = outcome.artifact
    if upstream["compiledJson"] is None:
        assert artifact is None
        return
    assert artifact is not None and file_text(artifact) == upstream["compiledJson"]
    trial = run_entropy_trial_v3(traces, surface, artifact, audits)
    assert sha_compact(trial.to_json()) == upstream["compact"]["trial"]
    merged = merge_compiled_surfaces(None, artifact, surface)
    assert sha_compact(merged) == upstream["compact"]["merge"]


ARTIFACT_CASES = [
    (name, artifact)
    for name in CASES
    for artifact in json.loads((DATA / name / "spec.json").read_text(encoding="utf-8")).get(
        "artifacts", []
    )
]


@pytest.mark.parametrize(("name", "artifact"), ARTIFACT_CASES)
def test_incumbent_and_peer_artifacts(name: str, artifact: str, tmp_path: Path) -> None:
    """Forged, stale, legacy, padded and invalid artifacts: as the incumbent of a compile, in
    a trial and imported, each gives the upstream's status, bytes and counts."""
    upstream = _upstream(name)["artifacts"][artifact]
    ours = our_artifact_outputs(DATA / name, tmp_path, artifact)
    if upstream["invalid"]:
        # the upstream's loader refuses the file: every command stops with an input error
        assert ours["compileExit"] == ours["trialExit"] == 2
        assert ours["mergedEmpty"]["exit"] == ours["mergedLocal"]["exit"] == 2
        assert ours["mergedEmpty"]["text"] is None
        assert ours["exportExit"] == 2 and ours["exported"] is None
        return
    assert ours["exportExit"] == 0
    assert ours["exported"] == upstream["exported"]
    assert ours["compileExit"] == 0
    assert ours["compile"]["status"] == upstream["compileStatus"]
    assert sha_compact(ours["compile"]) == upstream["compile"]
    if upstream["compileStatus"] == "compiled":
        assert ours["compiledJson"] == upstream["compiledJson"]
    assert ours["trial"] == upstream["trial"]
    assert ours["trialExit"] == (1 if upstream["trial"]["verdict"] == "costly" else 0)
    local = _upstream(name)["compiledJson"]
    for label in ("mergedEmpty", "mergedLocal"):
        merged, mine = upstream[label], ours[label]
        assert mine["exit"] == 0
        for key in ("droppedOverlays", "droppedQuarantines", "droppedNormalizations"):
            assert mine["json"][key] == merged[key], (label, key)
        expected = merged["json"]
        if label == "mergedLocal":
            # The upstream's import command is not in the snapshot; ours keeps a version-2
            # state file's bytes when the merge leaves its plans as they are
            # (docs/decisions.md), else it writes the upstream's merged file.
            before = json.loads(local)["normalizations"]
            after = json.loads(expected)["normalizations"]
            if stable_json_hash(before) == stable_json_hash(after):
                expected = local
        assert mine["text"] == expected, label
        assert sha_text(mine["text"]) == sha_text(expected)


def _enforced(name: str, artifact: dict[str, Any]) -> list[dict[str, Any]]:
    """``normalize_arguments`` (what ``validate_call`` executes) on every recorded call of
    the case, in the driver's order: audits, then trace operations of surface refs."""
    spec = json.loads((DATA / name / "spec.json").read_text(encoding="utf-8"))
    surface = load_surface(DATA / name / spec["surface"])
    schemas = {action["ref"]: action["inputSchema"] for action in surface["actions"]}
    options = ReadOptions("fabric", metric_version=3)
    audits: list[Any] = []
    operations: list[Any] = []
    for file in spec["sessions"]:
        evidence = read_file_evidence(DATA / name / file, options=options)
        assert evidence is not None
        audits += [(call.ref, call.args) for call in evidence.audit_calls]
        operations += [(op.ref, op.args) for trace in evidence.traces for op in trace.operations]
    calls = []
    for ref, args in [*audits, *operations]:
        if ref not in schemas:
            continue
        normalized, witness = normalize_arguments(ref, schemas[ref], args, artifact)
        calls.append(
            {"ref": ref, "changed": normalized is not args, "args": normalized, "witness": witness}
        )
        verdict = validate_call(ref, args, surface, artifact, metric_version=3)
        if witness is not None:  # a normal form applies only when the whole call validates
            assert verdict.accepted and verdict.args == normalized and verdict.witness == witness
        else:
            assert verdict.args is None and verdict.witness is None
    return calls


def _assert_enforcement(ours: list[dict[str, Any]], upstream: dict[str, Any]) -> None:
    assert len(ours) == upstream["count"]
    assert sum(call["changed"] for call in ours) == upstream["changed"]
    if upstream["calls"] is not None:
        assert ours == upstream["calls"]
    assert sha_text(js_stringify(ours)) == upstream["sha"]


@pytest.mark.parametrize("name", [name for name in CASES if _upstream(name)["enforcement"]])
def test_enforcement_normalizes_as_the_runtime(name: str) -> None:
    """``validate_call``'s normal forms under the compiled artifact: the upstream runtime's
    arguments and witnesses for every recorded call."""
    upstream = _upstream(name)
    artifact = json.loads(upstream["compiledJson"])
    _assert_enforcement(_enforced(name, artifact), upstream["enforcement"])


@pytest.mark.parametrize(("name", "artifact"), ARTIFACT_CASES)
def test_enforcement_under_incumbent_artifacts(name: str, artifact: str) -> None:
    """Stored stale plans refuse, missing plans are derived, legacy files derive."""
    upstream = _upstream(name)["artifacts"][artifact]
    if upstream["invalid"]:
        pytest.skip("the upstream's loader refuses this artifact")
    value = parse_compiled_surface_artifact(
        json.loads((DATA / name / artifact).read_text(encoding="utf-8"))
    )
    assert value is not None
    _assert_enforcement(_enforced(name, value), upstream["enforcement"])


def test_worker_processes_give_the_upstreams_bytes(tmp_path: Path) -> None:
    """Read by two worker processes, the 20-file corpus still gives the upstream's report,
    pool file and trial."""
    name = "bench-many-files"
    upstream = _upstream(name)
    spec = json.loads((DATA / name / "spec.json").read_text(encoding="utf-8"))
    common = [
        "--sessions", str(DATA / name / "sessions"), "--metric-version", "3",
        "--format", "fabric", "--engine", "processes", "--jobs", "2", "--no-progress",
    ]  # fmt: skip
    surface = ["--surface", str(DATA / name / spec["surface"])]
    code, measured = run_cli(["measure", *common, *surface, "--json"])
    assert code == 0 and measured["reportHash"] == upstream["reportHash"]
    pool = tmp_path / "pool.json"
    code, _ = run_cli(["pool", *common, "--out", str(pool), "--json"])
    assert code == 0
    value = json.loads(pool.read_text(encoding="utf-8"))
    for session in value["tracked"]:
        session["file"] = Path(session["file"]).name
    assert file_text(value) == upstream["poolJson"]
    code, trial = run_cli(["trial", *common, *surface, "--json"])
    assert code == 0 and sha_compact(trial) == upstream["compact"]["trialBare"]


POOL_STEP_CASES = [
    name
    for name in CASES
    if json.loads((DATA / name / "spec.json").read_text(encoding="utf-8")).get("poolSteps")
]


@pytest.mark.parametrize("name", POOL_STEP_CASES)
def test_pool_runs_one_after_another(name: str, tmp_path: Path) -> None:
    """``pool --pool-in``: a grown file retracts its old counts, a rewritten one replaces
    them, an unchanged one is skipped by digest; each pool file is the upstream's."""
    spec = json.loads((DATA / name / "spec.json").read_text(encoding="utf-8"))
    upstream = _upstream(name)["poolSteps"]
    sessions = tmp_path / "sessions"
    previous: Path | None = None
    for index, (files, expected) in enumerate(zip(spec["poolSteps"], upstream, strict=True)):
        shutil.rmtree(sessions, ignore_errors=True)
        sessions.mkdir()
        for file in files:  # the same names in the same place: a file keeps its identity
            shutil.copyfile(DATA / name / file, sessions / Path(file).name)
        out = tmp_path / f"pool-{index}.json"
        argv = ["pool", "--sessions", str(sessions), "--metric-version", "3", "--format", "fabric"]
        if previous is not None:
            argv += ["--pool-in", str(previous)]
        code, value = run_cli([*argv, "--out", str(out), "--no-progress", "--json"])
        assert code == 0
        assert (value["mergedSessions"], value["skippedSessions"]) == (
            expected["mergedSessions"],
            expected["skippedSessions"],
        )
        pool = json.loads(out.read_text(encoding="utf-8"))
        for session in pool["tracked"]:
            session["file"] = Path(session["file"]).name
        assert file_text(pool) == expected["json"]
        # the next run reads the pool as written, with the names it gave the files
        previous = out
