"""``--metric-version 2|3`` on the commands (issue 30, items 1 and 4): v3 where this build has
it, exit 2 where it has not yet, v2 byte for byte by default, and the state directory's
generation never mixed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.meter import measure
from pytest_entropy.core.proposals import propose_entropy_reductions
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.run.corpus import read_corpus, records_plan, source_files
from pytest_entropy.sources.locate import expand_session_paths
from pytest_entropy.state.generation import GENERATION_FILENAME, state_generation

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SESSIONS = str(DEMO / "sessions")
SURFACE = str(DEMO / "surface.json")
CORPUS = ["--sessions", SESSIONS, "--surface", SURFACE]

pytest_plugins = ("pytester",)


@pytest.fixture(autouse=True)
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "no-agent"))
    for name in ("PYTEST_ENTROPY_METRIC_VERSION", "PYTEST_ENTROPY_STATE_DIR"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def demo_traces(metric_version: int) -> list[Any]:
    surface = json.loads(Path(SURFACE).read_text())
    options = ReadOptions(surface=surface, metric_version=metric_version)
    read = read_corpus(
        source_files(expand_session_paths([SESSIONS], options)), records_plan(options)
    )
    return list(read.records.traces)


def demo_surface() -> dict[str, Any]:
    return json.loads(Path(SURFACE).read_text())  # type: ignore[no-any-return]


# ------------------------------------------------------------------------ measure


def test_measure_v3_is_the_v3_meter_and_v2_stays_the_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, ["measure", *CORPUS, "--metric-version", "3", "--json"])
    assert code == 0
    report = json.loads(out)["report"]
    from pytest_entropy.core.status import surface_hash

    expected = measure(
        demo_traces(3),
        demo_surface(),
        catalog_digest=surface_hash(demo_surface()),
        metric_version=3,
    )
    assert report == expected.to_json()
    assert report["metricVersion"] == 3
    assert report["behavioralScore"] == report["score"]
    default = run(capsys, ["measure", *CORPUS, "--json"])[1]
    explicit = run(capsys, ["measure", *CORPUS, "--metric-version", "2", "--json"])[1]
    assert default == explicit
    assert json.loads(default)["report"]["metricVersion"] == 2
    assert json.loads(default)["report"]["score"] != report["score"]
    text = run(capsys, ["measure", *CORPUS, "--metric-version", "3"])[1]
    assert text.splitlines()[0].startswith(
        f"entropy score {report['score']:.6f} (lower is better; metric v3"
    )


def test_the_generation_comes_from_the_configuration(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.entropy]\nmetric-version = 3\n")
    report = json.loads(run(capsys, ["measure", *CORPUS, "--json"])[1])["report"]
    assert report["metricVersion"] == 3
    # The command line wins over the file; the environment over the file too.
    assert (
        json.loads(run(capsys, ["measure", *CORPUS, "--metric-version", "2", "--json"])[1])[
            "report"
        ]["metricVersion"]
        == 2
    )
    (tmp_path / "pyproject.toml").unlink()
    monkeypatch.setenv("PYTEST_ENTROPY_METRIC_VERSION", "3")
    assert (
        json.loads(run(capsys, ["measure", *CORPUS, "--json"])[1])["report"]["metricVersion"] == 3
    )


@pytest.mark.parametrize("value", ["4", "1", "v3"])
def test_an_unknown_generation_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    code, _, err = run(capsys, ["measure", *CORPUS, "--metric-version", value])
    assert code == 2
    assert "--metric-version" in err


def test_a_configured_unknown_generation_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.entropy]\nmetric-version = 4\n")
    code, _, err = run(capsys, ["measure", *CORPUS])
    assert code == 2
    assert "metric-version" in err


# ------------------------------------------------------------------------ propose


def test_propose_v3_gives_normal_forms_and_review_signals(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, ["propose", *CORPUS, "--metric-version", "3", "--json"])
    assert code == 0
    document = json.loads(out)
    traces = demo_traces(3)
    from pytest_entropy.core.status import surface_hash

    digest = surface_hash(demo_surface())
    report = measure(traces, demo_surface(), catalog_digest=digest, metric_version=3)
    from pytest_entropy.ingest.native import scan_lines

    observations = []
    for path in sorted(Path(SESSIONS).glob("*.jsonl")):
        observations += scan_lines(
            path.read_text().splitlines(), metric_version=3
        ).value_observations
    expected = propose_entropy_reductions(
        report, traces, demo_surface(), value_observations=observations, metric_version=3
    )
    assert document["proposals"] == expected
    kinds = [p["kind"] for p in document["proposals"]]
    assert kinds and set(kinds) <= {
        "normal-form",
        "declare-enum",
        "overload-split",
        "sequence-fuse",
    }
    assert document["reviewSignals"] == [p for p in expected if p["kind"] != "normal-form"]
    text = run(capsys, ["propose", *CORPUS, "--metric-version", "3"])[1]
    normal_forms = kinds.count("normal-form")
    assert f"automatic proposals ({normal_forms}):" in text
    assert "  normal-form pi.read (" in text
    code, _, err = run(capsys, ["propose", *CORPUS, "--metric-version", "3", "--explain"])
    assert code == 2 and "not available yet" in err


# compile, trial, import, watch and certify run under v3: tests/cli/test_v3_cli.py.


# ------------------------------------------------------------- state generation


def test_generations_never_mix_in_one_state_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    v3 = tmp_path / "v3"
    code, _, err = run(
        capsys,
        [
            "pool",
            "--sessions",
            SESSIONS,
            "--out",
            str(v3 / "observation-pool.json"),
            "--metric-version",
            "3",
        ],
    )
    assert code == 0, err
    assert json.loads((v3 / GENERATION_FILENAME).read_text()) == {"metricVersion": 3}
    assert state_generation(v3) == 3
    # A v2 command on that directory explains and exits 2, writing nothing.
    before = sorted(p.name for p in v3.iterdir())
    code, _, err = run(capsys, ["compile", *CORPUS, "--state-dir", str(v3), "--write"])
    assert code == 2
    assert "holds metric v3 state" in err and "--metric-version 3" in err
    assert sorted(p.name for p in v3.iterdir()) == before
    # v3 status reads it and says which generation it shows.
    code, out, err = run(
        capsys, ["status", *CORPUS, "--state-dir", str(v3), "--metric-version", "3", "--json"]
    )
    assert code == 0, err
    document = json.loads(out)
    assert document["metricVersion"] == 3
    assert document["lines"][0].startswith("entropy: metric v3 · ")
    assert document["corpus"]["latest"]["metricVersion"] == 3
    # A v2 state directory (what compile --write leaves) refuses a v3 command the same way.
    v2 = tmp_path / "v2"
    assert run(capsys, ["compile", *CORPUS, "--state-dir", str(v2), "--write"])[0] == 0
    assert state_generation(v2) == 2 and not (v2 / GENERATION_FILENAME).exists()
    code, _, err = run(capsys, ["status", *CORPUS, "--state-dir", str(v2), "--metric-version", "3"])
    assert code == 2 and "holds metric v2 state" in err
    code, _, err = run(
        capsys,
        [
            "pool",
            "--sessions",
            SESSIONS,
            "--out",
            str(v2 / "observation-pool.json"),
            "--metric-version",
            "3",
        ],
    )
    assert code == 2 and "holds metric v2 state" in err
    # The v2 status of a v2 directory keeps its bytes; its JSON names the generation.
    code, out, _ = run(capsys, ["status", *CORPUS, "--state-dir", str(v2), "--json"])
    assert code == 0 and json.loads(out)["metricVersion"] == 2
    assert json.loads(out)["lines"][0].startswith("entropy: metric v2 · ")


def test_a_damaged_marker_is_an_input_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / GENERATION_FILENAME).write_text('{"metricVersion": 7}')
    code, _, err = run(capsys, ["status", *CORPUS, "--state-dir", str(state)])
    assert code == 2 and GENERATION_FILENAME in err and "damaged" in err


def test_an_upstream_v3_artifact_marks_its_directory(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "compiled.json").write_text(json.dumps({"version": 2, "metricVersion": 3}))
    assert state_generation(state) == 3
    assert state_generation(tmp_path / "fresh") is None


# ------------------------------------------------------------------------ pytest


def test_pytest_gate_measures_with_the_asked_generation(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    sessions = pytester.path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    pytester.makepyfile("def test_ok():\n    pass\n")
    argv = ["-p", "no:cacheprovider", f"--entropy-sessions={sessions}", "--entropy-max-score=0.15"]
    v2 = pytester.runpytest_inprocess(*argv)
    v2.assert_outcomes(passed=1, failed=1)
    v3 = pytester.runpytest_inprocess(*argv, "--entropy-metric-version=3")
    v3.assert_outcomes(passed=2)
    bad = pytester.runpytest_inprocess(*argv, "--entropy-metric-version=4")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    # The v3 certification: one item per check of the upstream's v3 list.
    report = pytester.path / "certify.json"
    certify = pytester.runpytest_inprocess(
        "--entropy-certify-only", "--entropy-metric-version=3", f"--entropy-json={report}"
    )
    certify.assert_outcomes(passed=27)
    document = json.loads(report.read_text(encoding="utf-8"))
    assert (document["version"], document["metricVersion"]) == (2, 3)
    assert [check["id"] for check in document["evaluation"]["checks"]][:2] == [
        "metric-v3-exact",
        "sample-count-invariance",
    ]
    certify.stdout.fnmatch_lines(["*entropy certification (metric v3): PASS · 27 of 27*"])
    v2_only = pytester.runpytest_inprocess(
        "--entropy-certify", "--entropy-metric-version=3", "--entropy-strict"
    )
    assert v2_only.ret == pytest.ExitCode.USAGE_ERROR


def test_the_entropy_meter_fixture_measures_with_the_asked_generation(
    pytester: pytest.Pytester,
) -> None:
    sessions = pytester.path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    pytester.makepyfile(
        "def test_meter(entropy_meter, request):\n"
        "    wanted = int(request.config.getoption('entropy_metric_version') or 2)\n"
        "    report = entropy_meter()\n"
        "    assert report.metric_version == wanted\n"
        "    from pytest_entropy.testing.assertions import traces_of\n"
        "    traces = traces_of(request.config.getoption('entropy_sessions'))\n"
        "    from pytest_entropy import measure\n"
        "    assert report.score == measure(traces, metric_version=wanted).score\n"
    )
    argv = ["-p", "no:cacheprovider", f"--entropy-sessions={sessions}"]
    pytester.runpytest_inprocess(*argv).assert_outcomes(passed=1)
    pytester.runpytest_inprocess(*argv, "--entropy-metric-version=3").assert_outcomes(passed=1)


def test_reports_render_a_v3_score_as_a_rate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    markdown, page = tmp_path / "m.md", tmp_path / "m.html"
    argv = ["measure", *CORPUS, "--markdown", str(markdown), "--html", str(page)]
    assert run(capsys, [*argv, "--metric-version", "3"])[0] == 0
    text = markdown.read_text()
    assert "invocation-rejection rate (metric v3)" in text
    assert "| invocation rejections / action calls |" in text
    assert "static freedom | " not in text.split("### Score decomposition")[1].split("###")[0]
    assert "· metric v3." in text
    html = page.read_text()
    assert "metric v3: score = calls rejected at resolve, prepare or validate" in html
    assert "static diagnostic" in html
    # v2 keeps its decomposition of weighted terms.
    assert run(capsys, argv)[0] == 0
    v2 = markdown.read_text()
    assert "static freedom | " in v2 and "invocation-rejection rate" not in v2
    assert "static share" in page.read_text()
