"""Findings inside shared ``$defs``: reported once, at the definition, and only for the tools
that reference it (issue 26, item 14)."""

from __future__ import annotations

import copy
from typing import Any

from pytest_entropy.core.lint import Finding, LintOptions, lint_surface
from pytest_entropy.core.lint.definitions import definition_of, referenced
from pytest_entropy.core.lint.walk import subschemas
from pytest_entropy.sources.lint_profiles import load_profiles

# What an OpenAPI generator writes: every tool carries the whole catalogue of definitions.
# `address` has two problems (an undescribed property and a one-value enum); `wrapper`
# uses it; `colour` is clean and `orphan` (undescribed too) is used by nobody.
DEFINITIONS: dict[str, Any] = {
    "address": {
        "type": "object",
        "description": "a postal address",
        "properties": {
            "street": {"type": "string"},
            "kind": {"type": "string", "description": "kind", "enum": ["postal"]},
        },
    },
    "wrapper": {
        "type": "object",
        "description": "an envelope",
        "properties": {"to": {"$ref": "#/$defs/address", "description": "recipient"}},
    },
    "colour": {"type": "string", "description": "a colour", "enum": ["red", "blue"]},
    "orphan": {"type": "object", "properties": {"x": {"type": "integer"}}},
}


def _tool(ref: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "ref": ref,
        "description": f"The {ref} tool.",
        "inputSchema": {
            "type": "object",
            "properties": properties,
            "$defs": copy.deepcopy(DEFINITIONS),
        },
    }


def _uses(target: str) -> dict[str, Any]:
    return {"p": {"$ref": f"#/$defs/{target}", "description": "the parameter"}}


SURFACE: dict[str, Any] = {
    "version": 1,
    "actions": [
        _tool("direct", _uses("address")),
        _tool("colours", _uses("colour")),
        _tool("through_wrapper", _uses("wrapper")),
        _tool("plain", {"n": {"type": "integer", "description": "a number"}}),
    ],
}


def _inside(findings: list[Finding], name: str) -> list[Finding]:
    return [f for f in findings if f.pointer.startswith(f"/$defs/{name}/")]


def test_a_shared_definition_finding_is_reported_once_for_the_tools_that_use_it() -> None:
    findings = lint_surface(SURFACE)
    address = _inside(findings, "address")
    assert sorted((f.rule, f.pointer) for f in address) == [
        ("enum-single", "/$defs/address/properties/kind/enum"),
        ("param-undescribed", "/$defs/address/properties/street"),
    ]
    for finding in address:
        # At the first tool that references it, naming every tool that does (one of them
        # only through `wrapper`); not the tools that merely carry the definition.
        assert finding.ref == "direct"
        assert finding.tools == ("direct", "through_wrapper")
        assert finding.definition == "#/$defs/address"
        assert finding.to_json()["tools"] == ["direct", "through_wrapper"]
    assert not [f for f in findings if f.ref in ("colours", "plain") and "/$defs/" in f.pointer]


def test_an_unreferenced_definition_gets_one_note_and_none_of_its_findings() -> None:
    findings = lint_surface(SURFACE)
    assert _inside(findings, "orphan") == []
    (note,) = [f for f in findings if f.rule == "definition-unused"]
    assert note.severity == "info"
    assert (note.ref, note.pointer) == ("direct", "/$defs/orphan")
    assert note.definition == "#/$defs/orphan"
    assert note.tools == ("direct", "colours", "through_wrapper", "plain")
    # The left-out findings are counted, not silently dropped: one undescribed property
    # in each of the four copies.
    assert "its 4 findings are not reported" in note.message
    assert lint_surface(SURFACE, options=LintOptions(ignore=("definition-unused",))) == [
        f for f in findings if f.rule != "definition-unused"
    ]


def test_a_definition_used_by_one_tool_of_many_is_used() -> None:
    # "colour" is carried by four tools and referenced by one: no note.
    findings = lint_surface(SURFACE)
    assert not [f for f in findings if f.rule == "definition-unused" and "colour" in f.pointer]


def test_the_same_name_with_other_content_is_another_definition() -> None:
    surface = copy.deepcopy(SURFACE)
    changed = surface["actions"][2]["inputSchema"]["$defs"]["address"]
    changed["properties"]["street"]["format"] = "uri"
    findings = [f for f in lint_surface(surface) if f.rule == "param-undescribed"]
    street = [f for f in findings if f.pointer == "/$defs/address/properties/street"]
    assert [(f.ref, f.tools) for f in street] == [
        ("direct", ("direct",)),
        ("through_wrapper", ("through_wrapper",)),
    ]


def test_a_finding_that_depends_on_the_tool_stays_with_the_tools_that_have_it() -> None:
    # `link` refers to `target`, which only the second tool defines: the unresolved $ref
    # is the first tool's problem alone, although both carry the same `link`.
    link = {"type": "object", "description": "a link", "properties": {}, "$ref": "#/$defs/target"}

    def tool(ref: str, definitions: dict[str, Any]) -> dict[str, Any]:
        schema = {"type": "object", "properties": _uses("link"), "$defs": definitions}
        return {"ref": ref, "description": "d", "inputSchema": schema}

    surface = {
        "version": 1,
        "actions": [
            tool("lacks", {"link": link}),
            tool("has", {"link": link, "target": {"type": "object", "properties": {}}}),
        ],
    }
    unresolved = [f for f in lint_surface(surface) if f.rule == "ref-unresolved"]
    assert [(f.ref, f.pointer, f.tools) for f in unresolved] == [
        ("lacks", "/$defs/link/$ref", ("lacks",))
    ]


def test_profile_rules_are_merged_too() -> None:
    (strict,) = load_profiles(["openai-strict"])
    findings = lint_surface(SURFACE, [strict])
    closed = [
        f
        for f in findings
        if f.rule == "strict-additional-properties" and f.pointer == "/$defs/address"
    ]
    assert [(f.ref, f.tools) for f in closed] == [("direct", ("direct", "through_wrapper"))]
    # Each tool's own root object is still its own finding.
    roots = [f.ref for f in findings if f.rule == "strict-additional-properties" and not f.pointer]
    assert roots == ["direct", "colours", "through_wrapper", "plain"]


def test_references_follow_anchors_escapes_and_the_older_keyword() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#/definitions/a~1b"},
            "c": {"$ref": "#there"},
            "d": {"$ref": "#/definitions/with%20space/properties/x"},
        },
        "definitions": {
            "a/b": {"$ref": "#/definitions/chained"},
            "chained": {"type": "string"},
            "anchored": {"$anchor": "there", "type": "integer"},
            "with space": {"type": "object", "properties": {"x": {"type": "integer"}}},
            "loose": {"type": "null"},
            "cycle": {"$ref": "#/definitions/cycle"},
        },
    }
    assert referenced(list(subschemas(schema))) == {
        ("definitions", "a~1b"),
        ("definitions", "chained"),
        ("definitions", "anchored"),
        ("definitions", "with space"),
    }
    assert definition_of("/definitions/a~1b/type") == ("definitions", "a~1b")
    assert definition_of("/$defs") is None
    assert definition_of("/properties/$defs/x") is None


def test_a_surface_without_definitions_is_unchanged() -> None:
    # No $defs: findings carry no definition, and their JSON has exactly the old keys.
    schema = {"type": "object", "properties": {"q": {"type": "string", "enum": ["x"]}}}
    findings = lint_surface({"version": 1, "actions": [{"ref": "t", "inputSchema": schema}]})
    assert findings and all(f.definition is None and f.tools == () for f in findings)
    assert all("tools" not in f.to_json() for f in findings)


def test_anchor_refs_resolve_from_one_map_of_the_tool() -> None:
    # Several "#anchor" references in one tool: the known one resolves (the first subschema
    # declaring it, in walk order), the unknown one is reported.
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#here", "description": "a"},
            "b": {"$ref": "#here", "description": "b"},
            "c": {"$ref": "#nowhere", "description": "c"},
        },
        "$defs": {"one": {"$anchor": "here", "type": "string"}},
    }
    findings = lint_surface({"version": 1, "actions": [{"ref": "t", "inputSchema": schema}]})
    unresolved = [f.pointer for f in findings if f.rule == "ref-unresolved"]
    assert unresolved == ["/properties/c/$ref"]
    assert not [f for f in findings if f.rule == "definition-unused"]
