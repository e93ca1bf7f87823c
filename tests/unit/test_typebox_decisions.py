"""The replay validator decides as TypeBox 1.3.8's ``Value.Check`` (issue 27).

``tests/data/typebox-decisions.json`` holds TypeBox's own decisions on a corpus of edge cases
for every keyword and format it checks, recorded by running the packaged TypeBox with node
(``tests/data/typebox_decisions.mjs``; CI never runs node). Every case is checked here on each
implementation path, through :func:`accepts` and through the per-command
:class:`CallChecks` (whose compiled checks the trial kernel calls), with the value parsed
from its JSON text by the session reader's parser, as replay sees it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.core.regex import watch_unenforced
from pytest_entropy.core.typebox import compile_schema
from pytest_entropy.core.validation import CallChecks, accepts
from pytest_entropy.ingest.jsonparse import parse_json_text
from tests.native_support import paths

DATA = Path(__file__).resolve().parents[1] / "data" / "typebox-decisions.json"
CASES: list[dict[str, Any]] = [
    {"schema": group["schema"], "value": text, "accepts": verdict}
    for group in json.loads(DATA.read_text(encoding="utf-8"))["schemas"]
    for text, verdict in group["values"]
]


def _explained(ours: bool, unenforced: bool) -> bool:
    """Whether a decision that differs from TypeBox's is the named exception
    (docs/decisions.md): a pattern RE2 cannot run is accepted and counted."""
    return unenforced and ours


def test_the_corpus_reaches_every_keyword_and_format() -> None:
    keywords: set[str] = set()
    formats: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            keywords.update(node)
            if isinstance(node.get("format"), str):
                formats.add(node["format"])
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    for case in CASES:
        walk(case["schema"])
    assert len(CASES) > 8000
    assert {True, False} == {case["accepts"] for case in CASES}
    assert formats >= {
        "date-time", "date", "time", "duration", "email", "idn-email", "hostname",
        "idn-hostname", "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference",
        "uri-template", "url", "uuid", "json-pointer", "json-pointer-uri-fragment",
        "relative-json-pointer", "regex",
    }  # fmt: skip
    assert keywords >= {
        "type", "enum", "const", "maxLength", "minLength", "pattern", "format", "multipleOf",
        "maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum", "required", "properties",
        "additionalProperties", "patternProperties", "dependentRequired", "dependencies",
        "dependentSchemas", "propertyNames", "minProperties", "maxProperties", "items",
        "prefixItems", "additionalItems", "contains", "minContains", "maxContains", "minItems",
        "maxItems", "uniqueItems", "$ref", "$defs", "$anchor", "$id", "$schema", "if", "then",
        "else", "not", "allOf", "anyOf", "oneOf", "unevaluatedProperties", "unevaluatedItems",
    }  # fmt: skip


@pytest.mark.parametrize("kind", ["native", "plain"])
def test_every_recorded_typebox_decision(kind: str) -> None:
    wrong = []
    with paths(kind):
        checks = CallChecks(decoded=True)
        for case in CASES:
            schema, value = case["schema"], parse_json_text(case["value"])
            if type(schema) is not dict:
                # A boolean root: TypeBox's decision, but accepts() first asks for a plain
                # object (spec §2.9), as the reference's registry does.
                assert compile_schema(schema).check(value) == case["accepts"]
                assert not accepts(schema, value)
                continue
            with watch_unenforced() as met:
                ours = accepts(schema, value)
                by_checks = checks(schema)(value)
            if by_checks != ours:
                wrong.append((case, "CallChecks disagrees with accepts"))
            elif ours != case["accepts"] and not _explained(ours, bool(met.patterns)):
                wrong.append((case, f"ours {ours}"))
    assert wrong == []


def test_the_named_exceptions_are_few() -> None:
    differing = []
    for case in CASES:
        if type(case["schema"]) is not dict:
            continue
        with watch_unenforced() as met:
            ours = accepts(case["schema"], parse_json_text(case["value"]))
        if ours != case["accepts"]:
            differing.append((case["value"], bool(met.patterns)))
    # Lookbehind and a backreference (RE2 cannot run them). The two -0 values are no longer
    # among them: the session reader keeps a -0 literal negative zero, as JSON.parse does.
    assert len(differing) == 2, differing
    assert all(unenforced for _, unenforced in differing)


# ------------------------------------------------------------------ the five cases


def test_max_length_counts_one_grapheme_for_a_combining_sequence() -> None:
    schema = {"type": "string", "maxLength": 1}
    assert accepts(schema, "e\u0301")
    assert not accepts(schema, "ab")


@pytest.mark.parametrize("value", [0.3, 0.7, 0.30000000000000004])
def test_multiple_of_a_decimal_divisor_has_typebox_tolerance(value: float) -> None:
    assert accepts({"type": "number", "multipleOf": 0.1}, value)
    assert not accepts({"type": "number", "multipleOf": 0.1}, 0.35)


def test_unique_items_keeps_negative_zero_apart() -> None:
    assert accepts({"type": "array", "uniqueItems": True}, [-0.0, 0])
    assert not accepts({"type": "array", "uniqueItems": True}, [0, 0.0])


def test_email_is_ascii_only() -> None:
    assert not accepts({"type": "string", "format": "email"}, "\u00e9@x.com")
    assert accepts({"type": "string", "format": "email"}, "e@x.com")


def test_enum_compares_doubles() -> None:
    assert accepts({"enum": [9007199254740992, 1]}, 9007199254740993)
    assert not accepts({"enum": [9007199254740992, 1]}, 9007199254740994)
