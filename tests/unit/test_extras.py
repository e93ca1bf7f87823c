"""The base install needs only what measuring needs (issue 32, item 1).

hypothesis and syrupy (pytest plugins themselves), PyYAML and rich are extras; a helper whose
extra is missing says which extra to install, and the plain fallbacks (no rich: a plain
progress line) keep working. ``tests/unit/test_base_install.py`` checks the install itself.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from pytest_entropy.cli.app import main
from pytest_entropy.cli.terminal import PlainProgressLine, TerminalProgress
from pytest_entropy.core.extras import MissingExtraError, missing_extra

REPO = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _import_without(blocked: str, module: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        f"sys.modules[{blocked!r}] = None\n"
        "try:\n"
        f"    import {module}\n"
        "except ImportError as error:\n"
        "    print(type(error).__name__, error.name, getattr(error, 'extra', None))\n"
        "    print(error)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )


@pytest.mark.parametrize(
    ("blocked", "module", "extra"),
    [
        ("hypothesis", "pytest_entropy.testing.strategies", "hypothesis"),
        ("syrupy", "pytest_entropy.testing.snapshot", "syrupy"),
    ],
)
def test_a_helper_without_its_extra_names_the_extra(blocked: str, module: str, extra: str) -> None:
    first, message = _import_without(blocked, module).stdout.splitlines()
    assert first == f"MissingExtraError {blocked} {extra}"
    assert f'pip install "pytest-entropy[{extra}]"' in message
    assert module in message


def test_a_broken_install_is_not_reported_as_a_missing_extra() -> None:
    other = ModuleNotFoundError("No module named 'sortedcontainers'", name="sortedcontainers")
    assert missing_extra(other, "hypothesis", "hypothesis", "x") is other
    own = ModuleNotFoundError("No module named 'hypothesis'", name="hypothesis")
    error = missing_extra(own, "hypothesis", "hypothesis", "x")
    assert isinstance(error, MissingExtraError) and isinstance(error, ImportError)


def test_base_dependencies_leave_the_helpers_extras_out() -> None:
    base = {canonicalize_name(Requirement(text).name) for text in PROJECT["dependencies"]}
    assert base.isdisjoint({"hypothesis", "syrupy", "pyyaml", "rich"})
    extras = PROJECT["optional-dependencies"]
    for extra, package in [
        ("hypothesis", "hypothesis"),
        ("syrupy", "syrupy"),
        ("yaml", "pyyaml"),
        ("rich", "rich"),
    ]:
        assert package in {canonicalize_name(Requirement(t).name) for t in extras[extra]}
    testing = {canonicalize_name(Requirement(t).name) for t in extras["testing"]}
    assert testing == {"hypothesis", "syrupy"}
    # The project's own test extra still installs every helper's packages.
    test = {canonicalize_name(Requirement(t).name) for t in extras["test"]}
    assert {"hypothesis", "syrupy", "pyyaml", "rich"} <= test


def test_a_yaml_configuration_without_pyyaml_is_an_input_error_naming_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "entropy.yml").write_text("state-dir: here\n", encoding="utf-8")
    monkeypatch.setitem(sys.modules, "yaml", None)
    assert main(["config", "--cwd", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert 'pip install "pytest-entropy[yaml]"' in err
    assert "entropy.yml" in err


def test_a_yaml_configuration_with_pyyaml_still_applies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("yaml")
    (tmp_path / "entropy.yml").write_text("state-dir: here\n", encoding="utf-8")
    assert main(["config", "--cwd", str(tmp_path)]) == 0
    assert "entropy.yml" in capsys.readouterr().out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_without_rich_the_progress_is_a_plain_line(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in sys.modules if name == "rich" or name.startswith("rich.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "rich", None)  # import rich now raises ImportError
    stream = _Terminal()
    progress = TerminalProgress(stream, delay=0.0)
    progress.begin(4, 4_000_000)
    progress.advance(1, 1_000_000)
    assert isinstance(progress._bar, PlainProgressLine)
    progress.advance(3, 3_000_000)  # the last file: drawn at once, whatever the rate limit
    drawn = stream.getvalue()
    assert drawn.startswith("\rreading")
    assert "1/4 files" in drawn and "4/4 files" in drawn and "100%" in drawn
    assert "4.0 MB/4.0 MB" in drawn
    progress.end()
    erased = stream.getvalue()[len(drawn) :]
    assert erased.startswith("\r") and erased.endswith("\r") and erased.strip() == ""


def test_the_base_closure_adds_no_other_pytest_plugin() -> None:
    """Walks the installed distributions the base dependencies reach (no extras): none but
    ours may declare a ``pytest11`` entry point (hypothesis and syrupy did)."""
    seen: set[str] = set()
    queue = [Requirement(text) for text in PROJECT["dependencies"]]
    while queue:
        requirement = queue.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(requirement.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            pytest.fail(f"{name} (a base dependency) is not installed here")
        queue.extend(Requirement(text) for text in distribution.requires or [])
        plugins = [entry.name for entry in distribution.entry_points if entry.group == "pytest11"]
        assert plugins == [], f"{name} registers the pytest plugins {plugins}"
    assert {"pytest", "jsonschema", "orjson"} <= seen
