"""Provider-profile rules: each check kind of :data:`~.model.CHECK_KINDS`, run as the profile's
data says."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from pytest_entropy.core.lint.model import ERROR, Finding, Profile, ProfileRule
from pytest_entropy.core.lint.walk import Node, escape, is_object_schema, subschemas

__all__ = ["profile_surface_findings", "profile_tool_findings"]


def _found(profile: Profile, rule: ProfileRule, ref: str, pointer: str, message: str) -> Finding:
    return Finding(
        rule.id, ERROR, ref, pointer, f"{profile.title}: {message}", rule.fix, profile.id
    )


def _object_closed(nodes: Sequence[Node]) -> Iterator[tuple[str, str]]:
    for node in nodes:
        if is_object_schema(node.schema) and node.schema.get("additionalProperties") is not False:
            yield node.pointer, 'an object without "additionalProperties": false'


def _all_required(nodes: Sequence[Node]) -> Iterator[tuple[str, str]]:
    for node in nodes:
        properties = node.schema.get("properties") if type(node.schema) is dict else None
        if type(properties) is not dict:
            continue
        required = node.schema.get("required")
        listed = set(required) if type(required) is list else set()
        for name in properties:
            if name not in listed:
                yield (
                    f"{node.pointer}/properties/{escape(name)}",
                    f"property {name!r} is not listed in required",
                )


def _keywords(nodes: Sequence[Node], keywords: Sequence[str]) -> Iterator[tuple[str, str]]:
    wanted = set(keywords)
    for node in nodes:
        if type(node.schema) is dict:
            for keyword in node.schema:
                if keyword in wanted:
                    yield (
                        f"{node.pointer}/{escape(keyword)}",
                        f"keyword {keyword!r} is not supported",
                    )


def _formats(nodes: Sequence[Node], allowed: Sequence[str]) -> Iterator[tuple[str, str]]:
    for node in nodes:
        if type(node.schema) is dict:
            value = node.schema.get("format")
            if type(value) is str and value not in allowed:
                yield f"{node.pointer}/format", f"format {value!r} is not supported"


def _type_lists(nodes: Sequence[Node]) -> Iterator[tuple[str, str]]:
    for node in nodes:
        if type(node.schema) is dict and type(node.schema.get("type")) is list:
            yield f"{node.pointer}/type", "a list of types is not supported"


# Rules that cap how many members one keyword holds over all of a tool's subschemas:
# rule kind -> (keyword, the container it must be, what the message counts).
_MEMBER_LIMITS: dict[str, tuple[str, type, str]] = {
    "max-properties": ("properties", dict, "object properties"),
    "max-enum-values": ("enum", list, "enum values"),
}


def _tool_problems(rule: ProfileRule, nodes: Sequence[Node]) -> Iterator[tuple[str, str]]:
    parameters = rule.parameters
    kind = rule.check
    schema = nodes[0].schema
    if kind == "object-closed":
        yield from _object_closed(nodes)
    elif kind == "all-required":
        yield from _all_required(nodes)
    elif kind == "keywords":
        yield from _keywords(nodes, parameters["keywords"])
    elif kind == "formats":
        yield from _formats(nodes, parameters["allowed"])
    elif kind == "type-list":
        yield from _type_lists(nodes)
    elif kind == "root-type":
        wanted = parameters["type"]
        if type(schema) is not dict or schema.get("type") != wanted:
            yield "", f'the schema\'s root must be "type": {wanted!r}'
    elif kind == "root-keywords":
        if type(schema) is dict:
            for keyword in parameters["keywords"]:
                if keyword in schema:
                    yield f"/{escape(keyword)}", f"keyword {keyword!r} is not supported at the root"
    elif kind == "max-depth":
        deepest = max(nodes, key=lambda node: node.depth)
        if deepest.depth > parameters["limit"]:
            yield (
                deepest.pointer,
                f"{deepest.depth} levels of nesting (limit {parameters['limit']})",
            )
    elif kind in _MEMBER_LIMITS:
        keyword, container, noun = _MEMBER_LIMITS[kind]
        count = sum(
            len(node.schema[keyword])
            for node in nodes
            if type(node.schema) is dict and type(node.schema.get(keyword)) is container
        )
        if count > parameters["limit"]:
            yield "", f"{count} {noun} in all (limit {parameters['limit']})"


def profile_tool_findings(
    profile: Profile, ref: str, schema: Any, nodes: Sequence[Node] | None = None
) -> list[Finding]:
    """The profile's per-tool rules on one tool's schema (``nodes``: its subschemas, when
    the caller has them already)."""
    nodes = list(subschemas(schema)) if nodes is None else nodes
    return [
        _found(profile, rule, ref, pointer, message)
        for rule in profile.rules
        for pointer, message in _tool_problems(rule, nodes)
    ]


def profile_surface_findings(profile: Profile, refs: Sequence[str]) -> list[tuple[int, Finding]]:
    """The profile's name and tool-count rules, each with the position of its tool."""
    out: list[tuple[int, Finding]] = []
    for rule in profile.rules:
        if rule.check == "name":
            pattern = re.compile(rule.parameters["pattern"])
            limit = rule.parameters["maxLength"]
            for position, ref in enumerate(refs):
                if len(ref) > limit or not pattern.fullmatch(ref):
                    message = (
                        f"tool name {ref!r} must match {rule.parameters['pattern']} and have at"
                        f" most {limit} characters"
                    )
                    out.append((position, _found(profile, rule, ref, "", message)))
        elif rule.check == "max-tools" and len(refs) > rule.parameters["limit"]:
            position = rule.parameters["limit"]
            message = f"{len(refs)} tools in one request (limit {rule.parameters['limit']})"
            out.append((position, _found(profile, rule, refs[position], "", message)))
    return out
