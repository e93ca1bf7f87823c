"""The plugin's precedence: command line > PYTEST_ENTROPY_<KEY> > ini entropy_* >
[tool.entropy] > entropy.yml > default, for a path, a number and a switch."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"

pytest_plugins = ["pytester"]

PROBE = """
from pytest_entropy.pytest.stash import SETTINGS_KEY

def test_probe(request):
    settings = request.config.stash[SETTINGS_KEY]
    print("REPAIRS", settings.repairs.name if settings.repairs else None)
    print("STRICT", settings.strict)
"""


def _seen(result: pytest.RunResult) -> tuple[str, str]:
    text = result.stdout.str()
    repairs = text.split("REPAIRS ", 1)[1].split()[0]
    strict = text.split("STRICT ", 1)[1].split()[0]
    return repairs, strict


def test_each_level_overrides_the_one_below(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_ENTROPY_REPAIRS", raising=False)
    pytester.makepyfile(test_probe=PROBE)
    run = ["-p", "no:cacheprovider", "-s", "test_probe.py"]
    assert _seen(pytester.runpytest(*run)) == ("None", "False")
    (pytester.path / "entropy.yml").write_text("repairs: yml.json\nstrict: true\n")
    assert _seen(pytester.runpytest(*run)) == ("yml.json", "True")
    (pytester.path / "pyproject.toml").write_text(
        '[tool.entropy]\nrepairs = "toml.json"\nstrict = false\n'
    )
    assert _seen(pytester.runpytest(*run)) == ("toml.json", "False")
    (pytester.path / "pytest.ini").write_text("[pytest]\nentropy_repairs = ini.json\n")
    assert _seen(pytester.runpytest(*run)) == ("ini.json", "False")
    monkeypatch.setenv("PYTEST_ENTROPY_REPAIRS", "env.json")
    monkeypatch.setenv("PYTEST_ENTROPY_STRICT", "1")
    assert _seen(pytester.runpytest(*run)) == ("env.json", "True")
    assert _seen(pytester.runpytest(*run, "--entropy-repairs", "cli.json")) == (
        "cli.json",
        "True",
    )


def test_a_misspelt_key_stops_the_run_naming_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_ok():\n    pass\n")
    (pytester.path / "pyproject.toml").write_text("[tool.entropy]\nmax-scor = 0.3\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown setting 'max-scor' (did you mean 'max-score'?)*"])


def test_the_gate_reads_tool_entropy(pytester: pytest.Pytester) -> None:
    sessions = pytester.path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    pytester.makepyfile("def test_ok():\n    pass\n")
    (pytester.path / "pyproject.toml").write_text(
        '[tool.entropy]\nsessions = ["sessions"]\nmax-score = 0.0001\n'
    )
    assert pytester.runpytest("-p", "no:cacheprovider").ret != 0
    assert pytester.runpytest("-p", "no:cacheprovider", "--entropy-max-score", "10").ret == 0
