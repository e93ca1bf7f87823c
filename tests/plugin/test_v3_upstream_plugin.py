"""The pytest side of metric v3 against the upstream's bytes: the ``entropy_meter`` fixture
with ``--entropy-metric-version 3`` measures the golden cases to the upstream's report hash."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)

DATA = Path(__file__).parent.parent / "data" / "v3-upstream"


@pytest.mark.parametrize("name", ["demo", "witnesses", "edges"])
def test_entropy_meter_gives_the_upstreams_report(pytester: pytest.Pytester, name: str) -> None:
    spec = json.loads((DATA / name / "spec.json").read_text(encoding="utf-8"))
    upstream = json.loads((DATA / name / "upstream.json").read_text(encoding="utf-8"))
    sessions = pytester.path / "sessions"
    sessions.mkdir()
    for file in spec["sessions"]:
        shutil.copyfile(DATA / name / file, sessions / Path(file).name)
    pytester.makepyfile(
        "from pytest_entropy import report_hash\n"
        "def test_meter(entropy_meter):\n"
        f"    assert report_hash(entropy_meter().to_json()) == {upstream['reportHash']!r}\n"
    )
    argv = [
        "-p", "no:cacheprovider", f"--entropy-sessions={sessions}",
        f"--entropy-surface={DATA / name / spec['surface']}", "--entropy-format=fabric",
        "--entropy-metric-version=3",
    ]  # fmt: skip
    if spec.get("repairs"):
        argv.append(f"--entropy-repairs={DATA / name / spec['repairs']}")
    pytester.runpytest_inprocess(*argv).assert_outcomes(passed=1)
