"""Issue 29: ``pytest --entropy-certify`` runs beside the project's own tests, and checks
the user's corpus (``corpus-health``, ...) in a scope of its own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
OWN_TESTS = """
def test_passes():
    pass

def test_fails():
    raise AssertionError("the project's own failing test")
"""


def _project(pytester: pytest.Pytester) -> tuple[Path, Path]:
    sessions = pytester.path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    surface = pytester.path / "surface.json"
    shutil.copy(DEMO / "surface.json", surface)
    pytester.makepyfile(test_own=OWN_TESTS)
    return sessions, surface


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rA", *args)


def test_certify_runs_beside_the_projects_own_tests(pytester: pytest.Pytester) -> None:
    sessions, surface = _project(pytester)
    argv = ["--entropy-certify", f"--entropy-sessions={sessions}", f"--entropy-surface={surface}"]
    result = _run(pytester, *argv)
    # The two own tests, the spec's 21 checks and the 5 corpus checks.
    result.assert_outcomes(passed=1 + 21 + 5, failed=1)
    out = result.stdout.str()
    for line in (
        "PASSED test_own.py::test_passes",
        "FAILED test_own.py::test_fails",
        "PASSED entropy-certify::corpus-health",
    ):
        assert line in out
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the user's failing test fails the run
    # The spec's summary line stays as it was; the user's checks get a line of their own.
    result.stdout.fnmatch_lines(
        [
            "entropy certification (metric v2): PASS · 21 of 21 checks passed · report *",
            "  your corpus: 5 of 5 checks passed",
        ]
    )
    only = _run(pytester, "--entropy-certify-only", *argv[1:])
    only.assert_outcomes(passed=21 + 5)
    assert "test_own.py" not in only.stdout.str()
    assert only.ret == pytest.ExitCode.OK


def test_certify_only_has_an_ini_twin(pytester: pytest.Pytester) -> None:
    _project(pytester)
    pytester.makeini("[pytest]\nentropy_certify_only = true\n")
    result = _run(pytester)
    result.assert_outcomes(passed=20)
    assert "test_own.py" not in result.stdout.str()


def test_a_damaged_corpus_fails_corpus_health_in_the_run(pytester: pytest.Pytester) -> None:
    sessions, surface = _project(pytester)
    first = sorted(sessions.iterdir())[0]
    data = first.read_bytes()
    first.write_bytes(data[: len(data) * 2 // 3])
    (sessions / "garbage.jsonl").write_bytes(bytes(range(256)) * 8)
    argv = [f"--entropy-sessions={sessions}", f"--entropy-surface={surface}"]
    result = _run(pytester, "--entropy-certify-only", *argv)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*FAILED entropy-certify::corpus-health*"])
    out = result.stdout.str()
    assert "garbage.jsonl" in out and first.name in out
    # --entropy-lenient: reported (xfailed), never gating.
    lenient = _run(pytester, "--entropy-certify-only", "--entropy-lenient", *argv)
    assert "FAILED entropy-certify::corpus-health" not in lenient.stdout.str()
    lenient.stdout.fnmatch_lines(["*XFAIL entropy-certify::corpus-health*"])


def test_share_options_are_checked(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = _run(pytester, "--entropy-certify", "--entropy-holdout=1.5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--entropy-holdout needs a share above 0 and below 1" in (
        result.stderr.str() + result.stdout.str()
    )


def test_junit_names_the_scope(pytester: pytest.Pytester) -> None:
    sessions, surface = _project(pytester)
    argv = [f"--entropy-sessions={sessions}", f"--entropy-surface={surface}"]
    _run(pytester, "--entropy-certify-only", *argv, "--junitxml=out.xml")
    xml = (pytester.path / "out.xml").read_text(encoding="utf-8")
    assert '<property name="entropy_certification" value="True"' in xml
    assert '<property name="entropy_corpus_certification" value="True"' in xml
    assert xml.count('<property name="entropy_scope" value="corpus"') == 5


def test_corpus_checks_cross_from_xdist_workers(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    sessions, surface = _project(pytester)
    argv = [
        "--entropy-certify-only",
        f"--entropy-sessions={sessions}",
        f"--entropy-surface={surface}",
    ]
    _run(pytester, *argv, "--entropy-json=serial.json").assert_outcomes(passed=26)
    parallel = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", *argv, "-n", "1", "--entropy-json=parallel.json"
    )
    parallel.assert_outcomes(passed=26)
    serial_text = (pytester.path / "serial.json").read_text(encoding="utf-8")
    assert '"corpusChecks"' in serial_text
    assert (pytester.path / "parallel.json").read_text(encoding="utf-8") == serial_text
