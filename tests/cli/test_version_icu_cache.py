"""``--version`` names the ICU version without importing PyICU once a run has recorded it
(issue 32: the import costs more than the interpreter's start-up)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_entropy.cli import version
from pytest_entropy.core.versions import icu_version

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "__pycache__" / "icu-version.txt"
    monkeypatch.setattr(version, "_ICU_CACHE", str(path))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", None)
    return path


def _refuse() -> str:
    raise AssertionError("PyICU was asked although the record matches")


def test_the_recorded_version_is_read_back(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert version.cached_icu_version() == icu_version()
    assert cache.read_text(encoding="utf-8").endswith("\n" + icu_version())
    monkeypatch.setattr(version, "icu_version", _refuse)
    assert version.cached_icu_version() == icu_version()


def test_another_pyicu_build_is_asked_again(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache.parent.mkdir()
    cache.write_text("some other build\n1.0", encoding="utf-8")
    monkeypatch.setattr(version, "icu_version", lambda: "99.9")
    assert version.cached_icu_version() == "99.9"
    assert cache.read_text(encoding="utf-8").endswith("\n99.9")


def test_no_record_where_bytecode_is_not_written(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert version.cached_icu_version() == icu_version()
    assert not cache.exists()


def test_a_second_version_run_does_not_import_pyicu(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(REPO)
    code = (
        "import sys; from pytest_entropy.cli import main; main(['--version'])\n"
        "print('icu' in sys.modules)"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        for _ in range(2)
    ]
    for run in runs:
        assert run.returncode == 0, run.stderr
    first, second = (run.stdout.splitlines() for run in runs)
    assert first[0] == second[0] and f"ICU {icu_version()})" in first[0]
    assert second[-1] == "False"
