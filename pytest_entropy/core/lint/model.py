"""Lint records: a finding, the rule catalogue, the options and a provider profile.

A provider profile is data (one JSON file per provider, shipped beside the sources layer and
parsed here by :func:`profile_from_value`), so updating a provider is a data change. Nothing
in this package reads a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_entropy.core.errors import EntropyInputError

__all__ = [
    "CHECK_KINDS",
    "ERROR",
    "INFO",
    "RULES",
    "WARNING",
    "Finding",
    "LintOptions",
    "Profile",
    "ProfileRule",
    "RuleInfo",
    "profile_from_value",
]

ERROR: Final = "error"
WARNING: Final = "warning"
INFO: Final = "info"


@dataclass(frozen=True, slots=True)
class Finding:
    """One violation: ``pointer`` is the JSON pointer inside the tool's schema (``""`` for
    the schema itself); ``profile`` names the provider profile of a provider rule.

    A finding inside a root definition (``$defs``/``definitions``) is reported once for
    every tool that references it: ``definition`` is then the definition (``#/$defs/Name``),
    ``ref`` the first of ``tools``, the tools where it was found, in surface order."""

    rule: str
    severity: str
    ref: str
    pointer: str
    message: str
    fix: str | None = None
    profile: str | None = None
    definition: str | None = None
    tools: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule": self.rule,
            "severity": self.severity,
            "ref": self.ref,
            "pointer": self.pointer,
            "message": self.message,
            "fix": self.fix,
            "profile": self.profile,
        }
        if self.definition is not None:
            out["definition"] = self.definition
            out["tools"] = list(self.tools)
        return out

    @property
    def affected(self) -> tuple[str, ...]:
        """The tools this finding is about: its ``tools``, else its ``ref``."""
        return self.tools or (self.ref,)


@dataclass(frozen=True, slots=True)
class RuleInfo:
    """A rule of the catalogue: id, severity, family and one line saying what it finds."""

    id: str
    severity: str
    family: str
    summary: str
    source: str | None = None


RULES: Final = (
    RuleInfo("schema-empty", ERROR, "hygiene", "the input schema describes no parameters"),
    RuleInfo("schema-invalid", ERROR, "hygiene", "not a valid JSON Schema for its dialect"),
    RuleInfo("param-untyped", WARNING, "hygiene", "a parameter without a type"),
    RuleInfo("param-undescribed", WARNING, "hygiene", "a parameter without a description"),
    RuleInfo("tool-undescribed", WARNING, "hygiene", "a tool without a description"),
    RuleInfo("enum-duplicate", WARNING, "hygiene", "an enum listing a value twice"),
    RuleInfo("enum-single", WARNING, "hygiene", "an enum of one value (use const)"),
    RuleInfo("required-unknown", ERROR, "hygiene", "a required name that no property declares"),
    RuleInfo("ref-unresolved", ERROR, "hygiene", "a $ref that does not resolve in the schema"),
    RuleInfo("name-invalid", ERROR, "hygiene", "a tool name outside MCP's 1-128 [A-Za-z0-9_-./]"),
    RuleInfo("name-duplicate", ERROR, "hygiene", "two tools of one name"),
    RuleInfo("surface-too-many-tools", WARNING, "size", "more tools than the threshold"),
    RuleInfo("schema-too-deep", WARNING, "size", "a schema nested deeper than the threshold"),
    RuleInfo("schema-too-large", WARNING, "size", "a schema larger than the threshold (bytes)"),
    RuleInfo("definition-unused", INFO, "hygiene", "a $defs entry that no schema references"),
)


@dataclass(frozen=True, slots=True)
class LintOptions:
    """Thresholds of the size rules and the rule selection (exact ids or ``prefix*``)."""

    max_tools: int = 20
    max_depth: int = 5
    max_schema_bytes: int = 8192
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def wants(self, rule: str) -> bool:
        """Whether ``rule`` runs: selected (or nothing selected) and not ignored."""
        if self.select and not any(_matches(pattern, rule) for pattern in self.select):
            return False
        return not any(_matches(pattern, rule) for pattern in self.ignore)


def _matches(pattern: str, rule: str) -> bool:
    if pattern.endswith("*"):
        return rule.startswith(pattern[:-1])
    return pattern == rule


# The check kinds a profile rule may use, and the parameters each needs.
CHECK_KINDS: Final = {
    "object-closed": (),
    "all-required": (),
    "keywords": ("keywords",),
    "formats": ("allowed",),
    "root-type": ("type",),
    "root-keywords": ("keywords",),
    "type-list": (),
    "max-depth": ("limit",),
    "max-properties": ("limit",),
    "max-enum-values": ("limit",),
    "name": ("pattern", "maxLength"),
    "max-tools": ("limit",),
}


@dataclass(frozen=True, slots=True)
class ProfileRule:
    """One provider rule: its id, the check kind, the kind's parameters and its source."""

    id: str
    check: str
    summary: str
    source: str
    fix: str | None = None
    parameters: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Profile:
    """A provider profile: what the provider's strict or function-calling mode refuses or
    ignores, and what ``lint --fix`` may do to satisfy it."""

    id: str
    title: str
    checked: str
    rules: tuple[ProfileRule, ...]
    fixes: frozenset[str] = frozenset()

    def rule(self, rule_id: str) -> ProfileRule | None:
        return next((rule for rule in self.rules if rule.id == rule_id), None)


_FIX_ACTIONS: Final = frozenset({"close-objects", "require-all-nullable", "move-keywords"})


def profile_from_value(value: Any, *, source: str | None = None) -> Profile:
    """Parse and check a profile document (see ``docs/lint.md`` for the format)."""

    def fail(problem: str) -> EntropyInputError:
        return EntropyInputError(f"lint profile: {problem}", source=source)

    if type(value) is not dict:
        raise fail("must be a JSON object")
    for key in ("id", "title", "checked"):
        if type(value.get(key)) is not str or not value[key]:
            raise fail(f"{key!r} must be a non-empty string")
    rules_value = value.get("rules")
    if type(rules_value) is not list or not rules_value:
        raise fail("'rules' must be a non-empty array")
    rules: list[ProfileRule] = []
    seen: set[str] = set()
    for position, entry in enumerate(rules_value):
        if type(entry) is not dict:
            raise fail(f"rule {position} is not an object")
        for key in ("id", "check", "summary", "source"):
            if type(entry.get(key)) is not str or not entry[key]:
                raise fail(f"rule {position}: {key!r} must be a non-empty string")
        kind = entry["check"]
        if kind not in CHECK_KINDS:
            raise fail(f"rule {entry['id']}: unknown check {kind!r}")
        if entry["id"] in seen:
            raise fail(f"rule {entry['id']} is listed twice")
        seen.add(entry["id"])
        parameters = {
            key: item
            for key, item in entry.items()
            if key not in ("id", "check", "summary", "source", "fix")
        }
        missing = [name for name in CHECK_KINDS[kind] if name not in parameters]
        if missing:
            raise fail(f"rule {entry['id']}: check {kind} needs {', '.join(missing)}")
        fix = entry.get("fix")
        if fix is not None and type(fix) is not str:
            raise fail(f"rule {entry['id']}: 'fix' must be a string")
        rules.append(
            ProfileRule(entry["id"], kind, entry["summary"], entry["source"], fix, parameters)
        )
    fixes = value.get("fix", [])
    if type(fixes) is not list or any(item not in _FIX_ACTIONS for item in fixes):
        raise fail(f"'fix' must be an array of {', '.join(sorted(_FIX_ACTIONS))}")
    return Profile(value["id"], value["title"], value["checked"], tuple(rules), frozenset(fixes))
