"""The provider profiles: every rule fails and passes once, every keyword and format has its
own test, and the shipped files are well-formed data with a source for every rule."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.lint import Profile, ProfileRule, lint_surface, profile_from_value
from pytest_entropy.sources.lint_profiles import load_profile, load_profiles, profile_names

SHIPPED = ("anthropic", "gemini", "mcp", "openai-strict")
PROFILES = {name: load_profile(name) for name in SHIPPED}


def _rules_of(check: str) -> list[tuple[str, ProfileRule]]:
    return [
        (profile.id, rule)
        for profile in PROFILES.values()
        for rule in profile.rules
        if rule.check == check
    ]


def _ids(cases: list[Any]) -> list[str]:
    return [case[1].id if isinstance(case[1], ProfileRule) else str(case) for case in cases]


def _hits(profile: str, rule: str, schema: Any, *, ref: str = "tool", tools: int = 1) -> list[str]:
    actions = [{"ref": ref if n == 0 else f"{ref}{n}", "inputSchema": schema} for n in range(tools)]
    findings = lint_surface({"version": 1, "actions": actions}, [PROFILES[profile]])
    return [finding.pointer for finding in findings if finding.rule == rule]


def _closed(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def test_the_shipped_profiles() -> None:
    assert profile_names() == sorted(SHIPPED)
    for profile in PROFILES.values():
        assert profile.checked.startswith("from the documentation as known on ")
        for rule in profile.rules:
            assert rule.source.startswith("https://"), rule.id
            assert rule.summary and rule.fix


def test_openai_strict_has_the_rules_the_issue_names() -> None:
    ids = {rule.id for rule in PROFILES["openai-strict"].rules}
    assert {
        "strict-additional-properties",
        "strict-required-all",
        "strict-unsupported-keyword",
        "strict-format",
        "strict-too-deep",
        "strict-name-invalid",
    } <= ids


KEYWORD_CASES = [
    (profile, rule, keyword)
    for profile, rule in _rules_of("keywords")
    for keyword in rule.parameters["keywords"]
]


@pytest.mark.parametrize(
    ("profile", "rule", "keyword"),
    KEYWORD_CASES,
    ids=[f"{rule.id}:{keyword}" for _, rule, keyword in KEYWORD_CASES],
)
def test_each_unsupported_keyword(profile: str, rule: ProfileRule, keyword: str) -> None:
    plain = {"type": "string", "description": "d"}

    def tool(parameter: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": {"p": parameter}, "required": ["p"]}

    assert _hits(profile, rule.id, tool({**plain, keyword: {}})) == [f"/properties/p/{keyword}"]
    assert _hits(profile, rule.id, tool(plain)) == []


FORMAT_CASES = [
    (profile, rule, name)
    for profile, rule in _rules_of("formats")
    for name in rule.parameters["allowed"]
]


@pytest.mark.parametrize(
    ("profile", "rule", "name"),
    FORMAT_CASES,
    ids=[f"{rule.id}:{name}" for _, rule, name in FORMAT_CASES],
)
def test_each_supported_format_passes(profile: str, rule: ProfileRule, name: str) -> None:
    assert _hits(profile, rule.id, _closed({"p": {"type": "string", "format": name}})) == []


@pytest.mark.parametrize(("profile", "rule"), _rules_of("formats"), ids=_ids(_rules_of("formats")))
def test_an_unsupported_format_fails(profile: str, rule: ProfileRule) -> None:
    assert _hits(profile, rule.id, _closed({"p": {"type": "string", "format": "uri"}})) == [
        "/properties/p/format"
    ]


ROOT_KEYWORD_CASES = [
    (profile, rule, keyword)
    for profile, rule in _rules_of("root-keywords")
    for keyword in rule.parameters["keywords"]
]


@pytest.mark.parametrize(
    ("profile", "rule", "keyword"),
    ROOT_KEYWORD_CASES,
    ids=[f"{rule.id}:{keyword}" for _, rule, keyword in ROOT_KEYWORD_CASES],
)
def test_each_root_combinator(profile: str, rule: ProfileRule, keyword: str) -> None:
    branches: Any = {"type": "object"} if keyword == "not" else [_closed({})]
    assert _hits(profile, rule.id, {**_closed({}), keyword: branches}) == [f"/{keyword}"]
    # One level down the same keyword is no root combinator.
    assert _hits(profile, rule.id, _closed({"p": {keyword: branches}})) == []


@pytest.mark.parametrize(
    ("profile", "rule"), _rules_of("root-type"), ids=_ids(_rules_of("root-type"))
)
def test_the_root_must_be_an_object(profile: str, rule: ProfileRule) -> None:
    assert _hits(profile, rule.id, {"type": "array", "items": {"type": "string"}}) == [""]
    assert _hits(profile, rule.id, _closed({})) == []


@pytest.mark.parametrize(
    ("profile", "rule"), _rules_of("object-closed"), ids=_ids(_rules_of("object-closed"))
)
def test_every_object_must_be_closed(profile: str, rule: ProfileRule) -> None:
    inner = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
    assert _hits(profile, rule.id, _closed({"o": inner})) == ["/properties/o"]
    assert _hits(profile, rule.id, _closed({"o": {**inner, "additionalProperties": False}})) == []


@pytest.mark.parametrize(
    ("profile", "rule"), _rules_of("all-required"), ids=_ids(_rules_of("all-required"))
)
def test_every_property_must_be_required(profile: str, rule: ProfileRule) -> None:
    schema = {**_closed({"a": {"type": "string"}, "b": {"type": "string"}}), "required": ["a"]}
    assert _hits(profile, rule.id, schema) == ["/properties/b"]
    assert _hits(profile, rule.id, _closed({"a": {"type": "string"}})) == []


@pytest.mark.parametrize(
    ("profile", "rule"), _rules_of("type-list"), ids=_ids(_rules_of("type-list"))
)
def test_a_list_of_types(profile: str, rule: ProfileRule) -> None:
    assert _hits(profile, rule.id, _closed({"p": {"type": ["string", "null"]}})) == [
        "/properties/p/type"
    ]
    assert _hits(profile, rule.id, _closed({"p": {"type": "string", "nullable": True}})) == []


def _nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels - 1):
        schema = _closed({"n": schema})
    return schema


@pytest.mark.parametrize(
    ("profile", "rule"), _rules_of("max-depth"), ids=_ids(_rules_of("max-depth"))
)
def test_nesting_limit(profile: str, rule: ProfileRule) -> None:
    limit = rule.parameters["limit"]
    assert len(_hits(profile, rule.id, _nested(limit + 1))) == 1
    assert _hits(profile, rule.id, _nested(limit)) == []


@pytest.mark.parametrize(
    ("profile", "rule"), _rules_of("max-properties"), ids=_ids(_rules_of("max-properties"))
)
def test_property_count_limit(profile: str, rule: ProfileRule) -> None:
    limit = rule.parameters["limit"]
    many = {f"p{n}": {"type": "string"} for n in range(limit + 1)}
    assert _hits(profile, rule.id, _closed(many)) == [""]
    many.pop("p0")
    assert _hits(profile, rule.id, _closed(many)) == []


@pytest.mark.parametrize(
    ("profile", "rule"), _rules_of("max-enum-values"), ids=_ids(_rules_of("max-enum-values"))
)
def test_enum_value_limit(profile: str, rule: ProfileRule) -> None:
    limit = rule.parameters["limit"]
    values = list(range(limit + 1))
    assert _hits(profile, rule.id, _closed({"p": {"enum": values}})) == [""]
    assert _hits(profile, rule.id, _closed({"p": {"enum": values[:-1]}})) == []


NAME_CASES = {
    "openai-strict": ("mcp.github.search", "search_issues-v2"),
    "anthropic": ("search.issues", "search_issues-v2"),
    "gemini": ("1search", "search.issues:v2"),
    "mcp": ("search/issues", "search.issues-v_2"),
}


@pytest.mark.parametrize(("profile", "rule"), _rules_of("name"), ids=_ids(_rules_of("name")))
def test_tool_names(profile: str, rule: ProfileRule) -> None:
    bad, good = NAME_CASES[profile]
    assert _hits(profile, rule.id, _closed({}), ref=bad) == [""]
    assert _hits(profile, rule.id, _closed({}), ref=good) == []
    too_long = "a" * (rule.parameters["maxLength"] + 1)
    assert _hits(profile, rule.id, _closed({}), ref=too_long) == [""]


@pytest.mark.parametrize(
    ("profile", "rule"), _rules_of("max-tools"), ids=_ids(_rules_of("max-tools"))
)
def test_tool_count_limit(profile: str, rule: ProfileRule) -> None:
    limit = rule.parameters["limit"]
    assert _hits(profile, rule.id, _closed({}), tools=limit + 1) == [""]
    assert _hits(profile, rule.id, _closed({}), tools=limit) == []


def test_every_shipped_rule_is_exercised_above() -> None:
    tested = {"keywords", "formats", "root-keywords", "root-type", "object-closed"}
    tested |= {"all-required", "type-list", "max-depth", "max-properties", "max-enum-values"}
    tested |= {"name", "max-tools"}
    for profile in PROFILES.values():
        for rule in profile.rules:
            assert rule.check in tested, rule.id


def test_provider_findings_are_errors_naming_the_profile() -> None:
    findings = lint_surface(
        {"version": 1, "actions": [{"ref": "t", "inputSchema": {"type": "object"}}]},
        [PROFILES["openai-strict"]],
    )
    strict = [f for f in findings if f.rule == "strict-additional-properties"]
    assert strict
    assert {(f.severity, f.profile) for f in strict} == {("error", "openai-strict")}


def test_a_profile_file_by_path(tmp_path: Any) -> None:
    path = tmp_path / "mine.json"
    path.write_text(
        '{"id": "mine", "title": "Mine", "checked": "today", "rules": [{"id": "mine-no-enum",'
        ' "check": "keywords", "keywords": ["enum"], "summary": "s", "source": "https://x"}]}'
    )
    (profile,) = load_profiles([str(path)])
    assert isinstance(profile, Profile)
    assert profile.rule("mine-no-enum") is not None


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ([], "must be a JSON object"),
        ({"id": "x", "title": "t", "checked": "c", "rules": []}, "non-empty array"),
        (
            {
                "id": "x",
                "title": "t",
                "checked": "c",
                "rules": [{"id": "r", "check": "nope", "summary": "s", "source": "u"}],
            },
            "unknown check 'nope'",
        ),
        (
            {
                "id": "x",
                "title": "t",
                "checked": "c",
                "rules": [{"id": "r", "check": "keywords", "summary": "s", "source": "u"}],
            },
            "needs keywords",
        ),
    ],
)
def test_a_broken_profile_is_refused(value: Any, problem: str) -> None:
    with pytest.raises(EntropyInputError, match=problem):
        profile_from_value(value, source="p.json")


def test_an_unknown_profile_name() -> None:
    with pytest.raises(EntropyInputError, match="unknown lint profile 'openai'"):
        load_profile("openai")
