"""The plugin's corpus options (issue 14): the gate as items, an empty corpus failing them,
``--entropy-format`` / ``--entropy-surface-format`` / ``--entropy-allow-empty`` with their
ini twins, and the fixture's ``entropy_surface`` ini key kept out of certification."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_convert import pi_log
from tests.cli.test_empty_corpus import PI_TOOLS

pytest_plugins = ("pytester",)

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def test_the_gates_are_items_in_the_summary_line(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Outside CI a missing baseline is written and passes; in CI it fails (tested apart).
    monkeypatch.delenv("CI", raising=False)
    sessions = pytester.path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = run(
        pytester,
        f"--entropy-sessions={sessions}",
        "--entropy-max-score=0.1",
        "--entropy-baseline=base.json",
        "-rA",
    )
    result.assert_outcomes(passed=2, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["PASSED entropy-gate::baseline"])
    result.stdout.fnmatch_lines(["FAILED entropy-gate::max-score - *", "*1 failed, 2 passed*"])
    # The entropy section keeps its lines, once each.
    section = result.stdout.str().split("= entropy =")[1].split("short test summary")[0]
    assert section.count("entropy gate: sessions score") == 1
    assert "score 0.2173 is ABOVE the maximum 0.1" in section
    within = run(pytester, f"--entropy-sessions={sessions}", "--entropy-max-score=1")
    within.assert_outcomes(passed=2)
    assert within.ret == pytest.ExitCode.OK


def test_an_empty_corpus_fails_the_gate_unless_allowed(pytester: pytest.Pytester) -> None:
    empty = pytester.path / "empty"
    empty.mkdir()
    pytester.makepyfile("def test_ok():\n    pass\n")
    argv = [f"--entropy-sessions={empty}", "--entropy-max-score=1"]
    failed = run(pytester, *argv)
    failed.assert_outcomes(passed=1, failed=1)
    failed.stdout.fnmatch_lines(
        ["*cannot measure the sessions: read 0 files, 0 lines, 0 traces: no session files*"]
    )
    # The message names the options as pytest spells them.
    text = failed.stdout.str()
    assert "under --entropy-format auto" in text and "; --entropy-allow-empty accepts" in text
    assert " --format" not in text and " --allow-empty" not in text
    run(pytester, *argv, "--entropy-allow-empty").assert_outcomes(passed=2)
    pytester.makeini("[pytest]\nentropy_allow_empty = true\n")
    run(pytester, *argv).assert_outcomes(passed=2)


def test_the_gate_reads_any_session_format(pytester: pytest.Pytester) -> None:
    sessions = pytester.path / "pi"
    pi_log(sessions / "a.jsonl", {"command": "ls"})
    pytester.makepyfile("def test_ok():\n    pass\n")
    argv = [f"--entropy-sessions={sessions}", "--entropy-max-score=10"]
    run(pytester, *argv).assert_outcomes(passed=2)  # auto: read as Pi
    native = run(pytester, *argv, "--entropy-format=fabric")
    native.assert_outcomes(passed=1, failed=1)
    native.stdout.fnmatch_lines(
        ["*nothing in them is a --entropy-format fabric session; try --entropy-format auto*"]
    )
    pytester.makeini("[pytest]\nentropy_format = fabric\n")
    run(pytester, *argv).assert_outcomes(passed=1, failed=1)
    bad = run(pytester, *argv, "--entropy-format=nope")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown format 'nope'" in bad.stderr.str()


def test_certification_reads_foreign_corpora(pytester: pytest.Pytester) -> None:
    sessions = pytester.path / "pi"
    pi_log(sessions / "a.jsonl", {"command": "ls"}, {"command": "pwd"})
    tools = pytester.path / "tools.json"
    tools.write_text(json.dumps(PI_TOOLS), encoding="utf-8")
    argv = ["--entropy-certify", f"--entropy-sessions={sessions}", f"--entropy-surface={tools}"]
    result = run(pytester, *argv, "--entropy-surface-format=pi", "--entropy-json=report.json")
    # 21 + 5 corpus checks (issue 29); one session file: the held-out trial has no evidence.
    result.assert_outcomes(passed=25, xfailed=1)
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    assert report["corpus"]["totals"]["operations"] == 2
    assert [row["ref"] for row in report["corpus"]["refs"]] == ["pi.bash"]
    # The bare spellings, where no other plugin owns them.
    run(pytester, *argv, "--format=pi", "--surface-format=pi").assert_outcomes(passed=25, xfailed=1)
    native = run(pytester, *argv, "--entropy-format=fabric")
    # corpus-mode fails, and so does corpus-health (issue 29): read as fabric, no tool call
    # (corpus-deterministic and ratchet-holding report it without gating).
    native.assert_outcomes(passed=21, failed=2, xfailed=3)


def test_a_taken_bare_format_flag_is_left_to_its_owner(pytester: pytest.Pytester) -> None:
    sessions = pytester.path / "pi"
    pi_log(sessions / "a.jsonl", {"command": "ls"})
    pytester.makeconftest(
        """
        def pytest_addoption(parser):
            parser.addoption("--format", action="store", help="another plugin's flag")
        """
    )
    result = run(
        pytester,
        "--entropy-certify",
        f"--entropy-sessions={sessions}",
        "--format=whatever",
        "--entropy-format=pi",
    )
    result.assert_outcomes(passed=24)  # 21 + 3 corpus checks (issue 29)


def test_the_fixture_surface_ini_key_stays_out_of_certification(
    pytester: pytest.Pytester,
) -> None:
    shutil.copy(DEMO / "surface.json", pytester.path / "surface.json")
    pytester.makeini("[pytest]\nentropy_surface = surface.json\n")
    result = run(pytester, "--entropy-certify")
    result.assert_outcomes(passed=20)  # no corpus-mode item: the key is the fixture's
    assert "--surface requires --sessions" not in result.stdout.str()
    # Beside a sessions corpus the key is its surface, as before.
    with_sessions = run(pytester, "--entropy-certify", f"--entropy-sessions={DEMO / 'sessions'}")
    with_sessions.assert_outcomes(passed=26)  # 21 + the 5 corpus checks (issue 29)
    # On the command line, --surface alone is still §12.1's corpus-mode failure.
    alone = run(pytester, "--entropy-certify", "--entropy-surface=surface.json")
    alone.assert_outcomes(passed=20, failed=1)


@pytest.mark.parametrize("encoding", ["ascii", "cp1252"])
def test_the_entropy_section_degrades_to_ascii(pytester: pytest.Pytester, encoding: str) -> None:
    """What the terminal cannot encode becomes ASCII stand-ins, not pytest's escapes."""
    shutil.copy(DEMO / "surface.json", pytester.path / "surface.json")
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONIOENCODING": encoding, "PYTHONPATH": str(repo)}
    argv = ["-p", "no:cacheprovider", "--entropy-certify", "--entropy-surface=surface.json"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *argv],
        cwd=pytester.path,
        env=env,
        capture_output=True,
        timeout=300,
        check=False,
    )
    text = done.stdout.decode(encoding)
    assert done.returncode == 1, text
    assert "  x corpus-mode -- --surface requires --sessions" in text.splitlines()
    assert "\\u2717" not in text and "1 failed, 20 passed" in text


def test_in_ci_a_missing_baseline_fails_its_item(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    sessions = pytester.path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = run(pytester, f"--entropy-sessions={sessions}", "--entropy-baseline=base.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["FAILED entropy-gate::baseline - *"])
    assert not (pytester.path / "base.json").exists()  # CI never writes a baseline itself


def test_an_empty_sessions_path_or_a_gate_without_one_is_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    # `--entropy-sessions=$UNSET` measured the working directory (and could pass on it);
    # a max score with no corpus was left out without a word, so the run passed on nothing.
    data = pytester.path / "tests" / "data"
    data.mkdir(parents=True)
    shutil.copy(DEMO / "sessions" / "2026-01-06-notes-triage.jsonl", data)
    pytester.makepyfile("def test_ok():\n    pass\n")
    empty = run(pytester, "--entropy-sessions=", "--entropy-max-score=0.9")
    assert empty.ret == pytest.ExitCode.USAGE_ERROR
    empty.stderr.fnmatch_lines(["*--entropy-sessions is empty: give it a path*"])
    alone = run(pytester, "--entropy-max-score=0.9")
    assert alone.ret == pytest.ExitCode.USAGE_ERROR
    alone.stderr.fnmatch_lines(["*--entropy-max-score needs --entropy-sessions*"])
    pytester.makeini("[pytest]\nentropy_max_score = 0.9\n")
    assert run(pytester).ret == pytest.ExitCode.USAGE_ERROR


def test_the_gate_warns_of_lines_it_skipped(pytester: pytest.Pytester) -> None:
    sessions = pytester.path / "sessions"
    sessions.mkdir()
    source = (DEMO / "sessions" / "2026-01-05-notes-release.jsonl").read_bytes()
    (sessions / "cut.jsonl").write_bytes(source[:-40])  # the last line cut short
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = run(pytester, f"--entropy-sessions={sessions}", "--entropy-max-score=0.9")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["*warning: skipped inside the session files: 1 unusable lines*cut.jsonl:8: malformed*"]
    )
