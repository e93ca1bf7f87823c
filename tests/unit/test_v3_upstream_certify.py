"""``certify --metric-version 3`` against the upstream's own certification script.

``tests/data/v3-upstream-certify/<name>.upstream.json`` holds what the upstream's
``runEntropyCertification`` (run by ``tests/data/v3_upstream_certify.mjs``) returned for the
scenario's options, and its human report. Our ``certify`` with the same options must print
the same JSON object (compared as the sha256 of its compact JSON too) and begin its text
report with the same lines; the exit status follows the evaluation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.v3_upstream_support import run_cli, sha_compact

ROOT = Path(__file__).parent.parent.parent
DATA = ROOT / "tests" / "data" / "v3-upstream-certify"
SCENARIOS = sorted(
    path.name.removesuffix(".upstream.json") for path in DATA.glob("*.upstream.json")
)


def _argv(options: dict[str, Any]) -> list[str]:
    argv = ["certify", "--metric-version", "3", "--no-progress"]
    if "sessionsDir" in options:
        argv += ["--sessions", options["sessionsDir"]]
    if "surfacePath" in options:
        argv += ["--surface", options["surfacePath"]]
    if "artifactPath" in options:
        argv += ["--artifact", options["artifactPath"]]
    if options.get("trial"):
        argv.append("--trial")
    return argv


def test_the_scenarios_are_there() -> None:
    assert len(SCENARIOS) >= 12


@pytest.mark.parametrize("name", SCENARIOS)
def test_certification_report_is_the_upstreams(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the report names the surface by the path it was given
    upstream = json.loads((DATA / f"{name}.upstream.json").read_text(encoding="utf-8"))
    argv = _argv(upstream["options"])
    code, report = run_cli([*argv, "--output-format", "json"])
    assert isinstance(report, dict), report
    assert report == upstream["report"]
    assert sha_compact(report) == sha_compact(upstream["report"])
    assert code == (0 if upstream["report"]["evaluation"]["passed"] else 1)
    code, text = run_cli(argv)
    assert isinstance(text, str)
    assert text.startswith(upstream["human"] + "\n")
