"""Lint findings rendered for people and machines: text, Markdown, JSON and SARIF 2.1.0.

SARIF is what GitHub code scanning reads: every result carries ``ruleId``, ``level``, a
``physicalLocation`` (the surface file, at the tool's line where it is known) and
``logicalLocations[0].name`` = the tool, so findings show on pull requests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from pytest_entropy._version import __version__
from pytest_entropy.core.canonical import stable_json_hash
from pytest_entropy.core.lint import RULES, Finding, Profile
from pytest_entropy.report.names import markdown_code, markdown_text

__all__ = [
    "SARIF_SCHEMA_URI",
    "findings_json",
    "lint_markdown_lines",
    "lint_sarif",
    "lint_text_lines",
]

SARIF_SCHEMA_URI: Final = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
INFORMATION_URI: Final = "https://pypi.org/project/pytest-entropy/"


def findings_json(findings: Sequence[Finding]) -> dict[str, Any]:
    """``{"findings": [{rule, severity, ref, pointer, message, fix, profile}]}``."""
    return {"findings": [finding.to_json() for finding in findings]}


def _counts(findings: Sequence[Finding], tools: int) -> str:
    errors = sum(1 for finding in findings if finding.severity == "error")
    notes = sum(1 for finding in findings if finding.severity == "info")
    warnings = len(findings) - errors - notes
    touched = len({ref for finding in findings for ref in finding.affected})
    info = f", {notes} info" if notes else ""
    return (
        f"{len(findings)} findings ({errors} errors, {warnings} warnings{info}) in {touched} of"
        f" {tools} tools"
    )


# How many tool names a line of text names for a definition's finding, and how many rows
# of detail the Markdown summary shows per rule.
_NAMED_TOOLS: Final = 3
MARKDOWN_ROWS_PER_RULE: Final = 10


def _shared(finding: Finding) -> str:
    """`` [in 24 tools: a, b, c and 21 more]`` for a finding several tools share, else ``""``."""
    if len(finding.tools) < 2:
        return ""
    named = ", ".join(finding.tools[:_NAMED_TOOLS])
    more = len(finding.tools) - _NAMED_TOOLS
    rest = f" and {more} more" if more > 0 else ""
    return f" [in {len(finding.tools)} tools: {named}{rest}]"


def lint_text_lines(findings: Sequence[Finding], tools: int) -> list[str]:
    """One line per finding (severity, rule, tool, pointer, message, fix, and the tools that
    share a definition's finding), then a count."""
    lines = []
    for finding in findings:
        where = f"{finding.ref}#{finding.pointer}" if finding.pointer else finding.ref
        fix = f" (fix: {finding.fix})" if finding.fix else ""
        lines.append(
            f"{finding.severity:<7} {finding.rule:<28} {where}: {finding.message}{fix}"
            + _shared(finding)
        )
    lines.append(_counts(findings, tools) if findings else f"no findings in {tools} tools")
    return lines


def _tool_cell(finding: Finding) -> str:
    """The tool column: the tool, and how many more share a definition's finding."""
    cell = markdown_code(finding.ref, table=True)
    if len(finding.tools) > 1:
        cell += f" and {len(finding.tools) - 1} more"
    return cell


def lint_markdown_lines(
    findings: Sequence[Finding], tools: int, *, rows_per_rule: int = MARKDOWN_ROWS_PER_RULE
) -> list[str]:
    """A Markdown summary: counts per rule, then one section per rule with its first
    ``rows_per_rule`` findings (the rest counted), so a large surface stays readable and
    within a CI step summary's size."""
    verdict = "FAIL" if any(f.severity == "error" for f in findings) else "PASS"
    lines = [f"## Schema lint: {verdict}", "", _counts(findings, tools) + ".", ""]
    if not findings:
        return lines
    lines += ["| Rule | Severity | Count |", "| --- | --- | ---: |"]
    by_rule: dict[tuple[str, str], list[Finding]] = {}
    for finding in findings:
        by_rule.setdefault((finding.rule, finding.severity), []).append(finding)
    ordered = sorted(by_rule.items())
    for (rule, severity), mine in ordered:
        lines.append(
            f"| {markdown_code(rule, table=True)} | {markdown_text(severity)} | {len(mine)} |"
        )
    for (rule, severity), mine in ordered:
        touched = len({ref for finding in mine for ref in finding.affected})
        lines += [
            "",
            f"### {markdown_code(rule)} ({markdown_text(severity)}):"
            f" {len(mine)} findings in {touched} tools",
            "",
            "| Tool | Pointer | Message |",
            "| --- | --- | --- |",
        ]
        for finding in mine[:rows_per_rule]:
            lines.append(
                f"| {_tool_cell(finding)} | {markdown_code(finding.pointer or '/', table=True)} |"
                f" {markdown_text(finding.message)} |"
            )
        if len(mine) > rows_per_rule:
            lines += [
                "",
                f"_... and {len(mine) - rows_per_rule} more {markdown_code(rule)} findings"
                " (`--output-format text` or `json` lists them all)._",
            ]
    return lines


def _level(severity: str) -> str:
    """SARIF's ``level`` of a severity: ``info`` is a ``note`` there."""
    return "note" if severity == "info" else severity


def _rule_descriptors(
    findings: Sequence[Finding], profiles: Sequence[Profile]
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    catalogue: dict[str, tuple[str, str, str | None]] = {
        rule.id: (rule.summary, _level(rule.severity), None) for rule in RULES
    }
    for profile in profiles:
        for provider_rule in profile.rules:
            catalogue[provider_rule.id] = (
                f"{profile.title}: {provider_rule.summary}",
                "error",
                provider_rule.source,
            )
    used = list(dict.fromkeys(finding.rule for finding in findings))
    descriptors = []
    for rule_id in used:
        summary, level, source = catalogue.get(rule_id, (rule_id, "warning", None))
        descriptor: dict[str, Any] = {
            "id": rule_id,
            "name": rule_id,
            "shortDescription": {"text": summary},
            "defaultConfiguration": {"level": level},
        }
        if source is not None:
            descriptor["helpUri"] = source
        descriptors.append(descriptor)
    return descriptors, {rule_id: index for index, rule_id in enumerate(used)}


def _properties(finding: Finding) -> dict[str, Any]:
    """A result's property bag: the pointer and profile, and for a definition's finding the
    definition and every tool that shares it."""
    bag: dict[str, Any] = {"pointer": finding.pointer, "profile": finding.profile}
    if finding.definition is not None:
        bag["definition"] = finding.definition
        bag["tools"] = list(finding.tools)
    return bag


def lint_sarif(
    findings: Sequence[Finding],
    *,
    artifact_uri: str,
    profiles: Sequence[Profile] = (),
    lines: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one run: ``artifact_uri`` is the surface file (relative to the
    repository root for code scanning), ``lines`` the 1-based line of each tool in it."""
    descriptors, index = _rule_descriptors(findings, profiles)
    lines = lines or {}
    results = []
    for finding in findings:
        message = finding.message + (f" Fix: {finding.fix}." if finding.fix else "")
        logical_name = finding.ref
        fingerprint = stable_json_hash([finding.rule, finding.ref, finding.pointer])
        results.append(
            {
                "ruleId": finding.rule,
                "ruleIndex": index[finding.rule],
                "level": _level(finding.severity),
                "message": {"text": message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": artifact_uri},
                            "region": {"startLine": lines.get(finding.ref, 1)},
                        },
                        "logicalLocations": [
                            {
                                "name": logical_name,
                                "fullyQualifiedName": f"{logical_name}#{finding.pointer}",
                                "kind": "function",
                            }
                        ],
                    }
                ],
                "partialFingerprints": {"entropyLint/v1": fingerprint},
                "properties": _properties(finding),
            }
        )
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "pytest-entropy lint",
                        "version": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": descriptors,
                    }
                },
                "artifacts": [{"location": {"uri": artifact_uri}}],
                "results": results,
            }
        ],
    }


def fix_diff_lines(tools: Sequence[Any]) -> list[str]:
    """Per changed tool: its changes, then a unified diff of its schema as indented JSON."""
    import difflib
    import json

    lines: list[str] = []
    for tool in tools:
        lines.append(f"--- {tool.ref}")
        lines.extend(f"  {change}" for change in tool.changes)
        before = json.dumps(tool.before, indent=2, ensure_ascii=False).splitlines()
        after = json.dumps(tool.after, indent=2, ensure_ascii=False).splitlines()
        diff = difflib.unified_diff(
            before, after, f"{tool.ref} (before)", f"{tool.ref} (after)", lineterm="", n=1
        )
        lines.extend(diff)
    return lines
