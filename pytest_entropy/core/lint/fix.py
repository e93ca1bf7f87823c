"""``lint --fix``: rewrite a surface so it satisfies a profile, and check recorded calls.

The profile's ``fix`` list says what may be done (data, like its rules):

* ``close-objects``: every object gets ``"additionalProperties": false``;
* ``require-all-nullable``: every optional property becomes required and nullable (a
  ``"null"`` added to its type and enum, or an ``anyOf`` with ``{"type": "null"}``), as
  OpenAI's strict mode prescribes for optional fields;
* ``move-keywords``: a keyword or format the profile refuses leaves the schema and is
  written into the subschema's description instead (``oneOf`` becomes ``anyOf``, which
  accepts every call ``oneOf`` did).

:class:`FixReplay` checks the promise that matters to a tool author: every recorded
successful call the original schema accepted is accepted by the fixed one once each key the
fix made required is filled with ``null``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_entropy.core.canonical import json_copy
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.lint.model import Profile
from pytest_entropy.core.lint.walk import (
    WALK_LIMIT,
    escape,
    is_object_schema,
    resolve_local,
    subschemas,
)
from pytest_entropy.core.records import Trace, action_schemas, operations_of
from pytest_entropy.core.validation import accepts

__all__ = ["FixReplay", "FixedTool", "fill_nulls", "fix_surface"]


@dataclass(frozen=True, slots=True)
class FixedTool:
    """One tool's fix: the schemas before and after, what changed (``pointer: change``) and
    the keys made required, by the pointer of their object in the fixed schema."""

    ref: str
    before: Any
    after: Any
    changes: tuple[str, ...]
    required_added: Mapping[str, tuple[str, ...]]


def _nullable(schema: Any) -> Any:
    """``schema`` accepting ``null`` as well (the same object when it already does)."""
    if type(schema) is not dict:
        return schema  # true accepts null; false stays false (nothing to rescue)
    kind = schema.get("type")
    plain = not any(key in schema for key in ("const", "$ref", "oneOf", "allOf", "not"))
    if plain and (type(kind) is str or type(kind) is list):
        kinds = [kind] if type(kind) is str else list(kind)
        if "null" not in kinds:
            schema["type"] = [*kinds, "null"]
        if type(schema.get("enum")) is list and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
        return schema
    if plain and kind is None and type(schema.get("enum")) is list:
        if None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
        return schema
    if plain and kind is None and type(schema.get("anyOf")) is list and len(schema) == 1:
        schema["anyOf"] = [*schema["anyOf"], {"type": "null"}]
        return schema
    if not any(key not in ("description", "title") for key in schema):
        return schema  # no constraint: null passes already
    inner = {key: value for key, value in schema.items() if key != "description"}
    wrapped: dict[str, Any] = {"anyOf": [inner, {"type": "null"}]}
    if "description" in schema:
        wrapped["description"] = schema["description"]
    return wrapped


def _refused(profile: Profile) -> tuple[set[str], dict[str, set[str]]]:
    keywords: set[str] = set()
    formats: dict[str, set[str]] = {}
    for rule in profile.rules:
        if rule.check == "keywords":
            keywords.update(rule.parameters["keywords"])
        elif rule.check == "formats":
            formats[rule.id] = set(rule.parameters["allowed"])
    return keywords, formats


def _note(schema: dict[str, Any], moved: list[tuple[str, Any]]) -> None:
    text = "; ".join(
        f"{keyword}: {json.dumps(value, ensure_ascii=False, sort_keys=True)}"
        for keyword, value in moved
    )
    described = schema.get("description")
    schema["description"] = (
        f"{described} ({text})" if type(described) is str and described else text
    )


def _fix_schema(schema: Any, profile: Profile) -> tuple[Any, list[str], dict[str, tuple[str, ...]]]:
    fixed = json_copy(schema)
    if type(fixed) is not dict:
        return fixed, [], {}
    keywords, formats = _refused(profile)
    changes: list[str] = []
    added: dict[str, tuple[str, ...]] = {}
    for node in subschemas(fixed):
        sub = node.schema
        if type(sub) is not dict:
            continue
        where = node.pointer or "/"
        if "move-keywords" in profile.fixes:
            if "oneOf" in sub and "oneOf" in keywords and "anyOf" not in sub:
                sub["anyOf"] = sub.pop("oneOf")
                changes.append(f"{where}: oneOf became anyOf")
            moved = [(key, sub[key]) for key in list(sub) if key in keywords]
            value = sub.get("format")
            if type(value) is str and any(value not in allowed for allowed in formats.values()):
                moved.append(("format", value))
            for key, _ in moved:
                del sub[key]
            if moved:
                _note(sub, moved)
                names = ", ".join(key for key, _ in moved)
                changes.append(f"{where}: moved {names} into the description")
        closable = "close-objects" in profile.fixes and is_object_schema(sub)
        if closable and sub.get("additionalProperties") is not False:
            sub["additionalProperties"] = False
            changes.append(f"{where}: closed (additionalProperties: false)")
        properties = sub.get("properties")
        if "require-all-nullable" in profile.fixes and type(properties) is dict:
            required = sub.get("required")
            listed = (
                [name for name in required if type(name) is str] if type(required) is list else []
            )
            optional = [name for name in properties if name not in listed]
            for name in optional:
                properties[name] = _nullable(properties[name])
            if optional:
                sub["required"] = [*listed, *optional]
                added[node.pointer] = tuple(optional)
                changes.append(f"{where}: required and nullable: {', '.join(optional)}")
    return fixed, changes, added


def fix_surface(
    surface: Mapping[str, Any], profile: Profile
) -> tuple[dict[str, Any], list[FixedTool]]:
    """The fixed surface (a new object; the input is untouched) and each changed tool.

    A schema nested beyond the lint walk (:data:`WALK_LIMIT` steps) is refused: its deeper
    subschemas would stay unfixed while the rest reads as fixed."""
    actions = []
    changed: list[FixedTool] = []
    for action in surface.get("actions") or ():
        if any(node.cut for node in subschemas(action.get("inputSchema"))):
            raise EntropyInputError(
                f"tool {str(action.get('ref'))!r}: its schema nests deeper than lint walks"
                f" ({WALK_LIMIT} steps), so --fix cannot rewrite all of it; flatten it first"
            )
        before = action.get("inputSchema")
        after, changes, added = _fix_schema(before, profile)
        actions.append({**action, "inputSchema": after})
        if changes:
            changed.append(FixedTool(str(action.get("ref")), before, after, tuple(changes), added))
    return {**surface, "actions": actions}, changed


_FILL_DEPTH = 64


def _fits(value: dict[str, Any], branch: Any, root: Any, *, open_only: bool = False) -> bool:
    """Whether a combinator branch (its local ``$ref`` followed) declares every key, or
    (``open_only``) is an object schema that leaves other keys open."""
    if type(branch) is dict and type(branch.get("$ref")) is str:
        _, branch = resolve_local(root, branch["$ref"])
    properties = branch.get("properties") if type(branch) is dict else None
    if type(properties) is not dict:
        return False
    if open_only:
        return branch.get("additionalProperties", True) is not False
    return set(value) <= set(properties)


def _branches(value: Any, branches: list[Any], root: Any) -> tuple[list[int], int]:
    """The ``anyOf``/``oneOf`` branches a value may be filled along, in order: those that
    declare all its keys, then the open object branches (they accepted undeclared keys),
    then the other schema branches (a nested combinator, say); and how many of them are of
    the first two kinds. A value that is no object (an array whose items need filling)
    declares no keys: every schema branch is a candidate, none a likely one."""
    found: list[int] = []
    if type(value) is not dict:
        return [index for index, branch in enumerate(branches) if type(branch) is dict], 0
    for open_only in (False, True):
        for index, branch in enumerate(branches):
            if index not in found and _fits(value, branch, root, open_only=open_only):
                found.append(index)
    likely = len(found)
    found.extend(
        index
        for index, branch in enumerate(branches)
        if index not in found and type(branch) is dict
    )
    return found, likely


def _accepted_by(root: Any, branch: Any, value: Any) -> bool:
    """Whether ``branch`` (inside ``root``, whose definitions its refs may use) accepts."""
    if type(branch) is not dict or type(root) is not dict:
        return False
    schema = dict(branch)
    for keyword in ("$defs", "definitions"):
        if keyword in root and keyword not in schema:
            schema[keyword] = root[keyword]
    return accepts(schema, value)


def fill_nulls(
    value: Any,
    schema: Any,
    added: Mapping[str, tuple[str, ...]],
    *,
    root: Any = None,
    pointer: str = "",
    depth: int = 0,
) -> Any:
    """``value`` (a copy where anything changes) with ``null`` for each absent key the fix
    made required, following the fixed schema's properties, items, local ``$ref``s, every
    ``allOf`` branch and one ``anyOf``/``oneOf`` branch (:func:`_branches`): the first that
    accepts the filled value."""
    root = schema if root is None else root
    if depth > _FILL_DEPTH or type(schema) is not dict:
        return value
    target = schema.get("$ref")
    if type(target) is str:
        found, resolved = resolve_local(root, target)
        if found:
            value = fill_nulls(
                value, resolved, added, root=root, pointer=target[1:], depth=depth + 1
            )
    for keyword in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(keyword)
        if type(branches) is not list:
            continue
        if keyword == "allOf":
            for index, branch in enumerate(branches):
                value = fill_nulls(
                    value, branch, added, root=root, pointer=f"{pointer}/{keyword}/{index}",
                    depth=depth + 1,
                )  # fmt: skip
            continue
        # The first candidate branch that accepts the value once filled; else the first
        # branch that declares its keys or leaves them open; else the value as it is.
        candidates, likely = _branches(value, branches, root)
        fallback = None
        for position, index in enumerate(candidates):
            filled = fill_nulls(
                value, branches[index], added, root=root, pointer=f"{pointer}/{keyword}/{index}",
                depth=depth + 1,
            )  # fmt: skip
            if _accepted_by(root, branches[index], filled):
                fallback = filled
                break
            if position == 0 and likely:
                fallback = filled
        if fallback is not None:
            value = fallback
    properties = schema.get("properties")
    if type(value) is dict and type(properties) is dict:
        value = dict(value)
        for name in added.get(pointer, ()):
            value.setdefault(name, None)
        for name, sub in properties.items():
            if name in value:
                value[name] = fill_nulls(
                    value[name],
                    sub,
                    added,
                    root=root,
                    pointer=f"{pointer}/properties/{escape(name)}",
                    depth=depth + 1,
                )
    items = schema.get("items")
    if type(value) is list and type(items) is dict:
        value = [
            fill_nulls(item, items, added, root=root, pointer=f"{pointer}/items", depth=depth + 1)
            for item in value
        ]
    return value


@dataclass(slots=True)
class FixReplay:
    """Replays recorded successful calls against the original and the fixed surface.

    ``checked`` counts the calls the original accepted; ``broken`` lists, per ref, how many
    of them the fixed surface refuses even with the new keys filled with ``null``.
    """

    original: Mapping[str, Any]
    fixed: Mapping[str, Any]
    added: Mapping[str, Mapping[str, tuple[str, ...]]]
    checked: int = 0
    broken: dict[str, int] = field(default_factory=dict)
    examples: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(
        cls, original: Mapping[str, Any], fixed: Mapping[str, Any], tools: list[FixedTool]
    ) -> FixReplay:
        return cls(
            action_schemas(original),
            action_schemas(fixed),
            {tool.ref: tool.required_added for tool in tools},
        )

    def add_trace(self, trace: Trace | Mapping[str, Any]) -> None:
        for op in operations_of(trace):
            ref, args, outcome = op[0], op[1], op[2]
            if outcome != "succeeded" or ref not in self.original:
                continue
            if not accepts(self.original[ref], args):
                continue
            self.checked += 1
            schema = self.fixed.get(ref)
            filled = fill_nulls(args, schema, self.added.get(ref, {}))
            if not accepts(schema, filled):
                self.broken[ref] = self.broken.get(ref, 0) + 1
                self.examples.setdefault(ref, args)
