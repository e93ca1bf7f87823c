"""``pytest-entropy diff``: classification output, JSON shape, exit codes, baselines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main


def _tools(path: Path, **schemas: Any) -> str:
    path.write_text(
        json.dumps({"tools": [{"name": n, "inputSchema": s} for n, s in schemas.items()]}),
        encoding="utf-8",
    )
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


SEARCH = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}


def test_a_loosening_fails_and_names_tool_path_and_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _tools(tmp_path / "a.json", search=SEARCH)
    after = _tools(
        tmp_path / "b.json", search={**SEARCH, "properties": {"query": {}}, "required": []}
    )
    code, out, err = run(capsys, "diff", before, after)
    assert code == 1, err
    assert out.splitlines()[0].startswith("loosened 2 · tightened 0")
    assert '  loosened: search:query: type ("string" → null)' in out
    assert "  loosened: search:query: required (true → false)" in out
    code, out, _ = run(capsys, "diff", before, after, "--json")
    assert code == 1
    value = json.loads(out)
    assert set(value) >= {"loosened", "tightened", "added", "removed", "unknown", "freedom"}
    assert value["loosened"][0] == {
        "ref": "search",
        "path": "query",
        "rule": "required",
        "before": True,
        "after": False,
    }
    assert value["freedom"]["after"] <= value["freedom"]["before"]  # the v2 number did not rise


def test_tightening_and_neutral_changes_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _tools(tmp_path / "a.json", search=SEARCH)
    tighter = {**SEARCH, "properties": {"query": {"type": "string", "maxLength": 80}}}
    after = _tools(tmp_path / "b.json", search=tighter)
    code, out, _ = run(capsys, "diff", before, after)
    assert code == 0
    assert "  tightened: search:query: maxLength (null → 80)" in out
    reworded = {**SEARCH, "properties": {"query": {"type": "string", "description": "words"}}}
    code, out, _ = run(capsys, "diff", before, _tools(tmp_path / "c.json", search=reworded))
    assert code == 0
    assert "  neutral: search: annotation" in out


def test_a_new_tool_raises_the_freedom_total(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _tools(tmp_path / "a.json", search=SEARCH)
    after = _tools(tmp_path / "b.json", search=SEARCH, fetch=SEARCH)
    code, out, _ = run(capsys, "diff", before, after)
    assert code == 1
    assert "  added: fetch: tool" in out
    assert "the static freedom total rose" in out


def test_baseline_accepts_a_loosening(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _tools(tmp_path / "a.json", search=SEARCH)
    after = _tools(tmp_path / "b.json", search={**SEARCH, "required": []})
    baseline = tmp_path / "entropy-baseline.json"
    entry = {
        "kind": "surface",
        "freedomTotal": 1.0,
        "refs": {"search": 1.0},
        "accepted": [{"ref": "search", "path": "query", "rule": "required", "reason": "opt"}],
    }
    baseline.write_text(
        json.dumps({"kind": "pytest-entropy.baseline", "version": 1, "entries": {"s": entry}}),
        encoding="utf-8",
    )
    code, out, err = run(capsys, "diff", before, after, "--baseline", str(baseline))
    assert code == 0, out + err
    assert "  accepted: search:query: required" in out
    code, _, err = run(capsys, "diff", before, after, "--baseline", str(tmp_path / "none.json"))
    assert code == 2 and "baseline file not found" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"hello": 1}', "surface snapshot must be"),
        (
            '{"tools": [{"name": "a", "inputSchema": {}}, {"name": "a", "inputSchema": {}}]}',
            "'a' twice",
        ),
    ],
)
def test_bad_input_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    good = _tools(tmp_path / "a.json", search=SEARCH)
    code, _, err = run(capsys, "diff", good, str(bad))
    assert code == 2
    assert message in err
