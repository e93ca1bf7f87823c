"""The per-command schema checks (:class:`CallChecks`, whose compiled TypeBox closures the
trial calls directly, some answered from memory) give the plain ``accepts`` verdicts on every
generated schema/value pair, record the same unsupported patterns and external refs, and a
trial with checks counts what a trial without them (``accepts`` on every call) counts."""

from __future__ import annotations

import functools
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_entropy.core.regex import collect_unsupported_patterns
from pytest_entropy.core.trial import TrialTally
from pytest_entropy.core.validation import (
    CallChecks,
    accepts,
    collect_external_refs,
)
from pytest_entropy.testing import strategies as entropy_st

NAMES = ["a", "b", "id", "path", "10", ""]
PATTERNS = ["^a", "b$", "^[0-9]+$", "(?=a)", "(a)\\1", "[", "x|y"]
FORMATS = ["date", "date-time", "email", "ipv4", "uri", "uuid", "regex", "url", "nope"]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, 2.5, -1.5, 1e300]),
    st.sampled_from(["", "a", "ab", "b", "10", "x@y.z", "2024-01-31", "1.2.3.4", "http://h/"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(NAMES), inner, max_size=3)
    ),
    max_leaves=8,
)
TYPES = ["string", "integer", "number", "boolean", "null", "object", "array"]


def _leaf_keywords() -> st.SearchStrategy[dict[str, Any]]:
    number = st.one_of(st.integers(-2, 3), st.sampled_from([0.5, 2.0, 0]))
    return st.one_of(
        st.builds(lambda t: {"type": t}, st.sampled_from(TYPES)),
        st.builds(lambda t: {"type": t}, st.lists(st.sampled_from(TYPES), max_size=3)),
        st.builds(lambda t: {"type": t}, st.sampled_from(["str", 5, {"a": 1}, "any"])),
        st.builds(lambda v: {"enum": v}, st.lists(SCALARS, max_size=4)),
        st.builds(lambda v: {"enum": v}, st.lists(VALUES, max_size=3)),
        st.builds(lambda v: {"enum": v}, st.sampled_from(["ab", {"a": 1}, 3])),
        st.builds(lambda v: {"const": v}, VALUES),
        st.builds(lambda k, n: {k: n}, st.sampled_from(["minimum", "maximum"]), number),
        st.builds(
            lambda k, n: {k: n}, st.sampled_from(["exclusiveMinimum", "exclusiveMaximum"]), number
        ),
        st.builds(lambda n: {"multipleOf": n}, st.sampled_from([2, 0.5, 0, 3])),
        st.builds(
            lambda k, n: {k: n},
            st.sampled_from(["minLength", "maxLength", "minItems", "maxItems"]),
            st.one_of(st.integers(0, 3), st.just("x")),
        ),
        st.builds(lambda k, n: {k: n}, st.sampled_from(["minProperties", "maxProperties"]), number),
        st.builds(lambda u: {"uniqueItems": u}, st.booleans()),
        st.builds(lambda f: {"format": f}, st.sampled_from(FORMATS)),
        st.builds(lambda p: {"pattern": p}, st.one_of(st.sampled_from(PATTERNS), st.just(3))),
        st.builds(
            lambda d: {"dependentRequired": d},
            st.dictionaries(st.sampled_from(NAMES), st.lists(st.sampled_from(NAMES), max_size=2)),
        ),
        st.builds(
            lambda v: {"required": v},
            st.one_of(st.lists(st.sampled_from(NAMES), max_size=3), st.just([1]), st.just("a")),
        ),
        st.sampled_from(
            [{"description": "d"}, {"x-fabric-enum-candidate": True}, {"default": 1}, {}]
        ),
    )


# Keywords outside the compiled subset: the schema must fall back and still agree.
FALLBACKS = st.sampled_from(
    [
        {"$ref": "#/$defs/s", "$defs": {"s": {"type": "string"}}},
        {"$ref": "https://example.invalid/s.json"},
        {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        {"not": {"type": "null"}},
        {"patternProperties": {"^a": {"type": "integer"}}},
        {"prefixItems": [{"type": "string"}]},
        {"$schema": "http://json-schema.org/draft-07/schema#"},
        {"$schema": "http://json-schema.org/draft-04/schema#", "exclusiveMinimum": True},
        {"$id": "urn:example:s"},
        {"propertyNames": {"pattern": "^a"}},
        {"unevaluatedProperties": False},
        {"if": {"type": "string"}, "then": {"minLength": 1}},
    ]
)


def _merged(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in parts:
        out.update(part)
    return out


def _extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    properties = st.builds(
        lambda props, base: {**base, "properties": props},
        st.dictionaries(st.sampled_from(NAMES), inner, max_size=3),
        st.lists(_leaf_keywords(), max_size=2).map(_merged),
    )
    additional = st.builds(
        lambda base, extra: {**base, "additionalProperties": extra},
        properties,
        st.one_of(st.booleans(), inner, st.sampled_from([0, "x", None])),
    )
    items = st.builds(
        lambda base, sub: {**base, "items": sub},
        st.lists(_leaf_keywords(), max_size=2).map(_merged),
        st.one_of(inner, st.just([{"type": "string"}])),
    )
    fallback = st.builds(lambda base, extra: {**base, **extra}, properties, FALLBACKS)
    return st.one_of(properties, additional, items, fallback)


SCHEMAS = st.recursive(
    st.one_of(st.lists(_leaf_keywords(), max_size=3).map(_merged), st.booleans()),
    _extend,
    max_leaves=8,
)
OBJECT_SCHEMAS = SCHEMAS.filter(lambda schema: type(schema) is dict)


def _observed(call: Any) -> tuple[bool, set[str], set[str]]:
    with collect_unsupported_patterns() as patterns, collect_external_refs() as refs:
        verdict = call()
    return verdict, patterns, refs


# Every schema meets these too: the scalars where JSON Schema's types and comparisons differ
# from Python's (1.0 is an integer, True is not 1), and containers of them.
BATTERY_SCALARS: list[Any] = [None, True, False, 0, 1, -1, 3, 0.0, 1.0, 2.5, 1e300, "", "a", "ab"]
BATTERY_SCALARS += ["10", "x@y.z", "2024-01-31", "1.2.3.4", "http://h/", "urn:x"]
BATTERY: list[Any] = [
    *BATTERY_SCALARS,
    [],
    [1, 1],
    [1, True],
    ["a", "b"],
    [[]],
    {},
    {"a": {"b": 1}},
    *({name: scalar} for name in NAMES for scalar in BATTERY_SCALARS),
    *({name: [scalar]} for name in NAMES[:3] for scalar in BATTERY_SCALARS),
    {"a": 1, "b": "x", "id": None},
]


@settings(max_examples=300)
@given(OBJECT_SCHEMAS, st.lists(VALUES, max_size=4))
def test_compiled_checks_give_the_plain_verdicts(schema: Any, values: list[Any]) -> None:
    check = CallChecks()(schema)
    for value in [*values, *BATTERY]:
        assert _observed(functools.partial(check, value)) == _observed(
            functools.partial(accepts, schema, value)
        )


@given(OBJECT_SCHEMAS, VALUES)
def test_values_shaped_by_the_schema_agree_too(schema: Any, noise: Any) -> None:
    # Values built from the schema's own names and enum members reach the deep branches.
    properties = schema.get("properties")
    value: dict[str, Any] = dict.fromkeys(properties if isinstance(properties, dict) else (), noise)
    enum = schema.get("enum")
    for member in enum if isinstance(enum, list) else ():
        value[str(member)[:3]] = member
    check = CallChecks()(schema)
    for candidate in (value, [value, noise], noise):
        assert check(candidate) == accepts(schema, candidate)


def test_the_compiled_path_is_taken() -> None:
    plain = {"type": "object", "properties": {"a": {"type": "string", "enum": ["x"]}}}
    with_ref = {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {}}
    assert CallChecks()(plain).__name__ == "check"
    assert CallChecks()(with_ref).__name__ == "check"  # refs compile too now


def test_equal_schemas_share_one_check() -> None:
    checks = CallChecks()
    first = checks({"type": "object", "required": ["a"]})
    assert checks({"type": "object", "required": ["a"]}) is first
    assert checks({"type": "object"}) is not first
    assert checks(None)({}) is False


@given(entropy_st.surface_pairs(), st.lists(entropy_st.traces(), max_size=6))
def test_a_trial_with_checks_counts_what_the_plain_trial_counts(
    pair: tuple[dict[str, Any], dict[str, Any]], traces: list[dict[str, Any]]
) -> None:
    live, effective = pair
    audits = [
        {"ref": op["ref"], "args": op["args"]} for trace in traces for op in trace["operations"]
    ]
    quick = TrialTally(live, effective, CallChecks())
    for trace in traces:
        quick.add_trace(trace)
    for call in audits:
        quick.add_audit(call)
    plain = TrialTally(live, effective)
    for trace in traces:
        plain.add_trace(trace)
    for call in audits:
        plain.add_audit(call)
    assert quick.counts == plain.counts


@settings(max_examples=200)
@given(OBJECT_SCHEMAS, st.lists(VALUES, max_size=4))
def test_remembered_verdicts_equal_fresh_ones(schema: Any, values: list[Any]) -> None:
    # Values as a session file holds them: decoded from JSON text, each checked twice (the
    # second time may come from memory) against the plain verdict and its side records.
    decoded = [json.loads(json.dumps(value)) for value in [*values, *BATTERY]]
    checks = CallChecks(decoded=True)
    check = checks(schema)
    first = [_observed(functools.partial(check, value)) for value in decoded]
    again = [_observed(functools.partial(check, value)) for value in decoded]
    plain = [_observed(functools.partial(accepts, schema, value)) for value in decoded]
    assert first == plain
    assert again == plain


def test_memory_keeps_types_apart() -> None:
    check = CallChecks(decoded=True)({"type": "object", "properties": {"a": {"enum": [1]}}})
    assert [check({"a": value}) for value in (1, 1.0, True, "1", 1, True)] == [
        True,
        True,
        False,
        False,
        True,
        False,
    ]
    pattern = CallChecks(decoded=True)({"properties": {"a": {"pattern": "(?=x)"}}})
    with collect_unsupported_patterns() as seen:
        pattern({"a": "y"})
    with collect_unsupported_patterns() as again:
        pattern({"a": "y"})  # a check that records something is never answered from memory
    assert seen == again == {"(?=x)"}
