"""The Rust core measures the real corpora as the plain path does (issue 28, item 3).

Each session corpus of ``../shared/corpora`` is measured as found (``--format auto``: the
native-format files go through the Rust scanner, the others through the plain scanner
inside the same reader) and after ``convert`` to the native trace format (every file through
the Rust scanner): the ``measure --json`` output (report, hash and diagnostics) is the same
on both paths, byte for byte.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from pytest_entropy.cli.app import main
from tests.formats_support import convert
from tests.native_core_support import native_core_module, on_path

SESSION_CORPORA = [
    ("pi-sessions", "auto"),
    ("claude-code-sessions-spotter", "auto"),
    ("tau-bench-historical", "auto"),
    ("openhands-trajectories", "auto"),
    ("toolbench-data-example", "auto"),
]


def _measure(sessions: Path, path: str) -> str:
    out = io.StringIO()
    with on_path(path), contextlib.redirect_stdout(out):
        status = main(["measure", "--sessions", str(sessions), "--json"])
    assert status in (0, 1)
    return out.getvalue()


@pytest.mark.parametrize(("name", "session_format"), SESSION_CORPORA)
def test_real_corpora_measure_the_same_on_both_paths(
    shared_corpora: Path, tmp_path: Path, name: str, session_format: str
) -> None:
    native_core_module()
    sessions = shared_corpora / name
    if not sessions.is_dir():
        pytest.skip(f"{sessions} is missing")
    assert _measure(sessions, "native") == _measure(sessions, "plain")
    out = tmp_path / "native"
    with on_path("plain"):
        result = convert(out, "--format", session_format, "--sessions", str(sessions))
    assert result["files"], f"{name}: nothing converted"
    native = _measure(out, "native")
    assert '"traces": 0,' not in native
    assert native == _measure(out, "plain")
