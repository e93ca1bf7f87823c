"""The opt-in ``surface-lint`` certification check and ``certify --lint``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.certify import CHECK_IDS
from pytest_entropy.run.certification import Certification, CertificationOptions

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SESSIONS, SURFACE = str(DEMO / "sessions"), str(DEMO / "surface.json")


def test_without_lint_the_check_list_is_the_specs() -> None:
    assert CertificationOptions().planned_check_ids() == CHECK_IDS
    options = CertificationOptions(sessions=SESSIONS, surface=SURFACE, trial=True)
    assert options.planned_check_ids() == (*CHECK_IDS, "corpus-mode", "trial-mode", "trial-costs")


def test_surface_lint_comes_after_trial_costs() -> None:
    options = CertificationOptions(sessions=SESSIONS, surface=SURFACE, trial=True, lint="mcp")
    assert options.planned_check_ids()[-2:] == ("trial-costs", "surface-lint")


@pytest.mark.parametrize(
    ("profile", "passed", "evidence"),
    [
        ("mcp", True, "0 errors, 25 warnings in 7 tools under mcp"),
        ("openai-strict", False, "errors, 25 warnings in 7 tools under openai-strict"),
    ],
)
def test_the_check(profile: str, passed: bool, evidence: str) -> None:
    run = Certification(CertificationOptions(sessions=SESSIONS, surface=SURFACE, lint=profile))
    outcome = run.run("surface-lint")
    assert outcome.result.passed is passed
    assert evidence in outcome.result.evidence


def test_the_check_needs_a_surface() -> None:
    outcome = Certification(CertificationOptions(lint="mcp")).run("surface-lint")
    assert (outcome.result.passed, outcome.result.evidence) == (
        False,
        "surface-lint needs --surface",
    )


def test_certify_lint_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["certify", "--sessions", SESSIONS, "--surface", SURFACE, "--format", "json"]
    assert main([*argv, "--lint", "mcp"]) == 0
    checks = json.loads(capsys.readouterr().out)["evaluation"]["checks"]
    assert [check["id"] for check in checks][-2:] == ["corpus-mode", "surface-lint"]
    assert main([*argv, "--lint", "openai-strict"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["evaluation"]["failed"] == ["surface-lint"]
