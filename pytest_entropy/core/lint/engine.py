"""``lint_surface``: every rule over every tool of a surface, findings in tool order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.lint.definitions import (
    carries_definitions,
    merge_definition_findings,
    referenced,
)
from pytest_entropy.core.lint.hygiene import hygiene_findings, size_findings, surface_findings
from pytest_entropy.core.lint.model import RULES, Finding, LintOptions, Profile
from pytest_entropy.core.lint.providers import profile_surface_findings, profile_tool_findings
from pytest_entropy.core.lint.walk import subschemas

__all__ = ["check_rule_patterns", "has_errors", "lint_surface", "rule_ids"]


def rule_ids(profiles: Sequence[Profile] = ()) -> list[str]:
    """The ids of the hygiene and size rules, then of each profile's rules."""
    return [rule.id for rule in RULES] + [rule.id for p in profiles for rule in p.rules]


def check_rule_patterns(options: LintOptions, profiles: Sequence[Profile] = ()) -> None:
    """Refuse a ``--select``/``--ignore`` pattern that matches no rule (a typo would
    otherwise silently select nothing)."""
    known = rule_ids(profiles)
    for pattern in (*options.select, *options.ignore):
        probe = LintOptions(select=(pattern,))
        if not any(probe.wants(rule) for rule in known):
            raise EntropyInputError(f"no lint rule matches {pattern!r}")


def lint_surface(
    surface: Mapping[str, Any],
    profiles: Sequence[Profile] = (),
    options: LintOptions | None = None,
) -> list[Finding]:
    """Every finding of the hygiene and size rules, and of each profile's rules, on a
    surface snapshot ``{version: 1, actions: [{ref, inputSchema, description?}]}``.

    Findings come in tool order; within a tool: names, hygiene, size, then the profiles in
    the order given. ``options`` selects rules and sets the size thresholds. A finding
    inside a root ``$defs``/``definitions`` entry is reported only where a tool references
    the entry, once for all the tools that share it (:mod:`~.definitions`).

    >>> [f.rule for f in lint_surface({"version": 1, "actions": [
    ...     {"ref": "t", "description": "d", "inputSchema": {}}]})]
    ['schema-empty']
    """
    options = options or LintOptions()
    actions = list(surface.get("actions") or ())
    refs = [str(action.get("ref")) for action in actions]
    per_tool: list[list[Finding]] = [[] for _ in actions]
    placed = list(surface_findings(refs, options=options))
    for profile in profiles:
        placed.extend(profile_surface_findings(profile, refs))
    for position, finding in placed:
        per_tool[position].append(finding)
    meta_cache: dict[Any, Any] = {}
    schemas = [action.get("inputSchema") for action in actions]
    # The root definitions each tool's body references (computed while its nodes exist).
    used_of: list[set[tuple[str, str]]] = []
    for position, action in enumerate(actions):
        ref = refs[position]
        schema = schemas[position]
        nodes = list(subschemas(schema))
        used_of.append(referenced(nodes) if carries_definitions(schema) else set())
        findings = per_tool[position]
        findings.extend(
            hygiene_findings(ref, action, options=options, nodes=nodes, meta_cache=meta_cache)
        )
        findings.extend(size_findings(ref, schema, options=options, nodes=nodes))
        for profile in profiles:
            findings.extend(profile_tool_findings(profile, ref, schema, nodes))
    wanted = [
        [finding for finding in findings if options.wants(finding.rule)] for findings in per_tool
    ]
    tool_wide = frozenset(
        rule.id for profile in profiles for rule in profile.rules if rule.check == "max-depth"
    )
    merged = merge_definition_findings(refs, schemas, used_of, wanted, tool_wide_rules=tool_wide)
    return [finding for findings in merged for finding in findings if options.wants(finding.rule)]


def has_errors(findings: Sequence[Finding]) -> bool:
    """Whether any finding has error severity (the command's exit 1)."""
    return any(finding.severity == "error" for finding in findings)
