"""Where our metric v3 differs from the upstream's bytes on purpose (docs/metric-v3.md).

A surface that declares one ref twice: the upstream derives a plan for each declaration and
writes an artifact with two plans for that ref, which its own loader then refuses (so its
next compile is blocked). We compute the same outcome, print it, and refuse to write the
file (exit 2). Everything else about the case is the upstream's.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli import main
from tests.v3_upstream_support import run_cli, sha_compact

CASE = Path(__file__).parent.parent / "data" / "v3-upstream-differences" / "duplicate-refs"


def _setup(tmp_path: Path) -> tuple[dict[str, Any], list[str]]:
    spec = json.loads((CASE / "spec.json").read_text(encoding="utf-8"))
    upstream = json.loads((CASE / "upstream.json").read_text(encoding="utf-8"))
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for file in spec["sessions"]:
        shutil.copyfile(CASE / file, sessions / Path(file).name)
    args = ["--sessions", str(sessions), "--surface", str(CASE / spec["surface"])]
    return upstream, [*args, "--metric-version", "3", "--format", "fabric", "--no-progress"]


def test_the_outcome_is_the_upstreams(tmp_path: Path) -> None:
    upstream, args = _setup(tmp_path)
    refs = [plan["ref"] for plan in upstream["compile"]["artifact"]["normalizations"]]
    assert len(refs) != len(set(refs))  # the upstream's artifact holds a ref twice
    code, measured = run_cli(["measure", *args, "--json"])
    assert measured["reportHash"] == upstream["reportHash"]
    code, proposed = run_cli(["propose", *args, "--json"])
    assert proposed["proposals"] == upstream["proposals"]
    code, compiled = run_cli(["compile", *args, "--json"])
    assert code == 0
    assert sha_compact(compiled) == upstream["compact"]["compile"]
    code, trial = run_cli(["trial", *args, "--json"])
    assert sha_compact(trial) == upstream["compact"]["trialBare"]


def test_the_artifact_is_not_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    upstream, args = _setup(tmp_path)
    out = tmp_path / "compiled.json"
    argv = ["compile", *args, "--out", str(out), "--json"]
    assert main(argv) == 2
    assert not out.exists()
    assert upstream["compiledJson"] is not None  # the upstream writes it
    # the message says why: the surface declares a ref twice
    error = capsys.readouterr().err
    assert "refusing to write a compiled surface its own loader would reject" in error
    assert "two normal-form plans name mcp.report.render" in error
    assert "the surface declares that ref more than once" in error
