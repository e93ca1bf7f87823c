"""``lint`` on a generated surface (every tool carries the same catalogue of ``$defs``, as
OpenAPI-generated servers do): Markdown grouped and capped, SARIF valid with the merged
findings, text naming the tools that share one, and the SARIF lines of every tool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from pytest_entropy.cli.app import main
from pytest_entropy.report.json_schemas import schema_for
from pytest_entropy.report.lint import MARKDOWN_ROWS_PER_RULE

DATA = Path(__file__).resolve().parents[1] / "data"
TOOLS = 40
DEFINITIONS = 30


def _catalogue() -> dict[str, Any]:
    # Thirty definitions, each with three undescribed properties (three warnings apiece).
    return {
        f"Model{index}": {
            "type": "object",
            "description": f"model {index}",
            "properties": {name: {"type": "string"} for name in ("id", "name", "kind")},
        }
        for index in range(DEFINITIONS)
    }


def _tool(index: int) -> dict[str, Any]:
    properties: dict[str, Any] = {
        f"arg{n}": {"type": "integer"}
        for n in range(12)  # twelve undescribed parameters
    }
    properties["body"] = {"$ref": f"#/$defs/Model{index % 10}", "description": "the body"}
    return {
        "name": f"api_call_{index}",
        "description": f"Call {index}.",
        "inputSchema": {"type": "object", "properties": properties, "$defs": _catalogue()},
    }


def _surface(tmp_path: Path) -> str:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": [_tool(i) for i in range(TOOLS)]}, indent=2))
    return str(path)


def _lint(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    main(["lint", "--max-tools", "1000", *argv])
    return capsys.readouterr().out


def test_markdown_is_grouped_by_rule_with_capped_rows(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    surface = _surface(tmp_path)
    document = json.loads(_lint(capsys, "--surface", surface, "--json"))
    errors = Draft202012Validator(schema_for("lint")).iter_errors(document)
    assert sorted(errors, key=str) == []
    findings = document["findings"]
    undescribed = [f for f in findings if f["rule"] == "param-undescribed"]
    # 12 per tool of its own, plus 3 for each of the 10 definitions the tools use (once
    # each, not once per tool that carries it: that would be 40 x 30 x 3 more).
    assert len(undescribed) == TOOLS * 12 + 10 * 3
    markdown = _lint(capsys, "--surface", surface, "--output-format", "markdown")
    lines = markdown.splitlines()
    assert f"| `param-undescribed` | warning | {len(undescribed)} |" in lines
    heading = f"### `param-undescribed` (warning): {len(undescribed)} findings in {TOOLS} tools"
    start = lines.index(heading)
    rows = [line for line in lines[start + 4 :] if line.startswith("| `")]
    section = lines[start + 4 : start + 4 + MARKDOWN_ROWS_PER_RULE]
    assert section == rows[:MARKDOWN_ROWS_PER_RULE]
    more = len(undescribed) - MARKDOWN_ROWS_PER_RULE
    assert f"_... and {more} more `param-undescribed` findings" in markdown
    # Every rule's section holds at most the cap, so the summary stays small.
    assert sum(line.startswith("| `api_call_") for line in lines) <= 3 * MARKDOWN_ROWS_PER_RULE
    assert len(markdown.encode("utf-8")) < 8_000


def test_text_names_the_tools_that_share_a_definition_finding(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = _lint(capsys, "--surface", _surface(tmp_path))
    line = next(line for line in out.splitlines() if "#/$defs/Model3/properties/id:" in line)
    assert line.startswith("warning param-undescribed")
    assert "api_call_3#/$defs/Model3/properties/id" in line
    assert line.endswith("[in 4 tools: api_call_3, api_call_13, api_call_23 and 1 more]")
    assert out.splitlines()[-1].endswith(f"in {TOOLS} of {TOOLS} tools")


def test_sarif_with_merged_findings_is_valid_sarif_2_1_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jsonschema import Draft4Validator

    monkeypatch.chdir(tmp_path)
    _surface(tmp_path)
    out = _lint(
        capsys, "--surface", "tools.json", "--profile", "openai-strict", "--output-format", "sarif"
    )
    log = json.loads(out)
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    validator = Draft4Validator(schema, format_checker=Draft4Validator.FORMAT_CHECKER)
    assert sorted(validator.iter_errors(log), key=str) == []
    (run,) = log["runs"]
    shared = [r for r in run["results"] if "definition" in r["properties"]]
    assert shared
    for result in shared:
        tools = result["properties"]["tools"]
        assert result["locations"][0]["logicalLocations"][0]["name"] == tools[0]
        assert result["properties"]["definition"].startswith("#/$defs/Model")
    notes = [r for r in run["results"] if r["ruleId"] == "definition-unused"]
    assert len(notes) == DEFINITIONS - 10 and {r["level"] for r in notes} == {"note"}
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert rules["definition-unused"]["defaultConfiguration"]["level"] == "note"
    # One descriptor per rule used, however many results it has.
    assert len(rules) == len(run["tool"]["driver"]["rules"])
    assert set(rules) == {r["ruleId"] for r in run["results"]}


def test_sarif_lines_of_every_tool(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Names written raw (non-ASCII) or with an escape are found where they stand (each
    # tool's "name" member), as plain ones are.
    monkeypatch.chdir(tmp_path)
    names = ["café", "a/b", "plain", "last"]
    tools = [{"name": name, "inputSchema": {}} for name in names]
    tools[2]["inputSchema"] = {"type": "object", "properties": {}}
    text = json.dumps({"tools": tools}, indent=2, ensure_ascii=False).replace("a/b", "a\\/b")
    (tmp_path / "tools.json").write_text(text, encoding="utf-8")
    log = json.loads(_lint(capsys, "--surface", "tools.json", "--output-format", "sarif"))
    lines = text.splitlines()
    where = {
        result["locations"][0]["logicalLocations"][0]["name"]: result["locations"][0][
            "physicalLocation"
        ]["region"]["startLine"]
        for result in log["runs"][0]["results"]
        if result["ruleId"] == "schema-empty"
    }
    assert set(where) == {"café", "a/b", "last"}
    for name, line in where.items():
        member = json.dumps(name, ensure_ascii=False).replace("/", "\\/")
        assert lines[line - 1].strip().startswith(f'"name": {member}'), (name, line)
