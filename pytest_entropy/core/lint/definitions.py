"""Findings inside a schema's definitions (``$defs`` / ``definitions``), reported once.

Code generators (OpenAPI to MCP, for one) copy the whole component catalogue into the
``$defs`` of every tool, whether the tool uses an entry or not. Linting each tool on its own
then reports one problem of a shared definition once per tool that carries it (Notion's
server: 576 of its 615 findings; issue 26, item 14). Here a finding whose pointer lies inside
a root definition is kept only when its tool references that definition (directly or through
other definitions), and findings that are the same in several tools (same definition by
name and content, same rule, pointer and message) become one, placed at the first of those
tools and naming them all. A definition that no tool references gets one
``definition-unused`` note that counts the findings left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final
from urllib.parse import unquote

from pytest_entropy.core.canonical import sha256
from pytest_entropy.core.lint.model import INFO, Finding
from pytest_entropy.core.lint.walk import Node, escape

__all__ = [
    "DEFINITION_KEYWORDS",
    "carries_definitions",
    "definition_of",
    "merge_definition_findings",
    "referenced",
]

DEFINITION_KEYWORDS: Final = ("$defs", "definitions")

# Rules whose one finding sums up the whole tool (the deepest node of all, the size): where
# their pointer lands says nothing about a definition, so they stay with their tool.
_TOOL_WIDE_RULES: Final = frozenset({"schema-too-deep"})
_TOOL_WIDE_CHECKS: Final = frozenset({"max-depth"})

# A definition: (keyword, its name as a pointer token).
Definition = tuple[str, str]


def definition_of(pointer: str) -> Definition | None:
    """The root definition a JSON pointer lies in (``/$defs/A/properties/x`` → ``($defs,
    A)``), or ``None`` outside every root definition (``/$defs`` itself included)."""
    for keyword in DEFINITION_KEYWORDS:
        prefix = f"/{keyword}/"
        if pointer.startswith(prefix):
            token = pointer[len(prefix) :].split("/", 1)[0]
            return keyword, token
    return None


def _target(ref: str, anchors: Mapping[str, str]) -> Definition | None:
    """The root definition a local ``$ref`` (or ``$dynamicRef``) points into."""
    if not ref.startswith("#"):
        return None  # external: never resolved, never a use of a local definition
    fragment = ref[1:]
    if fragment.startswith("/"):
        return definition_of(unquote(fragment))
    pointer = anchors.get(fragment)
    return None if pointer is None else definition_of(pointer)


def referenced(nodes: Sequence[Node]) -> set[Definition]:
    """The root definitions the schema's body uses, directly or through other definitions
    (``nodes``: the schema's subschemas, as :func:`~.walk.subschemas` yields them)."""
    anchors: dict[str, str] = {}
    for node in nodes:
        if type(node.schema) is dict:
            for keyword in ("$anchor", "$dynamicAnchor"):
                name = node.schema.get(keyword)
                if type(name) is str:
                    anchors.setdefault(name, node.pointer)
    edges: dict[Definition | None, set[Definition]] = {}
    for node in nodes:
        if type(node.schema) is not dict:
            continue
        for keyword in ("$ref", "$dynamicRef"):
            ref = node.schema.get(keyword)
            if type(ref) is str:
                target = _target(ref, anchors)
                if target is not None:
                    edges.setdefault(definition_of(node.pointer), set()).add(target)
    used: set[Definition] = set()
    pending = list(edges.get(None, ()))
    while pending:
        definition = pending.pop()
        if definition not in used:
            used.add(definition)
            pending.extend(edges.get(definition, ()))
    return used


def _digest(value: Any) -> str:
    """A digest of a definition's content, the same for the same JSON whatever the order
    of its keys."""
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (RecursionError, TypeError, ValueError):
        from pytest_entropy.core.canonical import canonical_json

        try:
            text = canonical_json(value)  # no nesting limit
        except (OverflowError, RecursionError, TypeError, ValueError):
            # An integer past the double range, say: this copy is then a definition of its
            # own, never merged with another tool's (nothing is lost, only repeated).
            return f"unmerged:{id(value)}"
    return sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def carries_definitions(schema: Any) -> bool:
    """Whether a schema has a non-empty root ``$defs`` or ``definitions``."""
    return type(schema) is dict and any(
        type(schema.get(keyword)) is dict and schema[keyword] for keyword in DEFINITION_KEYWORDS
    )


def _carried(schema: Any) -> dict[Definition, Any]:
    """The root definitions of a schema, by (keyword, pointer token)."""
    out: dict[Definition, Any] = {}
    if type(schema) is dict:
        for keyword in DEFINITION_KEYWORDS:
            entries = schema.get(keyword)
            if type(entries) is dict:
                for name, value in entries.items():
                    out[(keyword, escape(name))] = value
    return out


# A definition across tools: (keyword, token, content digest).
_Identity = tuple[str, str, str]


@dataclass(slots=True)
class _Group:
    """One finding of a definition and the tools it was found in, in tool order."""

    finding: Finding
    tools: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Unused:
    carriers: list[int] = field(default_factory=list)
    left_out: int = 0


def _tool_wide(finding: Finding, tool_wide_rules: frozenset[str]) -> bool:
    return finding.rule in _TOOL_WIDE_RULES or finding.rule in tool_wide_rules


def merge_definition_findings(
    refs: Sequence[str],
    schemas: Sequence[Any],
    used_of: Sequence[set[Definition]],
    per_tool: Sequence[Iterable[Finding]],
    *,
    tool_wide_rules: frozenset[str] = frozenset(),
) -> list[list[Finding]]:
    """Each tool's findings with those inside its root definitions merged across tools
    (``used_of``: the definitions each tool references, as :func:`referenced` finds them):
    dropped where the tool does not reference the definition, reported once (at the first
    tool, with ``definition`` and ``tools`` set) where several tools share it, and a
    ``definition-unused`` note for a definition that no tool references.

    ``tool_wide_rules``: the provider rules whose finding sums up the tool (``max-depth``
    checks), which stay where they are.
    """
    groups: dict[tuple[Any, ...], _Group] = {}
    unused: dict[_Identity, _Unused] = {}
    used_anywhere: set[_Identity] = set()
    out: list[list[Finding | _Group]] = []
    for position, findings in enumerate(per_tool):
        ref = refs[position]
        carried = _carried(schemas[position])
        if not carried:
            out.append(list(findings))
            continue
        identities = {key: (*key, _digest(value)) for key, value in carried.items()}
        used = used_of[position]
        for key, identity in identities.items():
            if key in used:
                used_anywhere.add(identity)
            else:
                unused.setdefault(identity, _Unused()).carriers.append(position)
        mine: list[Finding | _Group] = []
        for finding in findings:
            definition = definition_of(finding.pointer)
            if (
                definition is None
                or definition not in identities
                or _tool_wide(finding, tool_wide_rules)
            ):
                mine.append(finding)
                continue
            identity = identities[definition]
            if definition not in used:
                unused[identity].left_out += 1
                continue
            group_key = (
                identity,
                finding.rule,
                finding.severity,
                finding.pointer,
                finding.message,
                finding.fix,
                finding.profile,
            )
            group = groups.get(group_key)
            if group is None:
                group = groups[group_key] = _Group(finding)
                mine.append(group)
            if not group.tools or group.tools[-1] != ref:
                group.tools.append(ref)
        out.append(mine)
    for identity, entry in unused.items():
        if identity in used_anywhere:
            continue  # another tool's copy of the same definition is used and checked there
        keyword, token, _ = identity
        first = entry.carriers[0]
        out[first].append(_unused_finding(refs, entry, keyword, token))
    return [
        [_settle(item) if isinstance(item, _Group) else item for item in findings]
        for findings in out
    ]


def _settle(group: _Group) -> Finding:
    keyword, token = definition_of(group.finding.pointer) or ("", "")
    return replace(group.finding, definition=f"#/{keyword}/{token}", tools=tuple(group.tools))


def _name(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _unused_finding(refs: Sequence[str], entry: _Unused, keyword: str, token: str) -> Finding:
    carriers = len(entry.carriers)
    where = "the tool that carries it" if carriers == 1 else f"any of the {carriers} tools"
    left_out = f"; its {entry.left_out} findings are not reported" if entry.left_out else ""
    return Finding(
        "definition-unused",
        INFO,
        refs[entry.carriers[0]],
        f"/{keyword}/{token}",
        f"definition {_name(token)!r} is referenced by no schema: not by {where}{left_out}",
        f"drop it from {keyword}, or reference it",
        definition=f"#/{keyword}/{token}",
        tools=tuple(dict.fromkeys(refs[position] for position in entry.carriers)),
    )
