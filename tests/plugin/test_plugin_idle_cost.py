"""A pytest run that uses nothing of the plugin costs it its option table only (issue 32:
within 5 % of the same run with ``-p no:entropy``): no configuration module, no settings
checks, no file read, and the settings are still there for whoever asks."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_entropy.state.option_table import EntropySettings

pytest_plugins = ["pytester"]

PROBE = """
import sys

from pytest_entropy.pytest.stash import SETTINGS_KEY

def test_probe(request):
    settings = request.config.stash[SETTINGS_KEY]
    heavy = [name for name in ("pytest_entropy.state.config", "pytest_entropy.state.settings",
             "pytest_entropy.state.values", "pytest_entropy.pytest.session",
             "pytest_entropy.testing.session_defaults") if name in sys.modules]
    print("HEAVY", heavy)
    print("BASELINE", settings.baseline == request.config.rootpath / "entropy-baseline.json")
    print("DEFAULT", settings == type(settings)(baseline=settings.baseline))
"""


def test_an_unconfigured_run_imports_no_settings_module(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("PYTEST_ENTROPY_REPAIRS", "PYTEST_ENTROPY_STRICT"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s", "test_probe.py")
    result.assert_outcomes(passed=1)
    text = result.stdout.str()
    assert "HEAVY []" in text and "BASELINE True" in text and "DEFAULT True" in text


def test_a_configuration_file_is_still_read(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_probe=PROBE.replace('print("HEAVY", heavy)', ""))
    (pytester.path / "entropy.yml").write_text("strict: true\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s", "test_probe.py")
    result.assert_outcomes(passed=1)
    assert "DEFAULT False" in result.stdout.str()


NOTE = """
def test_note(record_property):
    record_property("entropy_ratchet", "held: 2 tools")

def test_after():
    pass
"""


def test_a_ratchet_note_still_reaches_the_summary(pytester: pytest.Pytester) -> None:
    # The idle stand-in hands the first report with a note to the real session.
    pytester.makepyfile(test_note=NOTE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_note.py")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*= entropy =*", "entropy ratchet: held: 2 tools"])


def test_settings_keep_the_frozen_record_behaviour() -> None:
    settings = EntropySettings(sessions=Path("s"), strict=True)
    assert settings == EntropySettings(sessions=Path("s"), strict=True)
    assert hash(settings) == hash(EntropySettings(sessions=Path("s"), strict=True))
    assert settings != EntropySettings(sessions=Path("s"))
    assert "strict=True" in repr(settings) and "sessions=PosixPath('s')" in repr(settings)
    with pytest.raises(AttributeError):
        settings.strict = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        EntropySettings(unknown=1)  # type: ignore[call-arg]
