"""The object, array and unevaluated keywords of :mod:`~pytest_entropy.core.typebox`.

Each function returns the checks of one group in the order TypeBox's ``CheckSchema`` runs
them (``schema/engine/schema.mjs``); the comments name the engine module each mirrors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Protocol

from pytest_entropy.core.js_regex import js_regex_compiles
from pytest_entropy.core.regex import js_pattern_search
from pytest_entropy.core.typebox_values import (
    has_property_key,
    is_number,
    js_number,
    property_value,
    unique_items,
)

__all__ = [
    "ARRAY_KEYWORDS",
    "NUMBER_KEYWORDS",
    "OBJECT_KEYWORDS",
    "OTHER_KEYWORDS",
    "STRING_KEYWORDS",
    "Check",
    "EvalContext",
    "JsThrow",
    "array_keywords",
    "object_keywords",
    "unevaluated_keywords",
]


class JsThrow(Exception):
    """What TypeBox throws while checking (an invalid regular expression)."""


class EvalContext:
    """TypeBox ``CheckContext``: a stack of (evaluated indices, evaluated keys) frames."""

    __slots__ = ("stack",)

    def __init__(self) -> None:
        self.stack: list[tuple[set[int], set[str]]] = [(set(), set())]

    def push(self) -> bool:
        self.stack.append((set(), set()))
        return True

    def pop(self) -> bool:
        self.stack.pop()
        return True

    def add_index(self, index: int) -> bool:
        self.stack[-1][0].add(index)
        return True

    def add_key(self, key: str) -> bool:
        self.stack[-1][1].add(key)
        return True

    def merge(self, results: list[EvalContext]) -> bool:
        indices, keys = self.stack[-1]
        for other in results:
            top = other.stack[-1]
            indices.update(top[0])
            keys.update(top[1])
        return True


# check(value, context) -> bool; context is None when nothing in the schema reads it.
Check = Callable[[Any, "EvalContext | None"], bool]
_Check = Check
_Context = EvalContext
_Scope = Any


class _Compiler(Protocol):
    track: bool
    effects: bool

    def node(self, node: Any, scope: Any) -> Check: ...

    def pushed(self, check: Check) -> Check: ...


def _is_schema(value: Any) -> bool:
    return type(value) is dict or type(value) is bool


def _schema_values(value: Any) -> bool:
    return type(value) is dict and all(_is_schema(each) for each in value.values())


def _strings(value: Any) -> bool:
    return type(value) is list and all(type(each) is str for each in value)


def _raise(message: str) -> Callable[[Any, Any], bool]:
    def run(value: Any, context: Any) -> bool:
        raise JsThrow(message)

    return run


# ------------------------------------------------------------------------ objects


def object_keywords(compiler: _Compiler, node: Any, scope: _Scope) -> list[_Check]:
    checks: list[_Check] = []
    track = compiler.track
    required = node.get("required")
    if _strings(required):  # required.mjs: every name `in` the value
        checks.append(_required(tuple(required)))
    if _is_schema(node.get("additionalProperties", 0)):
        checks.append(_additional(compiler, node, scope))
    dependencies = node.get("dependencies")
    if type(dependencies) is dict and all(
        _is_schema(each) or _strings(each) for each in dependencies.values()
    ):
        checks.append(_dependent(compiler, dependencies, scope))
    dependent_required = node.get("dependentRequired")
    if type(dependent_required) is dict and all(
        _strings(each) for each in dependent_required.values()
    ):
        checks.append(_dependent(compiler, dependent_required, scope))
    dependent_schemas = node.get("dependentSchemas")
    if _schema_values(dependent_schemas):
        checks.append(_dependent(compiler, dependent_schemas, scope))
    patterns = node.get("patternProperties")
    if _schema_values(patterns):
        checks.append(_pattern_properties(compiler, patterns, scope))
    properties = node.get("properties")
    if _schema_values(properties):
        pairs = tuple(
            (key, compiler.pushed(compiler.node(sub, scope))) for key, sub in properties.items()
        )

        def check_properties(value: Any, context: _Context | None) -> bool:
            # properties.mjs: a name the value has (own or inherited) must pass.
            for key, sub in pairs:
                if has_property_key(value, key):
                    if not sub(property_value(value, key), context):
                        return False
                    if track:
                        context.add_key(key)  # type: ignore[union-attr]
            return True

        checks.append(check_properties)
    names = node.get("propertyNames")
    if type(names) in (dict, list, bool):  # propertyNames.mjs: IsObject or IsSchema
        test = compiler.node(names, scope)
        checks.append(lambda value, context: all(test(key, context) for key in value))
    for keyword in ("minProperties", "maxProperties"):
        bound = node.get(keyword)
        if is_number(bound):
            checks.append(_count_bound(keyword == "minProperties", js_number(bound)))
    return checks


def _required(wanted: tuple[str, ...]) -> Check:
    # required.mjs: every name `in` the value (inherited names included).
    def check(value: Any, context: EvalContext | None) -> bool:
        for name in wanted:  # noqa: SIM110 (a loop beats all() over a generator here)
            if name not in value and not has_property_key(value, name):
                return False
        return True

    return check


def _count_bound(at_least: bool, limit: float) -> Check:
    # minProperties.mjs / maxProperties.mjs: the count of own keys against the bound.
    if at_least:
        return lambda value, context: len(value) >= limit
    return lambda value, context: len(value) <= limit


def _additional(compiler: _Compiler, node: Any, scope: _Scope) -> _Check:
    # additionalProperties.mjs: a key is additional unless the regular expression built of
    # the patternProperties patterns and the escaped, anchored property names matches it.
    # That expression is compiled without the `u` flag, on every object it sees.
    patterns = node.get("patternProperties")
    pattern_list = list(patterns) if _schema_values(patterns) else []
    properties = node.get("properties")
    known = frozenset(properties) if _schema_values(properties) else frozenset()
    for pattern in pattern_list:
        if not js_regex_compiles(pattern, unicode=False):
            return _raise(f"Invalid regular expression: /({pattern})/")
    if pattern_list:
        compiler.effects = True
    sub = compiler.pushed(compiler.node(node["additionalProperties"], scope))
    track = compiler.track

    def check(value: Any, context: _Context | None) -> bool:
        for key, item in value.items():
            if key in known:
                continue
            # A pattern RE2 cannot run never makes a key additional (it is recorded).
            if any(js_pattern_search(p, key) is not False for p in pattern_list):
                continue
            if not sub(item, context):
                return False
            if track:
                context.add_key(key)  # type: ignore[union-attr]
        return True

    return check


def _dependent(compiler: _Compiler, entries: dict[str, Any], scope: _Scope) -> _Check:
    # dependencies.mjs, dependentRequired.mjs, dependentSchemas.mjs: an object without keys
    # passes, but every entry is still evaluated.
    rules: list[tuple[str, tuple[str, ...] | _Check]] = []
    for key, rule in entries.items():
        if type(rule) is list:
            rules.append((key, tuple(rule)))
        else:
            rules.append((key, compiler.node(rule, scope)))

    def check(value: Any, context: _Context | None) -> bool:
        every = True
        for key, rule in rules:
            if not has_property_key(value, key):
                continue
            if type(rule) is tuple:
                passed = all(has_property_key(value, name) for name in rule)
            else:
                passed = rule(value, context)  # type: ignore[operator]
            if not passed:
                every = False
                break
        return len(value) == 0 or every

    return check


def _pattern_properties(compiler: _Compiler, patterns: dict[str, Any], scope: _Scope) -> _Check:
    # patternProperties.mjs: each pattern (compiled with `u`) in turn, over every entry.
    compiler.effects = True
    rules = []
    for pattern, sub in patterns.items():
        valid = js_regex_compiles(pattern, unicode=True)
        rules.append((pattern, valid, compiler.pushed(compiler.node(sub, scope))))
    track = compiler.track

    def check(value: Any, context: _Context | None) -> bool:
        for pattern, valid, sub in rules:
            if not valid:
                raise JsThrow(f"Invalid regular expression: /{pattern}/u")
            for key, item in value.items():
                if js_pattern_search(pattern, key) is not True:
                    continue  # no match; a pattern RE2 cannot run applies to no key (recorded)
                if not sub(item, context):
                    return False
                if track:
                    context.add_key(key)  # type: ignore[union-attr]
        return True

    return check


# ------------------------------------------------------------------------ arrays


def array_keywords(compiler: _Compiler, node: Any, scope: _Scope) -> list[_Check]:
    checks: list[_Check] = []
    track = compiler.track
    items = node.get("items")
    sized = type(items) is list and all(_is_schema(each) for each in items)
    items_ok = sized or _is_schema(items)
    prefix = node.get("prefixItems")
    prefix_ok = type(prefix) is list and all(_is_schema(each) for each in prefix)
    contains_ok = _is_schema(node.get("contains", 0))
    minimum_contains = node.get("minContains")
    if _is_schema(node.get("additionalItems", 0)) and sized:  # additionalItems.mjs
        extra = compiler.pushed(compiler.node(node["additionalItems"], scope))
        start = len(items)
        checks.append(_each_from(start, extra, track))
    if contains_ok:  # contains.mjs: every item is tried; an empty array fails
        contained = compiler.node(node["contains"], scope)
        if not (is_number(minimum_contains) and minimum_contains == 0):

            def check_contains(value: Any, context: _Context | None) -> bool:
                found = False
                for index, item in enumerate(value):
                    if contained(item, context):
                        found = True
                        if track:
                            context.add_index(index)  # type: ignore[union-attr]
                return len(value) != 0 and found

            checks.append(check_contains)
    if items_ok:  # items.mjs
        if sized:
            subs = [compiler.pushed(compiler.node(sub, scope)) for sub in items]
            checks.append(_positional(subs, track))
        else:
            offset = len(prefix) if prefix_ok else 0
            checks.append(_each_from(offset, compiler.pushed(compiler.node(items, scope)), track))
    maximum_contains = node.get("maxContains")
    if is_number(maximum_contains) and contains_ok:  # maxContains.mjs
        counted = compiler.node(node["contains"], scope)
        most = js_number(maximum_contains)
        checks.append(
            lambda value, context: sum(1 for item in value if counted(item, context)) <= most
        )
    bound = node.get("maxItems")
    if is_number(bound):
        longest = js_number(bound)
        checks.append(lambda value, context: len(value) <= longest)
    if is_number(minimum_contains) and contains_ok:  # minContains.mjs
        counted_min = compiler.node(node["contains"], scope)
        least = js_number(minimum_contains)

        def check_min_contains(value: Any, context: _Context | None) -> bool:
            count = 0
            for index, item in enumerate(value):
                if counted_min(item, context):
                    count += 1
                    if track:
                        context.add_index(index)  # type: ignore[union-attr]
            return count >= least

        checks.append(check_min_contains)
    bound = node.get("minItems")
    if is_number(bound):
        shortest = js_number(bound)
        checks.append(lambda value, context: len(value) >= shortest)
    if prefix_ok:  # prefixItems.mjs: an empty array passes
        prefix_subs = [compiler.pushed(compiler.node(sub, scope)) for sub in prefix]
        positional = _positional(prefix_subs, track)
        checks.append(lambda value, context: len(value) == 0 or positional(value, context))
    if node.get("uniqueItems") is True:  # uniqueItems.mjs (false, or not a boolean: nothing)
        checks.append(lambda value, context: unique_items(value))
    return checks


def _positional(subs: list[_Check], track: bool) -> _Check:
    def check(value: Any, context: _Context | None) -> bool:
        for index, sub in enumerate(subs):
            if len(value) <= index:
                continue
            if not sub(value[index], context):
                return False
            if track:
                context.add_index(index)  # type: ignore[union-attr]
        return True

    return check


def _each_from(start: int, sub: _Check, track: bool) -> _Check:
    def check(value: Any, context: _Context | None) -> bool:
        for index in range(start, len(value)):
            if not sub(value[index], context):
                return False
            if track:
                context.add_index(index)  # type: ignore[union-attr]
        return True

    return check


# ------------------------------------------------------------------------ unevaluated


def unevaluated_keywords(compiler: _Compiler, node: Any, scope: _Scope) -> list[_Check]:
    checks: list[_Check] = []
    if _is_schema(node.get("unevaluatedItems", 0)):  # unevaluatedItems.mjs (arrays)
        items = compiler.node(node["unevaluatedItems"], scope)

        def check_items(value: Any, context: _Context | None) -> bool:
            if type(value) is not list:
                return True
            indices = context.stack[-1][0]  # type: ignore[union-attr]
            for index, item in enumerate(value):
                if not (index in indices or items(item, context)):
                    return False
                context.add_index(index)  # type: ignore[union-attr]
            return True

        checks.append(check_items)
    if _is_schema(node.get("unevaluatedProperties", 0)):  # unevaluatedProperties.mjs
        properties = compiler.node(node["unevaluatedProperties"], scope)

        def check_properties(value: Any, context: _Context | None) -> bool:
            if type(value) is dict:
                entries: Any = value.items()
            elif type(value) is list:
                entries = ((str(index), item) for index, item in enumerate(value))
            else:
                return True
            keys = context.stack[-1][1]  # type: ignore[union-attr]
            for key, item in entries:
                if key in keys:
                    continue
                if not properties(item, context):
                    return False
                context.add_key(key)  # type: ignore[union-attr]
            return True

        checks.append(check_properties)
    return checks


# The keywords of each group of CheckSchema.
OBJECT_KEYWORDS: Final = frozenset(
    {
        "required",
        "additionalProperties",
        "dependencies",
        "dependentRequired",
        "dependentSchemas",
        "patternProperties",
        "properties",
        "propertyNames",
        "minProperties",
        "maxProperties",
    }
)
ARRAY_KEYWORDS: Final = frozenset(
    {
        "additionalItems",
        "contains",
        "items",
        "maxContains",
        "maxItems",
        "minContains",
        "minItems",
        "prefixItems",
        "uniqueItems",
    }
)
STRING_KEYWORDS: Final = frozenset({"maxLength", "minLength", "format", "pattern"})
NUMBER_KEYWORDS: Final = frozenset(
    {"exclusiveMaximum", "exclusiveMinimum", "maximum", "minimum", "multipleOf"}
)
OTHER_KEYWORDS: Final = frozenset(
    {
        "$ref",
        "$recursiveRef",
        "$dynamicRef",
        "const",
        "enum",
        "if",
        "not",
        "allOf",
        "anyOf",
        "oneOf",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
