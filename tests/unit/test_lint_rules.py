"""Every hygiene and size rule: one surface that trips it and one that does not."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.lint import RULES, Finding, LintOptions, check_rule_patterns, lint_surface

OBJECT: dict[str, Any] = {
    "type": "object",
    "properties": {"q": {"type": "string", "description": "the query"}},
    "required": ["q"],
}


def _tool(
    schema: Any = None, *, ref: str = "search", description: Any = "Search."
) -> dict[str, Any]:
    action = {"ref": ref, "inputSchema": OBJECT if schema is None else schema}
    if description is not None:
        action["description"] = description
    return action


def _surface(*actions: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "actions": list(actions)}


def _param(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"p": schema}, "required": ["p"]}


def _described(schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": "a parameter", **schema}


SMALL = LintOptions(max_tools=2, max_depth=2, max_schema_bytes=200)

# rule -> (surface that trips it, surface that does not)
CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "schema-empty": (
        _surface(_tool({"$schema": "http://json-schema.org/draft-07/schema#"})),
        _surface(_tool({"type": "object", "properties": {}})),
    ),
    "schema-invalid": (
        _surface(_tool({"type": "object", "properties": {"q": {"type": "text"}}})),
        _surface(_tool()),
    ),
    "param-untyped": (
        _surface(_tool(_param({"description": "anything"}))),
        _surface(_tool(_param(_described({"type": "integer"})))),
    ),
    "param-undescribed": (
        _surface(_tool(_param({"type": "integer"}))),
        _surface(_tool(_param(_described({"type": "integer"})))),
    ),
    "tool-undescribed": (
        _surface(_tool(description=None)),
        _surface(_tool(description="Search the index; use it before reading a file.")),
    ),
    "enum-duplicate": (
        _surface(_tool(_param(_described({"enum": ["a", "b", "a"]})))),
        _surface(_tool(_param(_described({"enum": ["a", "b", 1, True]})))),
    ),
    "enum-single": (
        _surface(_tool(_param(_described({"enum": ["only"]})))),
        _surface(_tool(_param(_described({"const": "only"})))),
    ),
    "required-unknown": (
        _surface(_tool({**OBJECT, "required": ["q", "missing"]})),
        _surface(
            _tool(
                {
                    **OBJECT,
                    "oneOf": [{"required": ["q"]}],
                    "patternProperties": {"^x-": {"type": "string"}},
                    "required": ["q", "x-trace"],
                }
            )
        ),
    ),
    "ref-unresolved": (
        _surface(_tool(_param({"$ref": "#/$defs/missing"}))),
        _surface(_tool({**_param({"$ref": "#/$defs/id"}), "$defs": {"id": {"type": "integer"}}})),
    ),
    "definition-unused": (
        _surface(_tool({**OBJECT, "$defs": {"id": _described({"type": "integer"})}})),
        _surface(_tool({**_param({"$ref": "#/$defs/id"}), "$defs": {"id": {"type": "integer"}}})),
    ),
    "name-invalid": (
        _surface(_tool(ref="search the web")),
        _surface(_tool(ref="github.search_issues/v2-beta")),
    ),
    "name-duplicate": (
        _surface(_tool(), _tool()),
        _surface(_tool(), _tool(ref="other")),
    ),
    "surface-too-many-tools": (
        _surface(_tool(ref="a"), _tool(ref="b"), _tool(ref="c")),
        _surface(_tool(ref="a"), _tool(ref="b")),
    ),
    "schema-too-deep": (
        _surface(_tool(_param(_described({"type": "array", "items": {"type": "string"}})))),
        _surface(_tool()),
    ),
    "schema-too-large": (
        _surface(_tool(_param({"type": "string", "description": "x" * 300}))),
        _surface(_tool()),
    ),
}


def _rules(findings: list[Finding]) -> set[str]:
    return {finding.rule for finding in findings}


def test_every_rule_of_the_catalogue_has_a_case() -> None:
    assert set(CASES) == {rule.id for rule in RULES}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_the_failing_example_trips_the_rule(rule: str) -> None:
    failing, _ = CASES[rule]
    findings = lint_surface(failing, options=SMALL)
    assert rule in _rules(findings)
    found = next(finding for finding in findings if finding.rule == rule)
    expected = next(entry.severity for entry in RULES if entry.id == rule)
    assert found.severity == expected
    assert found.message


@pytest.mark.parametrize("rule", sorted(CASES))
def test_the_passing_example_does_not(rule: str) -> None:
    _, passing = CASES[rule]
    assert rule not in _rules(lint_surface(passing, options=SMALL))


def test_a_clean_tool_has_no_findings() -> None:
    assert lint_surface(_surface(_tool())) == []


def test_pointers_name_the_place_inside_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"a/b": {"type": "object", "properties": {"c~d": {"enum": [1, 1.0]}}}},
    }
    findings = lint_surface(_surface(_tool(schema)))
    duplicate = next(f for f in findings if f.rule == "enum-duplicate")
    assert duplicate.pointer == "/properties/a~1b/properties/c~0d/enum/1"


def test_external_refs_are_reported_and_never_fetched() -> None:
    findings = lint_surface(_surface(_tool(_param({"$ref": "https://example.com/s.json"}))))
    unresolved = next(f for f in findings if f.rule == "ref-unresolved")
    assert "never fetched" in unresolved.message
    assert unresolved.pointer == "/properties/p/$ref"


def test_an_unknown_dialect_is_invalid_without_a_warning() -> None:
    schema = {**OBJECT, "$schema": "https://example.com/my-dialect"}
    findings = lint_surface(_surface(_tool(schema)))
    assert [f.pointer for f in findings if f.rule == "schema-invalid"] == ["/$schema"]


def test_schema_invalid_uses_the_dialect_named() -> None:
    # exclusiveMinimum is a boolean in draft 4 and a number from draft 6 on.
    bound = _described({"type": "number", "minimum": 0, "exclusiveMinimum": True})
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", **_param(bound)}
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", **_param(bound)}
    assert "schema-invalid" not in _rules(lint_surface(_surface(_tool(draft4))))
    assert "schema-invalid" in _rules(lint_surface(_surface(_tool(draft7))))


def test_select_and_ignore() -> None:
    surface = CASES["param-undescribed"][0]
    assert _rules(lint_surface(surface, options=LintOptions(ignore=("param-*",)))) == set()
    only = lint_surface(CASES["tool-undescribed"][0], options=LintOptions(select=("tool-*",)))
    assert _rules(only) == {"tool-undescribed"}


def test_a_pattern_matching_no_rule_is_refused() -> None:
    with pytest.raises(EntropyInputError, match="no lint rule matches 'param-untypd'"):
        check_rule_patterns(LintOptions(select=("param-untypd",)))
    check_rule_patterns(LintOptions(select=("param-*",), ignore=("schema-empty",)))


def test_findings_serialise_with_the_documented_keys() -> None:
    finding = lint_surface(CASES["schema-empty"][0])[0]
    assert list(finding.to_json()) == [
        "rule",
        "severity",
        "ref",
        "pointer",
        "message",
        "fix",
        "profile",
    ]


def test_a_deep_schema_does_not_exhaust_the_stack() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(3000):
        schema = {"type": "array", "items": schema}
    options = LintOptions(max_schema_bytes=10**9)
    findings = lint_surface(_surface(_tool(_param(schema))), options=options)
    assert "schema-too-deep" in _rules(findings)
    assert "schema-invalid" not in _rules(findings)
    schema["items"]["type"] = "text"
    findings = lint_surface(_surface(_tool(_param(schema))), options=options)
    assert [f.pointer for f in findings if f.rule == "schema-invalid"] == [
        "/properties/p/items/type"
    ]
