"""Schemas compiled into plain Python checks: the fast path of :func:`~.validation.accepts`.

Replay checks every recorded call against its schema (the trial twice: declared and
compiled surface), and python-jsonschema spends most of that time on machinery a verdict does
not need: a validator evolved and a ``referencing`` resource created for every subschema it
descends into, errors with paths built only to be thrown away. :func:`compile_check` turns a
schema made only of the common keywords into a closure with the same verdict; anything else
gets ``None`` and is validated by jsonschema as before.

The subset is what tool surfaces are made of: ``type``, ``properties``, ``required``,
``additionalProperties`` (without ``patternProperties``), ``items`` (without
``prefixItems``), ``enum`` and ``const``, and every keyword that only looks at the value in
front of it (``minimum``, ``maxLength``, ``format``, ``pattern``, ``uniqueItems``, ...), which
calls the very keyword function the jsonschema validator would call (so RE2 patterns and the
reference's format registry stay as they are). Unknown keywords are ignored, as jsonschema
ignores them. A schema falls back as a whole when it (or any subschema) holds another
applicator (``$ref``, ``allOf``, ``anyOf``, ``if``, ``patternProperties``, ...), a
``$schema``/``$id``/anchor, a subschema that is neither an object nor a boolean, or a keyword
value of an unexpected shape (jsonschema raises on those, and a raise is a rejection).

Exactness: the closure evaluates the keywords in the schema's own order and stops at the first
failure, as ``is_valid`` stops at the first error, so even what a check records on the side
(a pattern RE2 cannot run) happens in the same order. Property tests compare both paths on
generated schema/value pairs (``tests/property/test_schema_check_properties.py``).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any, Final

__all__ = ["Check", "compile_check", "compile_check_with_effects"]

Check = Callable[[Any], bool]

# Keywords that look only at the instance in front of them: their jsonschema functions are
# called as they are.
_LEAF_KEYWORDS: Final = frozenset(
    {
        "const",
        "dependentRequired",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "format",
        "maxItems",
        "maxLength",
        "maxProperties",
        "maximum",
        "minItems",
        "minLength",
        "minProperties",
        "minimum",
        "multipleOf",
        "pattern",
        "uniqueItems",
    }
)
# Keywords compiled here (beside the leaves).
_COMPILED_KEYWORDS: Final = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "enum"}
)
# Keys that change how refs resolve or which dialect applies: the schema falls back.
_SCOPE_KEYS: Final = frozenset(
    {
        "$schema",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$recursiveAnchor",
        "$vocabulary",
        "$ref",
        "$dynamicRef",
        "$recursiveRef",
        "id",
    }
)


class _Unsupported(Exception):
    """The schema is outside the compiled subset; never leaves this module."""


def _never(value: Any) -> bool:
    return False


def _always(value: Any) -> bool:
    return True


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, numbers.Number)


_TYPE_CHECKS: Final[dict[str, Check]] = {
    "array": lambda value: isinstance(value, list),
    "boolean": lambda value: isinstance(value, bool),
    "integer": _is_integer,
    "null": lambda value: value is None,
    "number": _is_number,
    "object": lambda value: isinstance(value, dict),
    "string": lambda value: isinstance(value, str),
}


def _type_check(types: Any) -> Check:
    names = [types] if isinstance(types, str) else types
    if type(names) is not list or not names:
        raise _Unsupported  # jsonschema iterates whatever it is given; keep its reading
    if any(type(name) is not str or name not in _TYPE_CHECKS for name in names):
        raise _Unsupported  # an unknown type name raises there
    if len(names) == 1:
        return _TYPE_CHECKS[names[0]]
    checks = [_TYPE_CHECKS[name] for name in names]
    return lambda value: any(check(value) for check in checks)


def _required_check(required: Any) -> Check:
    if type(required) is not list or any(type(name) is not str for name in required):
        raise _Unsupported
    names = tuple(required)

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        for name in names:  # noqa: SIM110 (a loop beats all() over a generator here)
            if name not in value:
                return False
        return True

    return check


def _enum_check(enums: Any) -> Check:
    if type(enums) is not list:
        raise _Unsupported
    from jsonschema._utils import equal

    if enums and all(type(each) is str for each in enums):
        allowed = frozenset(enums)

        def strings(value: Any) -> bool:
            if type(value) is str:
                return value in allowed
            return any(equal(each, value) for each in enums)

        return strings
    members = tuple(enums)
    return lambda value: any(equal(each, value) for each in members)


# Deeper schemas fall back: jsonschema needs several frames per level and hits the recursion
# limit (a rejection) long before these closures would, and the verdicts must agree.
_MAX_DEPTH: Final = 32


class _Compiler:
    def __init__(self, validator: Any) -> None:
        self.validator = validator
        self.functions = validator.VALIDATORS
        self.depth = 0
        self.patterns = 0  # pattern keywords: RE2 may record one it cannot run

    def subschema(self, schema: Any) -> Check:
        if schema is True:
            return _always
        if schema is False:
            return _never
        if type(schema) is not dict:
            raise _Unsupported
        if self.depth >= _MAX_DEPTH:
            raise _Unsupported
        self.depth += 1
        try:
            return self.schema(schema)
        finally:
            self.depth -= 1

    def schema(self, schema: dict[str, Any]) -> Check:
        checks: list[Check] = []
        for keyword, value in schema.items():
            if keyword in _SCOPE_KEYS:
                raise _Unsupported
            if keyword not in self.functions:
                continue  # ignored by jsonschema too (annotations, x-..., unknown words)
            if keyword in _LEAF_KEYWORDS:
                checks.append(self.leaf(keyword, value, schema))
            elif keyword not in _COMPILED_KEYWORDS:
                raise _Unsupported  # another applicator
            elif keyword == "type":
                checks.append(_type_check(value))
            elif keyword == "required":
                checks.append(_required_check(value))
            elif keyword == "enum":
                checks.append(_enum_check(value))
            elif keyword == "properties":
                checks.append(self.properties(value))
            elif keyword == "additionalProperties":
                checks.append(self.additional(value, schema))
            else:
                checks.append(self.items(value, schema))
        if not checks:
            return _always
        if len(checks) == 1:
            return checks[0]
        if len(checks) == 2:
            first, second = checks
            return lambda value: first(value) and second(value)
        sequence = tuple(checks)

        def every(value: Any) -> bool:
            for check in sequence:  # noqa: SIM110 (a loop beats all() over a generator here)
                if not check(value):
                    return False
            return True

        return every

    def leaf(self, keyword: str, keyword_value: Any, schema: dict[str, Any]) -> Check:
        if keyword == "pattern":
            self.patterns += 1
        function = self.functions[keyword]
        validator = self.validator

        def check(value: Any) -> bool:
            errors = function(validator, keyword_value, value, schema)
            return errors is None or next(iter(errors), None) is None

        return check

    def properties(self, properties: Any) -> Check:
        if type(properties) is not dict:
            raise _Unsupported
        pairs = tuple((name, self.subschema(sub)) for name, sub in properties.items())

        def check(value: Any) -> bool:
            if not isinstance(value, dict):
                return True
            for name, sub in pairs:  # noqa: SIM110 (a loop beats all() over a generator here)
                if name in value and not sub(value[name]):
                    return False
            return True

        return check

    def additional(self, additional: Any, schema: dict[str, Any]) -> Check:
        if "patternProperties" in schema:
            raise _Unsupported
        declared = schema.get("properties", {})
        if type(declared) is not dict:
            raise _Unsupported
        known = frozenset(declared)
        if additional is False:

            def closed(value: Any) -> bool:
                if not isinstance(value, dict):
                    return True
                return all(key in known for key in value)

            return closed
        if type(additional) is not dict:
            if additional is True or type(additional) in (int, float, str, list, type(None)):
                return _always  # neither a schema nor false: nothing to check
            raise _Unsupported
        sub = self.subschema(additional)

        def extras(value: Any) -> bool:
            if not isinstance(value, dict):
                return True
            for key, item in value.items():  # noqa: SIM110 (a loop beats all() over a generator here)
                if key not in known and not sub(item):
                    return False
            return True

        return extras

    def items(self, items: Any, schema: dict[str, Any]) -> Check:
        if "prefixItems" in schema:
            raise _Unsupported
        if items is False:
            return lambda value: not isinstance(value, list) or not value
        sub = self.subschema(items)

        def check(value: Any) -> bool:
            if not isinstance(value, list):
                return True
            for item in value:  # noqa: SIM110 (a loop beats all() over a generator here)
                if not sub(item):
                    return False
            return True

        return check


def compile_check(schema: dict[str, Any], validator: Any) -> Check | None:
    """A closure with ``validator.is_valid``'s verdict on every value, or ``None`` when the
    schema is outside the compiled subset. ``validator`` is the schema's jsonschema
    validator (:func:`~.validation.validator_for_schema`): its keyword functions serve the
    leaf keywords and its class must be the 2020-12 dialect this module mirrors."""
    found = compile_check_with_effects(schema, validator)
    return None if found is None else found[0]


def compile_check_with_effects(schema: dict[str, Any], validator: Any) -> tuple[Check, bool] | None:
    """:func:`compile_check` and whether the check may record anything on the side (a
    pattern RE2 cannot run): a check that cannot is a pure function of the value, so its
    verdicts may be remembered."""
    from jsonschema import Draft202012Validator

    if validator.TYPE_CHECKER is not Draft202012Validator.TYPE_CHECKER:
        return None
    if validator.format_checker is None:
        return None
    compiler = _Compiler(validator)
    try:
        return compiler.schema(schema), compiler.patterns > 0
    except _Unsupported:
        return None
