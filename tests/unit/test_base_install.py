"""Installing the plugin adds no other pytest plugin (issue 32, item 1, "Done when").

A fresh venv gets the package and exactly its base dependencies (``tests/install_support.py``
says how without the network); the only ``pytest11`` entry point there is ours, and the base
install works without any extra: the CLI measures the demo, pytest runs with the plugin, and
a helper whose extra is missing names it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.install_support import (
    base_closure,
    clean_environment,
    installed_metadata_agrees,
    make_base_install,
    pytest_plugins_in,
    venv_python,
)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        base_closure()
    except LookupError as error:
        pytest.skip(str(error))
    path = tmp_path_factory.mktemp("base") / "venv"
    make_base_install(path)
    return path


def _run(venv: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv_python(venv)), *argv],
        cwd=cwd,
        env=clean_environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_only_pytest_plugin_of_the_base_install_is_ours(venv: Path) -> None:
    assert pytest_plugins_in(venv) == [["entropy", "pytest_entropy.plugin"]]


def test_the_base_install_holds_no_helper_library(venv: Path, tmp_path: Path) -> None:
    code = (
        "import importlib.util as u;"
        "print([m for m in ('hypothesis', 'syrupy', 'yaml', 'rich', 'xdist') if u.find_spec(m)])"
    )
    done = _run(venv, "-c", code, cwd=tmp_path)
    assert (done.returncode, done.stdout.strip()) == (0, "[]"), done.stderr


def test_the_base_install_measures_the_demo(venv: Path, tmp_path: Path) -> None:
    demo = Path(__file__).resolve().parents[2] / "corpora" / "demo"
    version = _run(venv, "-m", "pytest_entropy", "--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("pytest-entropy "), version
    argv = ["-m", "pytest_entropy", "measure", "--sessions", str(demo / "sessions")]
    argv += ["--surface", str(demo / "surface.json"), "--repairs", str(demo / "repairs.json")]
    done = _run(venv, *argv, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "report hash" in done.stdout


def test_pytest_runs_with_the_plugin_in_the_base_install(venv: Path, tmp_path: Path) -> None:
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n", encoding="utf-8")
    done = _run(venv, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--co", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    listed = _run(venv, "-m", "pytest", "--help", cwd=tmp_path)
    assert "--entropy-certify" in listed.stdout  # our plugin loaded, and no other's options
    assert "--hypothesis" not in listed.stdout and "--snapshot-update" not in listed.stdout


def test_a_missing_extra_is_named_in_the_base_install(venv: Path, tmp_path: Path) -> None:
    done = _run(venv, "-c", "import pytest_entropy.testing.strategies", cwd=tmp_path)
    assert done.returncode == 1
    assert 'pip install "pytest-entropy[hypothesis]"' in done.stderr


def test_the_translated_metadata_is_the_backend_s() -> None:
    agrees = installed_metadata_agrees()
    if agrees is None:
        pytest.skip("the installed pytest-entropy is another checkout's (CI installs this one)")
    assert agrees
