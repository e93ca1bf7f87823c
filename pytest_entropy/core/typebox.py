"""TypeBox 1.3.8's ``Value.Check(schema, value)``, compiled into Python closures.

The reference judges every recorded call (replay in the compile gate, the trial, live
enforcement) with ``Value.Check`` of the ``typebox`` package it pins, on the JSON Schema of
the tool. TypeBox 1.x takes a JSON Schema object as it is and checks it with its own engine
(``schema/engine/schema.mjs``, ``CheckSchema``); :func:`compile_schema` mirrors that engine
keyword for keyword:

* a keyword counts only when its value has the shape TypeBox's guard asks for
  (``schema/types/*.mjs``): ``"maxLength": "3"`` or an ``allOf`` with a non-schema member is
  ignored, an unknown ``type`` name passes every value, ``$schema`` changes nothing (``items``
  as an array is always a tuple);
* the object keywords apply to an object that is not an array, the array keywords to an
  array, the string keywords to a string, the number keywords to a finite number, and the
  rest to any value, in TypeBox's order (which decides what a check records on the side);
* ``properties``, ``required`` and the ``dependent*`` keywords test ``key in value``, so the
  names ``Object.prototype`` carries (``toString``, ``valueOf``, ...) are present on every
  object (:mod:`~pytest_entropy.core.typebox_values`);
* ``additionalProperties`` calls a key additional when neither a ``properties`` name (when
  ``properties`` is well formed) nor a ``patternProperties`` pattern matches it;
* ``dependencies``/``dependentRequired``/``dependentSchemas`` pass an object with no keys;
  ``contains`` fails an empty array unless ``minContains`` is 0; ``prefixItems`` passes one;
* ``unevaluatedProperties``/``unevaluatedItems`` read TypeBox's evaluation context, with its
  exact push and pop behaviour (a failed subschema leaves its frame), and
  ``unevaluatedProperties`` also applies to an array (its indices are its keys);
* ``$ref`` resolves inside the schema only (:mod:`~pytest_entropy.core.typebox_refs`); a
  fragment that resolves to nothing fails the value; any other ref that names nothing in
  the schema is accepted and counted (TypeBox fails it: the named exception of
  docs/decisions.md, "No $ref outside the schema is fetched");
* ``pattern`` and ``patternProperties`` are JavaScript ``u``-mode expressions: one JavaScript
  refuses to compile throws (a rejection); one it compiles runs on RE2 (linear time), and one
  RE2 cannot run is not enforced and is recorded (:mod:`~pytest_entropy.core.regex`);
* ``format`` asserts TypeBox's registry (:mod:`~pytest_entropy.core.typebox_formats`).

Anything that throws in TypeBox (a bad pattern, a malformed ``%`` in a ref) raises here; the
caller counts it a rejection, as the reference does.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any, Final

from pytest_entropy.core.js_regex import js_regex_compiles
from pytest_entropy.core.regex import js_pattern_search, note_external_ref
from pytest_entropy.core.typebox_formats import format_check
from pytest_entropy.core.typebox_keywords import (
    ARRAY_KEYWORDS,
    NUMBER_KEYWORDS,
    OBJECT_KEYWORDS,
    OTHER_KEYWORDS,
    STRING_KEYWORDS,
    Check,
    EvalContext,
    JsThrow,
    array_keywords,
    object_keywords,
    unevaluated_keywords,
)
from pytest_entropy.core.typebox_refs import UNDEFINED, fragment_of, resolve_ref
from pytest_entropy.core.typebox_values import (
    JS_FUNCTION,
    enum_check,
    has_property_key,
    is_integer,
    is_number,
    js_equal,
    js_number,
    max_length,
    min_length,
    multiple_of,
)

__all__ = ["CompiledCheck", "JsThrow", "compile_schema"]


def _is_schema(value: Any) -> bool:
    return type(value) is dict or type(value) is bool


def _all_schemas(value: Any) -> bool:
    return type(value) is list and all(_is_schema(each) for each in value)


def _schema_values(value: Any) -> bool:
    return type(value) is dict and all(_is_schema(each) for each in value.values())


def _strings(value: Any) -> bool:
    return type(value) is list and all(type(each) is str for each in value)


def _has_unevaluated(node: Any) -> bool:
    """TypeBox ``HasUnevaluated``: an ``unevaluated*`` keyword anywhere in the schema."""
    if type(node) is dict:
        if _is_schema(node.get("unevaluatedItems", 0)) or _is_schema(
            node.get("unevaluatedProperties", 0)
        ):
            return True
        return any(_has_unevaluated(child) for child in node.values())
    if type(node) is list:
        return any(_has_unevaluated(child) for child in node)
    return False


def _always(value: Any, context: EvalContext | None) -> bool:
    return True


def _never(value: Any, context: EvalContext | None) -> bool:
    return False


def _is_function(value: Any) -> bool:
    return value is JS_FUNCTION


_TYPE_NAMES: Final[dict[str, Callable[[Any], bool]]] = {
    "object": lambda value: type(value) is dict,
    "array": lambda value: type(value) is list,
    "boolean": lambda value: type(value) is bool,
    "integer": is_integer,
    "number": is_number,
    "null": lambda value: value is None,
    "string": lambda value: type(value) is str,
    # TypeBox's extended type names: no JSON value is a bigint, symbol or undefined; the
    # inherited methods of an object are native functions (so constructors too).
    "bigint": lambda value: False,
    "constructor": _is_function,
    "function": _is_function,
    "symbol": lambda value: False,
    "undefined": lambda value: False,
    "void": lambda value: False,
}


def _untyped(test: Callable[[Any], bool]) -> Check:
    return lambda value, context: test(value)


def _typed(kind: type) -> Check:
    def check(value: Any, context: EvalContext | None = None) -> bool:
        return type(value) is kind

    return check


def _integer(value: Any, context: EvalContext | None = None) -> bool:
    return is_integer(value)


def _number(value: Any, context: EvalContext | None = None) -> bool:
    return is_number(value)


def _null(value: Any, context: EvalContext | None = None) -> bool:
    return value is None


# The common type names as checks of their own (one call per value, not two).
_TYPE_CHECKS: Final[dict[str, Check]] = {
    **{name: _untyped(test) for name, test in _TYPE_NAMES.items()},
    "object": _typed(dict),
    "array": _typed(list),
    "boolean": _typed(bool),
    "string": _typed(str),
    "integer": _integer,
    "number": _number,
    "null": _null,
}


def _type_test(name: str) -> Callable[[Any], bool]:
    return _TYPE_NAMES.get(name, lambda value: True)  # an unknown name passes (CheckTypeName)


class _Scope:
    """What TypeBox's ``Stack`` holds at one point of the walk: the schemas with an ``$id``
    (the innermost is the base of a ``#`` ref), those with ``$recursiveAnchor: true`` and the
    ``$dynamicAnchor`` schemas in scope. The walk is the same for every value, so the scope
    of each compiled node is known when it is compiled."""

    __slots__ = ("dynamic", "ids", "key", "recursive")

    def __init__(
        self, ids: tuple[Any, ...], recursive: tuple[Any, ...], dynamic: tuple[Any, ...]
    ) -> None:
        self.ids = ids
        self.recursive = recursive
        self.dynamic = dynamic
        self.key = (tuple(map(id, ids)), tuple(map(id, recursive)), tuple(map(id, dynamic)))


def _resource_anchors(node: Any, root: bool = True) -> list[Any]:
    # TypeBox PushResourceAnchors: the $dynamicAnchor schemas of a resource, not entering
    # nested resources (objects only, not arrays).
    if type(node) is not dict:
        return []
    if not root and type(node.get("$id")) is str:
        return []
    found = [node] if not root and type(node.get("$dynamicAnchor")) is str else []
    for child in node.values():
        found.extend(_resource_anchors(child, False))
    return found


class CompiledCheck:
    """A compiled ``Value.Check`` of one schema: ``check(value) -> bool`` (raises where
    TypeBox throws). ``effects`` tells whether a call may record anything on the side (a
    pattern RE2 cannot run, a ref outside the schema)."""

    __slots__ = ("check", "effects")

    def __init__(self, check: Callable[[Any], bool], effects: bool) -> None:
        self.check = check
        self.effects = effects


def compile_schema(schema: Any) -> CompiledCheck:
    """The compiled ``Value.Check(schema, ·)`` (``schema`` is the root of its refs)."""
    compiler = _Compiler(schema)
    body = compiler.node(schema, _Scope((), (), ()))
    if compiler.track:

        def tracked(value: Any) -> bool:
            return body(value, EvalContext())

        return CompiledCheck(tracked, compiler.effects)

    return CompiledCheck(functools.partial(body, context=None), compiler.effects)  # type: ignore[call-arg]


class _Compiler:
    def __init__(self, root: Any) -> None:
        self.root = root
        self.track = _has_unevaluated(root)
        self.effects = False
        self.targets: dict[tuple[Any, ...], list[Check]] = {}
        self.keep: list[Any] = []  # ref targets stay alive, so their ids stay unique

    # ------------------------------------------------------------------ helpers

    def pushed(self, check: Check) -> Check:
        """TypeBox ``CheckSchemaPushStack``: a frame pushed, popped only on success."""
        if not self.track:
            return check

        def run(value: Any, context: EvalContext | None) -> bool:
            return context.push() and check(value, context) and context.pop()  # type: ignore[union-attr]

        return run

    def enter(self, node: Any, scope: _Scope) -> _Scope:
        ids, recursive, dynamic = scope.ids, scope.recursive, scope.dynamic
        if type(node.get("$id")) is str:
            ids = (*ids, node)
            dynamic = (*dynamic, *_resource_anchors(node))
        if node.get("$recursiveAnchor") is True:
            recursive = (*recursive, node)
        if type(node.get("$dynamicAnchor")) is str:
            dynamic = (*dynamic, node)
        if ids is scope.ids and recursive is scope.recursive and dynamic is scope.dynamic:
            return scope
        return _Scope(ids, recursive, dynamic)

    def pattern(self, pattern: str) -> Callable[[str], bool]:
        """``new RegExp(pattern, "u").test``: raises when JavaScript would not compile it."""
        self.effects = True
        if not js_regex_compiles(pattern, unicode=True):

            def invalid(text: str) -> bool:
                raise JsThrow(f"Invalid regular expression: /{pattern}/u")

            return invalid

        def test(text: str) -> bool:
            return js_pattern_search(pattern, text) is not False  # unsupported: not enforced

        return test

    # ------------------------------------------------------------------ nodes

    def node(self, node: Any, scope: _Scope) -> Check:
        """TypeBox ``CheckSchema`` of one node."""
        if node is True:
            return _always
        if node is False:
            return _never
        if type(node) is not dict:
            return _always  # propertyNames takes any object; an array has no keywords
        scope = self.enter(node, scope)
        checks: list[Check] = []
        kinds = node.keys()
        if "type" in kinds:
            checks.extend(self.type_keyword(node["type"]))
        if kinds & OBJECT_KEYWORDS:
            checks.extend(self.guarded(dict, self.object_keywords(node, scope)))
        if kinds & ARRAY_KEYWORDS:
            checks.extend(self.guarded(list, self.array_keywords(node, scope)))
        if kinds & STRING_KEYWORDS:
            checks.extend(self.guarded(str, self.string_keywords(node)))
        if kinds & NUMBER_KEYWORDS:
            checks.extend(self.number_guarded(self.number_keywords(node)))
        if kinds & OTHER_KEYWORDS:
            checks.extend(self.other_keywords(node, scope))
        return _all_of(checks)

    def guarded(self, kind: type, checks: list[Check]) -> list[Check]:
        if not checks:
            return []
        body = _all_of(checks)

        def run(value: Any, context: EvalContext | None) -> bool:
            return type(value) is not kind or body(value, context)

        return [run]

    def number_guarded(self, checks: list[Callable[[float], bool]]) -> list[Check]:
        if not checks:
            return []

        def run(value: Any, context: EvalContext | None) -> bool:
            if not is_number(value):
                return True
            number = js_number(value)
            for check in checks:  # noqa: SIM110 (a loop beats all() over a generator here)
                if not check(number):
                    return False
            return True

        return [run]

    def type_keyword(self, types: Any) -> list[Check]:
        if type(types) is str:
            return [_TYPE_CHECKS.get(types, _always)]  # an unknown name passes
        if not _strings(types):
            return []  # not a type keyword TypeBox reads
        tests = [_type_test(name) for name in types]
        return [lambda value, context: any(test(value) for test in tests)]

    # ------------------------------------------------------------------ objects

    def object_keywords(self, node: Any, scope: _Scope) -> list[Check]:
        return object_keywords(self, node, scope)

    def array_keywords(self, node: Any, scope: _Scope) -> list[Check]:
        return array_keywords(self, node, scope)

    def string_keywords(self, node: Any) -> list[Check]:
        checks: list[Check] = []
        longest = node.get("maxLength")
        if is_number(longest):
            limit = js_number(longest)
            checks.append(lambda value, context: max_length(value, limit))
        shortest = node.get("minLength")
        if is_number(shortest):
            floor = js_number(shortest)
            checks.append(lambda value, context: min_length(value, floor))
        name = node.get("format")
        if type(name) is str:
            test = format_check(name)
            if test is not None:
                checks.append(lambda value, context: test(value))
        pattern = node.get("pattern")
        if type(pattern) is str:
            search = self.pattern(pattern)
            checks.append(lambda value, context: search(value))
        return checks

    def number_keywords(self, node: Any) -> list[Callable[[float], bool]]:
        checks: list[Callable[[float], bool]] = []
        for keyword in ("exclusiveMaximum", "exclusiveMinimum", "maximum", "minimum"):
            bound = node.get(keyword)
            if not is_number(bound):
                continue
            checks.append(_bound(_COMPARISONS[keyword], js_number(bound)))
        divisor = node.get("multipleOf")
        if is_number(divisor):
            step = js_number(divisor)
            checks.append(lambda number: multiple_of(number, step))
        return checks

    # ------------------------------------------------------------------ any value

    def other_keywords(self, node: Any, scope: _Scope) -> list[Check]:
        checks: list[Check] = []
        if type(node.get("$ref")) is str:
            checks.append(self.ref(node["$ref"], scope))
        if type(node.get("$recursiveRef")) is str:
            checks.append(self.recursive_ref(node["$recursiveRef"], scope))
        if type(node.get("$dynamicRef")) is str:
            checks.append(self.dynamic_ref(node["$dynamicRef"], scope))
        if "const" in node:
            constant = node["const"]
            checks.append(lambda value, context: js_equal(value, constant))
        if type(node.get("enum")) is list:
            checks.append(enum_check(tuple(node["enum"])))
        if _is_schema(node.get("if", 0)):
            checks.append(self.conditional(node, scope))
        if _is_schema(node.get("not", 0)):
            checks.append(self.negation(node["not"], scope))
        for keyword in ("allOf", "anyOf", "oneOf"):
            if _all_schemas(node.get(keyword)):
                checks.append(self.branches(keyword, node[keyword], scope))
        checks.extend(unevaluated_keywords(self, node, scope))
        return checks

    def conditional(self, node: Any, scope: _Scope) -> Check:
        test = self.node(node["if"], scope)
        then = self.node(node["then"], scope) if _is_schema(node.get("then", 0)) else _always
        otherwise = self.node(node["else"], scope) if _is_schema(node.get("else", 0)) else _always

        def run(value: Any, context: EvalContext | None) -> bool:
            if test(value, context):
                return then(value, context)
            return otherwise(value, context)

        return run

    def negation(self, schema: Any, scope: _Scope) -> Check:
        inner = self.node(schema, scope)
        if not self.track:
            return lambda value, context: not inner(value, None)

        def run(value: Any, context: EvalContext | None) -> bool:
            fresh = EvalContext()
            return not inner(value, fresh) and context.merge([fresh])  # type: ignore[union-attr]

        return run

    def branches(self, keyword: str, schemas: list[Any], scope: _Scope) -> Check:
        members = [self.node(schema, scope) for schema in schemas]
        count = len(members)
        track = self.track

        def run(value: Any, context: EvalContext | None) -> bool:
            passed: list[EvalContext] = []
            hits = 0
            for member in members:  # every branch runs (TypeBox reduces over all of them)
                fresh = EvalContext() if track else None
                if member(value, fresh):
                    hits += 1
                    if fresh is not None:
                        passed.append(fresh)
            if keyword == "allOf":
                verdict = hits == count
            elif keyword == "anyOf":
                verdict = hits > 0
            else:
                verdict = hits == 1
            return verdict and (context is None or context.merge(passed))

        return run

    # ------------------------------------------------------------------ refs

    def target(self, target: Any, scope: _Scope) -> Check:
        """The check of a ref's target node, compiled once per scope, on first use (a
        recursive schema refers to itself)."""
        key = (id(target), scope.key)
        cell = self.targets.get(key)
        if cell is None:
            cell = self.targets[key] = []
            self.keep.append(target)
            cell.append(self.node(target, scope))
            return cell[0]
        if cell:
            return cell[0]

        def later(value: Any, context: EvalContext | None) -> bool:
            return cell[0](value, context)

        return later

    def ref(self, ref: str, scope: _Scope) -> Check:
        if has_property_key({}, ref):
            return _never  # TypeBox looks the ref up in its (empty) context object first
        base = scope.ids[-1] if scope.ids else self.root
        found = resolve_ref(self.root if not ref.startswith("#") else base, ref)
        if not _is_schema(found):
            if found is UNDEFINED and not ref.startswith("#"):
                self.effects = True

                def external(value: Any, context: EvalContext | None) -> bool:
                    # TypeBox fails the value; here it is the named exception of
                    # docs/decisions.md ("No $ref outside the schema is fetched"): not
                    # enforceable, accepted and counted.
                    note_external_ref(ref.split("#", 1)[0])  # the document, as retrieval names it
                    if context is not None:
                        # What it would have evaluated is unknown: an unevaluated* keyword
                        # looking through it accepts (the same exception).
                        if type(value) is dict:
                            for key in value:
                                context.add_key(key)
                        elif type(value) is list:
                            for index in range(len(value)):
                                context.add_index(index)
                                context.add_key(str(index))
                    return True

                return external
            return _never
        holder: list[Check] = []
        track = self.track
        compiler = self

        def run(value: Any, context: EvalContext | None) -> bool:
            if not holder:
                holder.append(compiler.target(found, scope))
            if not track:
                return holder[0](value, None)
            fresh = EvalContext()
            if holder[0](value, fresh):
                return context.merge([fresh])  # type: ignore[union-attr]
            return False

        return run

    def recursive_ref(self, ref: str, scope: _Scope) -> Check:
        base = scope.ids[-1] if scope.ids else self.root
        if type(base) is dict and base.get("$recursiveAnchor") is True and scope.recursive:
            found = resolve_ref(scope.recursive[0], ref)
        else:
            found = resolve_ref(base, ref)
        return self.same_context(found, scope)

    def dynamic_ref(self, ref: str, scope: _Scope) -> Check:
        base = scope.ids[-1] if scope.ids else self.root
        found = resolve_ref(base if ref.startswith("#") else self.root, ref)
        if (
            type(found) is dict
            and type(found.get("$dynamicAnchor")) is str
            and not fragment_of(ref).startswith("#/")
        ):
            for anchor in scope.dynamic:
                if anchor.get("$dynamicAnchor") == found["$dynamicAnchor"]:
                    found = anchor
                    break
        return self.same_context(found, scope)

    def same_context(self, found: Any, scope: _Scope) -> Check:
        if not _is_schema(found):
            return _never
        holder: list[Check] = []
        compiler = self

        def run(value: Any, context: EvalContext | None) -> bool:
            if not holder:
                holder.append(compiler.target(found, scope))
            return holder[0](value, context)

        return run


# Each bound keyword as the comparison TypeBox makes (value OP bound, on doubles).
_COMPARISONS: Final[dict[str, Callable[[float, float], bool]]] = {
    "exclusiveMaximum": operator.lt,
    "exclusiveMinimum": operator.gt,
    "maximum": operator.le,
    "minimum": operator.ge,
}


def _bound(compare: Callable[[float, float], bool], limit: float) -> Callable[[float], bool]:
    return lambda number: compare(number, limit)


def _all_of(checks: list[Check]) -> Check:
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks

        def both(value: Any, context: EvalContext | None) -> bool:
            return first(value, context) and second(value, context)

        return both
    sequence = tuple(checks)

    def every(value: Any, context: EvalContext | None) -> bool:
        for check in sequence:  # noqa: SIM110 (a loop beats all() over a generator here)
            if not check(value, context):
                return False
        return True

    return every
