"""``pytest-entropy lint`` in-process: outputs, exit codes, SARIF validity and descriptions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main

DATA = Path(__file__).resolve().parents[1] / "data"
DEMO_SURFACE = Path(__file__).resolve().parents[2] / "corpora" / "demo" / "surface.json"

CLEAN_TOOL = {
    "name": "search",
    "description": "Search the index.",
    "inputSchema": {
        "type": "object",
        "properties": {"q": {"type": "string", "description": "the query"}},
        "required": ["q"],
        "additionalProperties": False,
    },
}
EMPTY_TOOL = {
    "name": "create_issue",
    "description": "Create an issue.",
    "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#"},
}
OPTIONAL_TOOL = {
    "name": "list",
    "inputSchema": {"type": "object", "properties": {"page": {"type": "integer", "minimum": 1}}},
}


def _write(tmp_path: Path, *tools: dict[str, Any], name: str = "tools.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"tools": list(tools)}, indent=2))
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["lint", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_clean_mcp_surface_passes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "--surface", _write(tmp_path, CLEAN_TOOL))
    assert code == 0
    assert out == "no findings in 1 tools\n"


def test_an_error_finding_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "--surface", _write(tmp_path, CLEAN_TOOL, EMPTY_TOOL))
    assert code == 1
    assert "schema-empty" in out and "create_issue" in out
    assert out.splitlines()[-1] == "1 findings (1 errors, 0 warnings) in 1 of 2 tools"


def test_warnings_alone_exit_0(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "--surface", _write(tmp_path, OPTIONAL_TOOL))
    assert code == 0
    assert "tool-undescribed" in out and "param-undescribed" in out


def test_json_shape(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "--surface", _write(tmp_path, EMPTY_TOOL, OPTIONAL_TOOL), "--json")
    assert code == 1
    value = json.loads(out)
    assert list(value) == ["findings"]
    first = value["findings"][0]
    assert first == {
        "rule": "schema-empty",
        "severity": "error",
        "ref": "create_issue",
        "pointer": "",
        "message": "the input schema describes no parameters: any arguments pass",
        "fix": 'declare "properties" (an empty object for a tool without parameters)',
        "profile": None,
    }
    assert json.loads(
        run(capsys, "--surface", _write(tmp_path, EMPTY_TOOL), "--output-format", "json")[1]
    ) == {"findings": [first]}


def test_profiles_add_their_rules(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    surface = _write(tmp_path, OPTIONAL_TOOL)
    code, out, _ = run(capsys, "--surface", surface, "--profile", "openai-strict", "--json")
    assert code == 1
    rules = {finding["rule"] for finding in json.loads(out)["findings"]}
    assert {"strict-additional-properties", "strict-required-all"} <= rules
    code, out, _ = run(
        capsys, "--surface", surface, "--profile", "openai-strict,mcp", "--select", "strict-*"
    )
    assert code == 1
    assert "tool-undescribed" not in out


def test_ignore_everything_that_fails(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    surface = _write(tmp_path, EMPTY_TOOL)
    assert run(capsys, "--surface", surface, "--ignore", "schema-empty")[0] == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--profile", "openai"], "unknown lint profile 'openai'"),
        (["--select", "no-such-rule"], "no lint rule matches 'no-such-rule'"),
    ],
)
def test_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    code, _, err = run(capsys, "--surface", _write(tmp_path, CLEAN_TOOL), *argv)
    assert code == 2
    assert message in err


def test_an_unreadable_surface_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "--surface", str(tmp_path / "missing.json"))
    assert code == 2
    assert "missing.json" in err


def test_a_snapshot_with_descriptions(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "surface.json"
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "actions": [
                    {"ref": "a", "description": "A.", "inputSchema": CLEAN_TOOL["inputSchema"]},
                    {"ref": "b", "inputSchema": CLEAN_TOOL["inputSchema"]},
                ],
            }
        )
    )
    code, out, _ = run(capsys, "--surface", str(path), "--json")
    assert code == 0
    assert [(f["rule"], f["ref"]) for f in json.loads(out)["findings"]] == [
        ("tool-undescribed", "b")
    ]


def test_markdown(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(
        capsys, "--surface", _write(tmp_path, EMPTY_TOOL), "--output-format", "markdown"
    )
    assert code == 1
    assert out.startswith("## Schema lint: FAIL\n")
    assert "| `schema-empty` | error | 1 |" in out


def _sarif_validator() -> Any:
    from jsonschema import Draft4Validator

    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    return Draft4Validator(schema, format_checker=Draft4Validator.FORMAT_CHECKER)


def test_sarif_is_valid_sarif_2_1_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    surface = _write(tmp_path, CLEAN_TOOL, EMPTY_TOOL, OPTIONAL_TOOL)
    code, out, _ = run(
        capsys, "--surface", "tools.json", "--profile", "openai-strict", "--output-format", "sarif"
    )
    assert code == 1
    log = json.loads(out)
    errors = sorted(_sarif_validator().iter_errors(log), key=str)
    assert errors == []
    (run_,) = log["runs"]
    assert run_["results"]
    lines = Path(surface).read_text().splitlines()
    for result in run_["results"]:
        assert result["ruleId"] and result["level"] in ("error", "warning")
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == "tools.json"
        tool = location["logicalLocations"][0]["name"]
        assert tool in ("search", "create_issue", "list")
        # The region points at the tool's name in the file.
        assert f'"name": "{tool}"' in lines[physical["region"]["startLine"] - 1]
    rule_ids = [rule["id"] for rule in run_["tool"]["driver"]["rules"]]
    assert {result["ruleId"] for result in run_["results"]} == set(rule_ids)
    for result in run_["results"]:
        assert rule_ids[result["ruleIndex"]] == result["ruleId"]


def test_the_sarif_schema_catches_a_broken_log() -> None:
    # The validator is not vacuous: a result without a message is refused.
    broken = {
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"ruleId": "r"}]}],
    }
    assert list(_sarif_validator().iter_errors(broken))


def test_the_demo_surface_has_only_description_warnings(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "--surface", str(DEMO_SURFACE), "--json")
    assert code == 0
    findings = json.loads(out)["findings"]
    assert {(f["rule"], f["severity"]) for f in findings} == {
        ("tool-undescribed", "warning"),
        ("param-undescribed", "warning"),
    }
    assert sum(f["rule"] == "tool-undescribed" for f in findings) == 7


def test_descriptions_are_kept_only_when_asked(tmp_path: Path) -> None:
    from pytest_entropy.core.status import surface_hash
    from pytest_entropy.ingest.surfaces import load_surface

    path = _write(tmp_path, CLEAN_TOOL)
    plain = load_surface(path)
    assert plain["actions"] == [{"ref": "search", "inputSchema": CLEAN_TOOL["inputSchema"]}]
    described = load_surface(path, descriptions=True)
    assert described["actions"][0]["description"] == "Search the index."
    # The surface hash of a tool list never sees descriptions.
    assert surface_hash(load_surface(path)) == surface_hash(plain)


def test_fix_writes_a_surface_that_satisfies_the_profile(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    surface = _write(tmp_path, CLEAN_TOOL, OPTIONAL_TOOL)
    fixed = tmp_path / "fixed.json"
    code, out, _ = run(
        capsys, "--surface", surface, "--fix", "--profile", "openai-strict", "--out", str(fixed)
    )
    assert code == 0, out
    assert "--- list" in out and '+  "additionalProperties": false' in out
    assert "Fixed 1 of 2 tools for openai-strict" in out
    code, out, _ = run(capsys, "--surface", str(fixed), "--profile", "openai-strict", "--json")
    assert [f for f in json.loads(out)["findings"] if f["profile"]] == []
    assert json.loads(fixed.read_text())["actions"][1]["inputSchema"]["properties"]["page"] == {
        "type": ["integer", "null"],
        "minimum": 1,
    }


def test_fix_with_the_demo_sessions(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    sessions = str(DEMO_SURFACE.parent / "sessions")
    fixed = str(tmp_path / "fixed.json")
    argv = ["--surface", str(DEMO_SURFACE), "--fix", "--profile", "openai-strict", "--out", fixed]
    code, out, _ = run(capsys, *argv, "--sessions", sessions, "--json")
    value = json.loads(out)
    assert value["sessions"] == {"checked": 11, "refused": 0, "refusedByRef": {}}
    # The demo's dotted refs are no OpenAI function names: a rename is no schema rewrite.
    assert {f["rule"] for f in value["remaining"]} == {"strict-name-invalid"}
    assert code == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--fix", "--out", "x.json"], "--fix needs exactly one --profile"),
        (["--fix", "--profile", "mcp", "--out", "x.json"], "'mcp' defines no fix"),
        (["--fix", "--profile", "openai-strict"], "--fix needs --out FILE"),
        (["--out", "x.json"], "--out and --sessions go with --fix"),
    ],
)
def test_fix_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    code, _, err = run(capsys, "--surface", _write(tmp_path, CLEAN_TOOL), *argv)
    assert code == 2
    assert message in err


def test_fix_writes_nothing_for_a_surface_it_cannot_compare(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The fixed surface was written, then the containment diff refused the duplicate name.
    first = {"name": "t", "inputSchema": {"type": "object"}}
    second = {"name": "t", "inputSchema": {"type": "object", "properties": {"a": {}}}}
    surface = _write(tmp_path, first, second)
    fixed = tmp_path / "fixed.json"
    argv = ["--surface", surface, "--profile", "openai-strict", "--fix", "--out", str(fixed)]
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert f"{surface}: the before surface lists the tool 't' twice" in err
    assert not fixed.exists()
