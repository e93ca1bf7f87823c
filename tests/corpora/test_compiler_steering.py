"""The steered compiler on real corpora: BFCL 2024 (converted to native sessions) with
--partial, tau-bench with --min-gain, and apply -> freedom on every corpus that compiles."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.artifact import apply_compiled_surface
from pytest_entropy.core.fingerprint import surface_freedom_report
from pytest_entropy.ingest.surfaces import load_surface
from tests.formats_support import convert

BFCL_RESULTS = "bfcl-results-2024-08/result"
BFCL_DOCS = "bfcl-results-2024-08/questions_v1"
TAU_TRAJECTORIES = "tau-bench-historical/gpt-4o-airline.json"
TAU_TOOLS = "tau-bench-historical/tools_at_7362a17.json"
DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"


def cli(*argv: str) -> tuple[int, Any, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    text = out.getvalue()
    return code, json.loads(text) if text.startswith("{") else text, err.getvalue()


@pytest.fixture(scope="module")
def bfcl(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from tests.conftest import SHARED_CORPORA

    if not (SHARED_CORPORA / BFCL_RESULTS).is_dir():
        pytest.skip(f"the shared third-party corpora are not at {SHARED_CORPORA}")
    root = tmp_path_factory.mktemp("bfcl")
    surface = str(SHARED_CORPORA / BFCL_DOCS)
    convert(
        root / "native", "--format", "bfcl", "--sessions", str(SHARED_CORPORA / BFCL_RESULTS),
        "--surface", surface,
    )  # fmt: skip
    argv = ["compile", "--sessions", str(root / "native"), "--surface", surface, "--json"]
    artifact = root / "partial.json"
    return {
        "surface": surface,
        "artifact": artifact,
        "default": cli(*argv),
        "partial": cli(*argv, "--partial", "--explain", "--out", str(artifact)),
    }


def test_bfcl_default_stays_rejected_as_the_reference(bfcl: dict[str, Any]) -> None:
    code, result, _ = bfcl["default"]
    assert code == 1 and result["status"] == "rejected"
    auto = [p for p in result["proposals"] if p["kind"] in ("enum-tighten", "noise-quarantine")]
    assert [p["kind"] for p in auto] == ["enum-tighten"] * 8 + ["noise-quarantine"]
    assert result["gate"]["reasons"] == ["sort_list: absent from the candidate surface"]
    assert "dropped" not in result and "explanations" not in result


def test_bfcl_partial_keeps_every_tightening_without_the_quarantine(
    bfcl: dict[str, Any],
) -> None:
    code, result, _ = bfcl["partial"]
    _, reference, _ = bfcl["default"]
    assert code == 0 and result["status"] == "compiled"
    assert result["proposals"] == reference["proposals"]
    assert result["dropped"] == [
        {
            "kind": "noise-quarantine",
            "ref": "sort_list",
            "reason": "sort_list: absent from the candidate surface",
        }
    ]
    tightenings = [p for p in result["proposals"] if p["kind"] == "enum-tighten"]
    artifact = json.loads(bfcl["artifact"].read_text(encoding="utf-8"))
    assert artifact == result["artifact"]
    assert [(a["kind"], a["ref"]) for a in artifact["applied"]] == [
        ("enum-tighten", p["ref"]) for p in tightenings
    ]
    assert len(artifact["actions"]) == 8
    assert artifact["quarantined"] == []
    assert result["after"]["score"] < result["report"]["score"]
    # Each explanation restates its proposal and what the compile did with it.
    rows = result["explanations"]
    assert [r["kind"] for r in rows] == [p["kind"] for p in result["proposals"]]
    assert {r["status"] for r in rows if r["kind"] == "enum-tighten"} == {"applied"}
    quarantine = next(r for r in rows if r["kind"] == "noise-quarantine")
    assert quarantine["status"].startswith("dropped: sort_list")
    assert all(r["gain"] > 0 for r in rows if r["kind"] == "enum-tighten")


def _freedom_after_apply(surface: str, artifact: Path, out: Path) -> None:
    code, _, err = cli(
        "apply", "--surface", surface, "--artifact", str(artifact), "--out", str(out)
    )
    assert code == 0, err
    declared = load_surface(surface)
    loaded = json.loads(artifact.read_text(encoding="utf-8"))
    effective = apply_compiled_surface(declared, loaded)
    assert surface_freedom_report(load_surface(out)) == surface_freedom_report(effective)
    assert surface_freedom_report(effective) != surface_freedom_report(declared)


def test_bfcl_apply_then_freedom(bfcl: dict[str, Any], tmp_path: Path) -> None:
    _freedom_after_apply(bfcl["surface"], bfcl["artifact"], tmp_path / "effective.json")


def test_tau_bench_min_gain_skips_the_cabin_narrowing(shared_corpora: Path, tmp_path: Path) -> None:
    surface = str(shared_corpora / TAU_TOOLS)
    argv = [
        "compile", "--sessions", str(shared_corpora / TAU_TRAJECTORIES), "--format",
        "tau-bench", "--surface", surface, "--json",
    ]  # fmt: skip
    artifact = tmp_path / "tau.json"
    code, default, _ = cli(*argv, "--out", str(artifact))
    assert code == 0 and default["status"] == "compiled"
    (tighten,) = [p for p in default["proposals"] if p["kind"] == "enum-tighten"]
    assert (tighten["ref"], tighten["key"]) == ("update_reservation_flights", "cabin")
    gain = default["report"]["score"] - default["after"]["score"]
    code, skipped, _ = cli(*argv, "--min-gain", "0.0001")
    assert code == 0 and skipped["status"] == "converged"
    assert "artifact" not in skipped and "after" not in skipped
    assert skipped["skipped"] == [
        {
            "kind": "enum-tighten",
            "ref": "update_reservation_flights",
            "key": "cabin",
            "reason": "gain 0.000022 below --min-gain 0.0001",
            "gain": pytest.approx(gain, abs=1e-6),
        }
    ]
    _freedom_after_apply(surface, artifact, tmp_path / "effective.json")


def test_demo_apply_then_freedom(tmp_path: Path) -> None:
    artifact = tmp_path / "demo.json"
    surface = str(DEMO / "surface.json")
    code, result, _ = cli(
        "compile", "--sessions", str(DEMO / "sessions"), "--surface", surface,
        "--out", str(artifact), "--json",
    )  # fmt: skip
    assert code == 0 and result["status"] == "compiled"
    _freedom_after_apply(surface, artifact, tmp_path / "effective.json")
