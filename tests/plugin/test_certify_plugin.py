"""``pytest --entropy-certify`` through real pytest runs (pytester, mostly in-process)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_entropy.core.certify import CHECK_IDS

pytest_plugins = ("pytester",)

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "corpora" / "demo"


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def test_one_item_per_check_even_without_test_files(pytester: pytest.Pytester) -> None:
    collected = run(pytester, "--entropy-certify", "--collect-only", "-q")
    ids = [line for line in collected.outlines if line.startswith("entropy-certify::")]
    assert ids == [f"entropy-certify::{check_id}" for check_id in CHECK_IDS]
    result = run(pytester, "--entropy-certify")
    result.assert_outcomes(passed=20)
    result.stdout.fnmatch_lines(
        ["*= entropy =*", "entropy certification (metric v2): PASS · 20 of 20 checks passed *"]
    )


def test_the_report_is_complete_and_identical_under_xdist(pytester: pytest.Pytester) -> None:
    serial = run(pytester, "--entropy-certify", "--entropy-json=serial.json")
    serial.assert_outcomes(passed=20)
    parallel = run(
        pytester,
        "-p",
        "xdist",
        "-n",
        "2",
        "--entropy-certify",
        "--entropy-json=parallel.json",
        "--entropy-markdown=summary.md",
    )
    parallel.assert_outcomes(passed=20)
    text = (pytester.path / "parallel.json").read_text()
    assert text == (pytester.path / "serial.json").read_text()
    report = json.loads(text)
    assert list(report) == ["kind", "version", "metricVersion", "fixtures", "evaluation"]
    assert [check["id"] for check in report["evaluation"]["checks"]] == list(CHECK_IDS)
    assert report["evaluation"]["passed"] is True
    markdown = (pytester.path / "summary.md").read_text()
    assert markdown.startswith("## Entropy certification (metric v2): PASS")
    # The CLI writes the very same report.
    from pytest_entropy.cli.app import main

    assert main(["certify", "--format", "json", "--report", "cli.json"]) == 0
    assert (pytester.path / "cli.json").read_text() == text


def _copy_demo(pytester: pytest.Pytester) -> tuple[Path, Path]:
    sessions = pytester.path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    surface = pytester.path / "surface.json"
    shutil.copy(DEMO / "surface.json", surface)
    return sessions, surface


def test_corpus_mode_with_bare_prefixed_and_ini_options(pytester: pytest.Pytester) -> None:
    sessions, surface = _copy_demo(pytester)
    bare = run(pytester, "--entropy-certify", f"--sessions={sessions}", "--surface", str(surface))
    bare.assert_outcomes(passed=26)  # 21 + the 5 corpus checks (issue 29)
    bare.stdout.fnmatch_lines(["  corpus: 34 operations · score 0.406227 · rejections/1k *"])
    prefixed = run(
        pytester, "--entropy-certify", "--entropy-sessions=sessions", "--entropy-json=r.json"
    )
    prefixed.assert_outcomes(passed=24)  # 21 + 3 corpus checks (no surface)
    assert json.loads((pytester.path / "r.json").read_text())["corpus"]["catalogDigest"] == (
        "(sessions)"
    )
    pytester.makeini(
        "[pytest]\nentropy_certify = true\nentropy_sessions = missing\n"
        "entropy_surface = surface.json\n"
    )
    from_ini = run(pytester)
    from_ini.assert_outcomes(passed=20, failed=1)
    from_ini.stdout.fnmatch_lines(["*sessions directory not found: *missing*"])
    assert from_ini.ret == pytest.ExitCode.TESTS_FAILED
    # The command line wins over the ini file.
    run(pytester, f"--entropy-sessions={sessions}").assert_outcomes(passed=26)


def test_prefixed_options_survive_a_clash(pytester: pytest.Pytester) -> None:
    sessions, _surface = _copy_demo(pytester)
    pytester.makeconftest(
        """
        def pytest_addoption(parser):
            parser.addoption("--sessions", action="store_true", help="another plugin's flag")
        """
    )
    result = run(pytester, "--entropy-certify", "--sessions", f"--entropy-sessions={sessions}")
    result.assert_outcomes(passed=24)  # 21 + 3 corpus checks (issue 29)
    assert "same as --entropy-surface" in run(pytester, "--help").stdout.str()


def test_a_failed_check_explains_expected_and_actual(pytester: pytest.Pytester) -> None:
    # Break the converged corpus for this run only (restored at unconfigure).
    pytester.makeconftest(
        """
        import pytest
        import pytest_entropy.run.certification as certification

        patch = pytest.MonkeyPatch()

        def pytest_configure(config):
            real = certification.load_fixtures

            def broken():
                fixtures = real()
                fixtures.converged_traces[0]["operations"].pop()
                return fixtures

            patch.setattr(certification, "load_fixtures", broken)

        def pytest_unconfigure(config):
            patch.undo()
        """
    )
    result = run(pytester, "--entropy-certify", "--entropy-json=r.json")
    result.assert_outcomes(passed=18, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*certification check converged-corpus-exact failed (V2-CV-06: *",
            "*  score: expected 0.21875, got *",
            "*  succeeded: expected 4, got 3*",
        ]
    )
    report = json.loads((pytester.path / "r.json").read_text())
    assert report["evaluation"]["failed"] == ["converged-corpus-exact", "score-decomposition"]
    result.stdout.fnmatch_lines(["  ✗ converged-corpus-exact — score: expected 0.21875*"])


def test_junit_properties_carry_scores_and_hashes(pytester: pytest.Pytester) -> None:
    sessions, _surface = _copy_demo(pytester)
    run(
        pytester, "--entropy-certify", f"--entropy-sessions={sessions}", "--junitxml=out.xml"
    ).assert_outcomes(passed=24)  # 21 + 3 corpus checks (issue 29)
    xml = (pytester.path / "out.xml").read_text()
    assert '<property name="entropy_score" value="0.21875"' in xml
    assert '<property name="entropy_certification" value="True"' in xml
    assert xml.count('name="entropy_report_hash"') >= 4


def test_certify_only_replaces_the_tests_and_ignores_trial_without_sessions(
    pytester: pytest.Pytester,
) -> None:
    # --entropy-certify-only keeps the old behaviour (issue 29: --entropy-certify runs beside).
    pytester.makepyfile(test_mine="def test_mine():\n    raise AssertionError('ran')\n")
    result = run(pytester, "--entropy-certify-only", "--trial", "test_mine.py")
    result.assert_outcomes(passed=20)
    result.stdout.fnmatch_lines(
        [
            "warning: --trial ignored: the trial needs --sessions*",
            "note: --entropy-certify-only runs only the certification; not run: test_mine.py",
        ]
    )


def test_trial_checks_in_corpus_mode(pytester: pytest.Pytester) -> None:
    sessions, surface = _copy_demo(pytester)
    compiled = pytester.path / "compiled.json"
    from pytest_entropy.cli.app import main

    assert main(["compile", "--sessions", str(sessions), "--surface", str(surface),
                 "--out", str(compiled)]) == 0  # fmt: skip
    result = run(
        pytester, "--entropy-certify", f"--sessions={sessions}", f"--surface={surface}",
        "--trial", f"--artifact={compiled}", "-v",
    )  # fmt: skip
    result.assert_outcomes(passed=28)  # 23 + the 5 corpus checks (issue 29)
    result.stdout.fnmatch_lines(["*entropy-certify::trial-costs PASSED*", "  trial: clean *"])
