"""The ratchet baseline: tracked numbers fall freely, never rise; CI never creates one."""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.core.canonical import stable_json_hash
from pytest_entropy.core.meter import measure
from pytest_entropy.state.config import is_ci
from pytest_entropy.testing.ratchet import (
    BASELINE_KIND,
    check_baseline,
    read_baseline,
    tracked_values,
)

STR = {"type": "string"}


def surface(**schemas: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "actions": [{"ref": ref.replace("_", "."), "inputSchema": s} for ref, s in schemas.items()],
    }


def closed(**properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": sorted(properties),
        "properties": properties,
    }


TIGHT = surface(mcp_render=closed(format={"type": "string", "enum": ["pdf", "html"]}))
LOOSE = surface(mcp_render=closed(format=STR))


def test_surface_values_are_the_freedom_total_and_per_ref() -> None:
    tracked = tracked_values(TIGHT)
    schemas = {"mcp.render": TIGHT["actions"][0]["inputSchema"]}
    assert tracked.to_json() == {
        "kind": "surface",
        "freedomTotal": 0.166667,
        "refs": {"mcp.render": 0.166667},
        "schemas": schemas,
        "schemasHash": stable_json_hash(schemas),
    }


def test_report_values_are_score_split_and_rejections() -> None:
    report = measure([{"operations": [{"ref": "pi.read", "args": {}, "outcome": "succeeded"}]}])
    tracked = tracked_values(report)
    assert tracked.to_json() == {
        "kind": "report",
        "score": 0,
        "staticScore": 0,
        "behavioralScore": 0,
        "invocationRejectionsPer1k": 0,
        "tools": ["pi.read"],
    }
    assert tracked_values(report.to_json()) == tracked
    with pytest.raises(TypeError, match="surface snapshot"):
        tracked_values(42)


def test_missing_baseline_is_created_locally_and_fails_in_ci(tmp_path: Path) -> None:
    path = tmp_path / "entropy-baseline.json"
    missing = check_baseline(path, "s", TIGHT, ci=True)
    assert (missing.status, missing.passed) == ("missing", False)
    assert "CI never creates one" in missing.message()
    assert not path.exists()
    created = check_baseline(path, "s", TIGHT)
    assert (created.status, created.passed) == ("created", True)
    assert read_baseline(path) == {"s": tracked_values(TIGHT).to_json()}


def test_a_rise_fails_and_names_what_rose(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    check_baseline(path, "s", TIGHT)
    result = check_baseline(path, "s", LOOSE, ci=True)
    assert (result.status, result.passed) == ("rose", False)
    message = result.message()
    assert "entropy rose above the baseline 's'" in message
    assert "freedom total: 0.166667 → 1 (+0.833333)" in message
    assert "mcp.render freedom: 0.166667 → 1" in message
    assert "run with --entropy-update" in message


def test_a_fall_passes_and_says_the_baseline_can_be_lowered(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    check_baseline(path, "s", LOOSE)
    before = path.read_bytes()
    result = check_baseline(path, "s", TIGHT, ci=True)
    assert (result.status, result.passed, result.can_lower) == ("lowered", True, True)
    assert "the baseline can be lowered" in result.message()
    assert path.read_bytes() == before  # a check never rewrites without --entropy-update


def test_a_surface_of_no_tools_fails_against_an_entry_with_tools(tmp_path: Path) -> None:
    # Dropping every tool lowered every number, so a server that listed nothing passed.
    path = tmp_path / "b.json"
    check_baseline(path, "s", TIGHT)
    before = path.read_bytes()
    nothing = {"version": 1, "actions": []}
    result = check_baseline(path, "s", nothing)
    assert (result.status, result.passed) == ("emptied", False)
    assert "the surface lists no tool, where the baseline 's'" in result.message()
    assert f"has {len(TIGHT['actions'])} tools" in result.message()
    assert path.read_bytes() == before
    assert check_baseline(path, "s", nothing, update=True).status == "updated"
    assert check_baseline(path, "s", nothing).status == "unchanged"  # recorded on purpose


def test_the_tolerance_is_one_millionth(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    base = tracked_values(TIGHT).to_json()
    for rise, status in ((0.9e-6, "unchanged"), (1.1e-6, "rose")):
        entry = copy.deepcopy(base)
        # Numbers only (an entry without schemas): the same schemas would explain any rise.
        del entry["schemas"], entry["schemasHash"]
        entry["freedomTotal"] -= rise
        entry["refs"]["mcp.render"] -= rise
        path.write_text(json.dumps({"kind": BASELINE_KIND, "version": 1, "entries": {"s": entry}}))
        assert check_baseline(path, "s", TIGHT).status == status


def test_new_tools_are_a_rise_unless_allowed(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    check_baseline(path, "s", TIGHT)
    grown = copy.deepcopy(TIGHT)
    grown["actions"].append({"ref": "mcp.const", "inputSchema": {"const": 1}})
    strict = check_baseline(path, "s", grown)
    assert strict.status == "rose"
    assert "mcp.const: new tool (freedom 0)" in strict.message()
    allowed = check_baseline(path, "s", grown, allow_new_tools=True)
    assert (allowed.status, allowed.passed) == ("unchanged", True)
    assert [change.label for change in allowed.new_tools] == ["mcp.const"]


def test_removed_tools_are_a_fall(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    both = surface(mcp_a=closed(x=STR), mcp_b=closed(y=STR))
    check_baseline(path, "s", both)
    result = check_baseline(path, "s", surface(mcp_a=closed(x=STR)))
    assert result.status == "lowered"
    assert "mcp.b: no longer present (was 1)" in result.message()


def test_update_rewrites_and_keeps_other_entries(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    check_baseline(path, "a", TIGHT)
    check_baseline(path, "b", TIGHT)
    result = check_baseline(path, "a", LOOSE, update=True, ci=True)
    assert (result.status, result.passed) == ("updated", True)
    entries = read_baseline(path)
    assert entries == {"a": tracked_values(LOOSE).to_json(), "b": tracked_values(TIGHT).to_json()}
    assert check_baseline(path, "a", LOOSE).status == "unchanged"


def test_the_file_is_canonical_and_stable(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    check_baseline(path, "z", TIGHT)
    check_baseline(path, "a", LOOSE)
    text = path.read_text()
    assert text.endswith("}\n")
    assert text.index('"a"') < text.index('"z"')  # canonical key order
    assert '"freedomTotal": 1,' in text  # JavaScript number text
    check_baseline(path, "a", LOOSE, update=True)
    assert path.read_text() == text


@pytest.mark.parametrize(
    "content", ["{ nope", '{"kind": "other"}', f'{{"kind": "{BASELINE_KIND}", "version": 1}}']
)
def test_a_damaged_baseline_fails_and_is_left_alone(tmp_path: Path, content: str) -> None:
    path = tmp_path / "b.json"
    path.write_text(content)
    for update in (False, True):
        result = check_baseline(path, "s", TIGHT, update=update)
        assert (result.status, result.passed) == ("damaged", False)
        assert "never overwritten" in result.message()
    assert path.read_text() == content


def test_a_surface_entry_cannot_check_a_report(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    check_baseline(path, "s", TIGHT)
    report = measure([{"operations": [{"ref": "pi.read", "args": {}, "outcome": "succeeded"}]}])
    result = check_baseline(path, "s", report)
    assert (result.status, result.passed) == ("kind-mismatch", False)


def test_concurrent_writers_lose_no_entry(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    names = [f"test-{index}" for index in range(12)]
    threads = [threading.Thread(target=check_baseline, args=(path, name, TIGHT)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(read_baseline(path) or {}) == sorted(names)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, False), ("", False), ("0", False), ("false", False), ("FALSE", False),
     (" false ", False), ("1", True), ("true", True), ("yes", True), ("GitHub", True)],
)  # fmt: skip
def test_is_ci(value: str | None, expected: bool) -> None:
    environ = {} if value is None else {"CI": value}
    assert is_ci(environ) is expected
