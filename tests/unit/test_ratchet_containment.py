"""The ratchet and the assertion fail on every loosening, naming tool, path and rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.testing.assertions import assert_no_entropy_increase
from pytest_entropy.testing.ratchet import check_baseline, read_baseline
from tests.unit.test_containment import LOOSENINGS


def _tools(schema: Any) -> dict[str, Any]:
    """An MCP ``tools/list`` result: the ratchet takes it as it is."""
    return {"tools": [{"name": "tool", "inputSchema": schema}]}


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [case[1:] for case in LOOSENINGS],
    ids=[case[0] for case in LOOSENINGS],
)
def test_each_kind_of_loosening_fails_the_ratchet_naming_the_path(
    tmp_path: Path, before: Any, after: Any, expected: set[tuple[str, str]]
) -> None:
    path = tmp_path / "entropy-baseline.json"
    assert check_baseline(path, "s", _tools(before)).status == "created"
    result = check_baseline(path, "s", _tools(after), ci=True)
    assert not result.passed
    assert {(c.path, c.rule) for c in result.loosened} == expected
    message = result.message()
    named = [f"tool:{where}: {rule} (" if where else f"tool: {rule} (" for where, rule in expected]
    for text in named:
        assert f"  loosened: {text}" in message
    with pytest.raises(AssertionError) as failure:
        assert_no_entropy_increase(_tools(before), _tools(after))
    for text in named:
        assert f"  loosened: {text}" in str(failure.value)
    # The reverse edit tightens: it passes both.
    back = tmp_path / "back.json"
    check_baseline(back, "s", _tools(after))
    assert check_baseline(back, "s", _tools(before), ci=True).passed
    assert_no_entropy_increase(_tools(after), _tools(before))


def test_untyping_a_parameter_fails_though_the_freedom_fell(tmp_path: Path) -> None:
    before = {"type": "object", "properties": {"query": {"type": "string"}}}
    after = {"type": "object", "properties": {"query": {}}}
    path = tmp_path / "b.json"
    check_baseline(path, "s", _tools(before))
    result = check_baseline(path, "s", _tools(after))
    assert (result.status, result.passed) == ("loosened", False)
    assert result.falls  # the v2 number fell: it alone would have said "lowered"
    assert result.lines()[1] == '  loosened: tool:query: type ("string" → null)'


def test_a_neutral_change_passes(tmp_path: Path) -> None:
    before = {"type": "object", "properties": {"q": {"type": "string"}}}
    after = {"type": "object", "properties": {"q": {"type": "string", "description": "d"}}}
    path = tmp_path / "b.json"
    check_baseline(path, "s", _tools(before))
    assert check_baseline(path, "s", _tools(after), ci=True).status == "unchanged"


def test_old_baselines_load_and_are_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    old = {"kind": "surface", "freedomTotal": 1.0, "refs": {"tool": 1.0}}
    path.write_text(
        json.dumps({"kind": "pytest-entropy.baseline", "version": 1, "entries": {"s": old}}),
        encoding="utf-8",
    )
    schema = {"type": "object", "properties": {"q": {}}, "additionalProperties": False}
    result = check_baseline(path, "s", _tools(schema), ci=True)
    assert result.passed and result.without_schemas
    assert "run with --entropy-update once to record them" in result.message()
    assert check_baseline(path, "s", _tools(schema), update=True).status == "updated"
    entry = (read_baseline(path) or {})["s"]
    assert entry["schemas"] == {"tool": schema} and len(entry["schemasHash"]) == 64
    upgraded = check_baseline(path, "s", _tools({"type": "object"}), ci=True)
    assert upgraded.status == "loosened"


def test_hand_edited_schemas_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    check_baseline(path, "s", _tools({"type": "object"}))
    value = json.loads(path.read_text(encoding="utf-8"))
    value["entries"]["s"]["schemas"]["tool"] = {}
    path.write_text(json.dumps(value), encoding="utf-8")
    result = check_baseline(path, "s", _tools({"type": "object"}))
    assert result.status == "damaged"
    assert "do not match 'schemasHash'" in result.message()


def test_accepting_a_loosening_per_change_with_a_reason(tmp_path: Path) -> None:
    before = {
        "type": "object",
        "properties": {"q": {"type": "string"}, "n": {"type": "integer", "maximum": 5}},
        "required": ["q"],
    }
    after = {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}}
    path = tmp_path / "b.json"
    check_baseline(path, "s", _tools(before))
    # Accepting one path leaves the other loosening failing.
    partial = check_baseline(path, "s", _tools(after), accept=["tool:n=wider range is fine"])
    assert not partial.passed
    assert [(c.path, c.rule) for c in partial.loosened] == [("q", "required")]
    entry = (read_baseline(path) or {})["s"]
    assert entry["accepted"] == [
        {"ref": "tool", "path": "n", "rule": "maximum", "reason": "wider range is fine"}
    ]
    # Later runs honour the file, without the flag; accepting the rest passes.
    assert not check_baseline(path, "s", _tools(after)).passed
    done = check_baseline(path, "s", _tools(after), accept=["tool:q"], ci=True)
    assert done.passed, done.message()
    assert "  accepted: tool:q: required (true → false)" in done.message()
    assert check_baseline(path, "s", _tools(after), ci=True).passed
    # An accepted loosening covers that change only: a new loosening fails again.
    worse = {**after, "properties": {**after["properties"], "q": {}}}
    assert [(c.path, c.rule) for c in check_baseline(path, "s", _tools(worse)).loosened] == [
        ("q", "type")
    ]
    # --entropy-update records the new schemas and drops the consumed acceptances.
    check_baseline(path, "s", _tools(after), update=True)
    assert "accepted" not in (read_baseline(path) or {})["s"]


def test_accepting_a_new_tool(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    one = {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}
    two = {"tools": [*one["tools"], {"name": "b", "inputSchema": {"type": "object"}}]}
    check_baseline(path, "s", one)
    assert check_baseline(path, "s", two).status == "rose"
    assert check_baseline(path, "s", two, accept=["b=new search tool"], ci=True).passed


def test_assertion_accepts_items_and_takes_any_surface() -> None:
    before = [{"name": "t", "inputSchema": {"type": "object", "required": ["q"]}}]
    after = [{"name": "t", "inputSchema": {"type": "object"}}]
    with pytest.raises(AssertionError, match=r"t:q: required"):
        assert_no_entropy_increase(before, after)
    result = assert_no_entropy_increase(
        before, after, accepted=[{"ref": "t", "path": "q", "reason": "optional now"}]
    )
    assert [c.where() for c in result.accepted] == ["t:q"]
