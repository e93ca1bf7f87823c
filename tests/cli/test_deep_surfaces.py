"""Surfaces nested far beyond Python's recursion limit: every command reads them, lint's
walk stops at its limit and says so, and ``lint --fix`` refuses what it cannot fix whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.canonical import js_stringify
from pytest_entropy.core.lint.walk import WALK_LIMIT
from pytest_entropy.core.schema_strip import strip_annotations
from pytest_entropy.ingest.bfcl_schema import bfcl_to_json_schema
from pytest_entropy.ingest.jsonparse import parse_json_text

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
LEVELS = 5000  # well past the interpreter's default recursion limit of 1000


def _nested(levels: int, kind: str, leaf: str, **extra: Any) -> str:
    """The JSON text of ``levels`` objects, each holding the next as property ``a``."""
    head = json.dumps({"type": kind, **extra})[:-1] + ', "properties": {"a": '
    return head * levels + json.dumps({"type": leaf}) + "}}" * levels


def _bfcl(tmp_path: Path, levels: int = LEVELS) -> Path:
    path = tmp_path / "bfcl.json"
    schema = _nested(levels, "dict", "str")
    path.write_text(f'[{{"name": "x", "description": "d", "parameters": {schema}}}]')
    return path


def _gemini(tmp_path: Path, levels: int = LEVELS) -> Path:
    path = tmp_path / "gemini.json"
    schema = _nested(levels, "OBJECT", "STRING", nullable=True)
    path.write_text(
        f'{{"functionDeclarations": [{{"name": "x", "description": "d", "parameters": {schema}}}]}}'
    )
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_bfcl_mapping_copies_any_depth_in_standard_types() -> None:
    converted = bfcl_to_json_schema(parse_json_text(_nested(LEVELS, "dict", "str")))
    assert js_stringify(converted) == js_stringify(
        parse_json_text(_nested(LEVELS, "object", "string"))
    )


def test_stripping_annotations_takes_any_depth() -> None:
    schema = parse_json_text(_nested(LEVELS, "object", "string", description="level"))
    assert js_stringify(strip_annotations(schema)) == js_stringify(
        parse_json_text(_nested(LEVELS, "object", "string"))
    )


@pytest.mark.parametrize(
    ("make", "surface_format", "total"),
    [(_bfcl, "bfcl", "3.5"), (_gemini, "gemini", "0.75")],
)
def test_freedom_measure_and_compile_read_a_deep_tool_list(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, make: Any, surface_format: str, total: str
) -> None:
    surface = str(make(tmp_path))
    code, out, err = run(
        capsys, "freedom", "--surface", surface, "--surface-format", surface_format
    )
    assert (code, err) == (0, "")
    assert f"total {total} " in out
    sessions = str(DEMO / "sessions")
    common = ("--sessions", sessions, "--surface", surface, "--surface-format", surface_format)
    assert run(capsys, "measure", *common)[0] == 0
    code, out, _ = run(capsys, "compile", *common, "--out", str(tmp_path / "compiled.json"))
    assert code == 0
    assert "converged" in out  # the demo corpus calls none of this surface's tools


def test_lint_walks_down_to_its_limit_and_reports_the_cut(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = run(capsys, "lint", "--surface", str(_bfcl(tmp_path)), "--json")
    assert code == 0
    findings = json.loads(out)["findings"]
    undescribed = [f for f in findings if f["rule"] == "param-undescribed"]
    assert len(undescribed) == WALK_LIMIT  # one per level walked, not one per level
    (deep,) = [f for f in findings if f["rule"] == "schema-too-deep"]
    assert f"nests {LEVELS + 1} levels deep" in deep["message"]
    assert f"down to {WALK_LIMIT} steps" in deep["message"]
    assert deep["pointer"] == "/properties/a" * WALK_LIMIT


def test_lint_reports_the_cut_even_under_a_high_threshold(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = run(
        capsys, "lint", "--surface", str(_bfcl(tmp_path)), "--max-depth", "100000", "--json"
    )
    assert code == 0
    rules = [f["rule"] for f in json.loads(out)["findings"]]
    assert rules.count("schema-too-deep") == 1


def test_a_schema_within_the_walk_gets_no_cut_finding(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    surface = str(_bfcl(tmp_path, levels=WALK_LIMIT - 1))
    code, out, _ = run(capsys, "lint", "--surface", surface, "--json")
    assert code == 0
    findings = json.loads(out)["findings"]
    (deep,) = [f for f in findings if f["rule"] == "schema-too-deep"]
    assert deep["message"] == f"the schema nests {WALK_LIMIT} levels deep (threshold 5)"
    assert sum(f["rule"] == "param-undescribed" for f in findings) == WALK_LIMIT - 1


def test_lint_fix_refuses_a_schema_deeper_than_its_walk(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    fixed = tmp_path / "fixed.json"
    code, _, err = run(
        capsys,
        "lint",
        "--surface",
        str(_bfcl(tmp_path)),
        "--profile",
        "openai-strict",
        "--fix",
        "--out",
        str(fixed),
    )
    assert code == 2
    assert "tool 'x': its schema nests deeper than lint walks" in err
    assert not fixed.exists()


def test_lint_fix_sessions_refuses_a_corpus_without_calls(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    garbage = tmp_path / "logs"
    garbage.mkdir()
    (garbage / "x.jsonl").write_bytes(bytes(range(256)) * 8)
    (garbage / "y.jsonl").write_text('{"a": 1}\n{"trunc')
    fixed = tmp_path / "fixed.json"
    argv = ["lint", "--surface", str(DEMO / "surface.json"), "--profile", "openai-strict"]
    argv += ["--fix", "--out", str(fixed), "--sessions", str(garbage)]
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert "0 traces" in err and "--allow-empty accepts an empty corpus" in err
    assert "recorded successful calls" not in out
    assert not fixed.exists()
    code, out, _ = run(capsys, *argv, "--allow-empty")
    assert code == 1  # the demo surface keeps findings no rewrite fixes
    assert "all 0 recorded successful calls" in out
    assert fixed.exists()
