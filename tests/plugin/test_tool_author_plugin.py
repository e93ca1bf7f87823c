"""The plugin as tool authors meet it: fixtures, the ratchet, the sessions gate, snapshots,
and a plugin that costs nothing in projects that do not use it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.meter import measure, report_hash
from pytest_entropy.testing.lifecycle import walk_ratchet_life_cycle

pytest_plugins = ("pytester",)

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "corpora" / "demo"
HEAVY = ("hypothesis", "syrupy", "jsonschema", "icu", "msgspec", "orjson", "dask", "distributed",
         "fsspec", "yaml", "watchfiles")  # fmt: skip


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def _surface(schema: dict[str, object]) -> dict[str, object]:
    return {"version": 1, "actions": [{"ref": "mcp.render", "inputSchema": schema}]}


TIGHT = _surface(
    {
        "type": "object",
        "additionalProperties": False,
        "required": ["format"],
        "properties": {"format": {"type": "string", "enum": ["pdf", "html"]}},
    }
)
LOOSE = _surface({"type": "object", "properties": {"format": {"type": "string"}}})


def test_the_ratchet_life_cycle(pytester: pytest.Pytester) -> None:
    steps = walk_ratchet_life_cycle(pytester, TIGHT, LOOSE)
    assert [step.passed for step in steps] == [False, True, True, False, True, True, True]
    assert "the baseline can be lowered" in steps[-1].output


def test_fixtures_are_documented(pytester: pytest.Pytester) -> None:
    output = run(pytester, "--fixtures").stdout.str()
    for name, phrase in (
        ("entropy_surface", "The surface snapshot named by"),
        ("entropy_sessions", "The session files named by"),
        ("entropy_meter", "Measures traces or session files"),
        ("entropy_ratchet", "entropy_ratchet.check(surface_or_report)"),
        ("entropy_snapshot", "syrupy's ``snapshot``"),
    ):
        assert name in output
        assert phrase in output


def test_fixtures_read_the_configured_corpus(pytester: pytest.Pytester) -> None:
    shutil.copytree(DEMO / "sessions", pytester.path / "sessions")
    shutil.copy(DEMO / "surface.json", pytester.path / "surface.json")
    pytester.makeini("[pytest]\nentropy_sessions = sessions\nentropy_surface = surface.json\n")
    pytester.makepyfile(
        """
        from pytest_entropy.testing.assertions import assert_no_entropy_increase

        def test_corpus(entropy_sessions, entropy_surface, entropy_meter):
            assert [path.name for path in entropy_sessions][0] == "2026-01-05-notes-release.jsonl"
            report = entropy_meter()
            assert report.totals.operations == 34
            assert report.score == 0.406227
            assert entropy_meter.freedom()["total"] == 18.136988
            assert_no_entropy_increase(entropy_surface, entropy_surface, entropy_sessions)
        """
    )
    run(pytester).assert_outcomes(passed=1)


def test_unconfigured_fixtures_say_what_to_set(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_surface(entropy_surface):\n    pass\n")
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no surface configured (pass --entropy-surface FILE*"])


def test_the_sessions_gate_without_writing_a_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = pytester.path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    pytester.makepyfile("def test_unrelated():\n    pass\n")
    monkeypatch.delenv("CI", raising=False)
    above = run(pytester, f"--sessions={sessions}", "--entropy-max-score=0.1")
    # The gate is an item: pytest's own summary line counts its failure.
    above.assert_outcomes(passed=1, failed=1)
    above.stdout.fnmatch_lines(["*FAILED entropy-gate::max-score*", "*1 failed, 1 passed*"])
    assert above.ret == pytest.ExitCode.TESTS_FAILED
    above.stdout.fnmatch_lines(["entropy gate: sessions score 0.2173 *", "*ABOVE the maximum 0.1"])
    # The gate measures exactly as `pytest-entropy measure` does.
    measured = measured_hash(sessions)
    assert f"report {measured[:12]}" in above.stdout.str()
    within = run(pytester, f"--entropy-sessions={sessions}", "--entropy-max-score=1")
    assert within.ret == pytest.ExitCode.OK
    created = run(pytester, f"--sessions={sessions}", "--entropy-baseline=base.json")
    assert created.ret == pytest.ExitCode.OK
    created.stdout.fnmatch_lines(["  entropy baseline created: 'corpus' in *base.json"])
    monkeypatch.setenv("CI", "true")
    shutil.copy(DEMO / "surface.json", pytester.path / "surface.json")
    rose = run(
        pytester, f"--sessions={sessions}", "--surface=surface.json", "--entropy-baseline=base.json"
    )
    assert rose.ret == pytest.ExitCode.TESTS_FAILED
    rose.stdout.fnmatch_lines(["  entropy rose above the baseline 'corpus' *"])


def measured_hash(sessions: Path) -> str:
    from io import StringIO

    out = StringIO()
    original, sys.stdout = sys.stdout, out
    try:
        assert main(["measure", "--sessions", str(sessions), "--json"]) == 0
    finally:
        sys.stdout = original
    return str(json.loads(out.getvalue())["reportHash"])


def test_entropy_snapshot(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from pytest_entropy import measure

        TRACES = [{"operations": [{"ref": "pi.read", "args": {"path": "a"},
                                   "outcome": "succeeded"}]}]

        def test_report(entropy_snapshot):
            assert measure(TRACES) == entropy_snapshot
        """
    )
    run(pytester, "--snapshot-update").assert_outcomes(passed=1)
    [stored] = pytester.path.glob("__snapshots__/**/*.entropy.json")
    traces = [{"operations": [{"ref": "pi.read", "args": {"path": "a"}, "outcome": "succeeded"}]}]
    assert json.loads(stored.read_text())["reportHash"] == report_hash(measure(traces))
    run(pytester).assert_outcomes(passed=1)
    stored.write_text(stored.read_text().replace('"calls": 1', '"calls": 2'))
    run(pytester).assert_outcomes(failed=1)


def test_an_unused_plugin_is_silent_and_imports_nothing_heavy(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    pass\n")
    (tmp_path / "conftest.py").write_text(
        "import json, os, sys\n"
        "def pytest_sessionfinish(session):\n"
        "    with open(os.environ['MODULES_OUT'], 'w') as out:\n"
        "        json.dump(sorted(sys.modules), out)\n"
    )
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    outputs = {}
    for label, extra in (("with", ["-p", "pytest_entropy.plugin"]), ("without", [])):
        env["MODULES_OUT"] = str(tmp_path / f"{label}.json")
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra],
            cwd=tmp_path, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
        outputs[label] = [line for line in result.stdout.splitlines() if " in " not in line]
    modules = json.loads((tmp_path / "with.json").read_text())
    assert "pytest_entropy.plugin" in modules
    assert not [name for name in modules if name.split(".")[0] in HEAVY]
    assert "pytest_entropy.run.certification" not in modules
    assert outputs["with"] == outputs["without"]
