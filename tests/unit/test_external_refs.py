"""``$ref`` resolves only inside its schema: outside targets are counted, never fetched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.core.validation import accepts, collect_external_refs

REMOTE = "http://127.0.0.1:9/never.json"  # discard port: nothing may connect to it anyway
DRAFTS = [
    {},
    {"$schema": "http://json-schema.org/draft-07/schema#"},
    {"$schema": "https://json-schema.org/draft/2019-09/schema"},
]


@pytest.mark.parametrize("draft", DRAFTS)
def test_refs_inside_the_schema_are_still_enforced(draft: dict[str, Any]) -> None:
    schema = {
        **draft,
        "properties": {"n": {"$ref": "#/$defs/count"}},
        "$defs": {"count": {"type": "integer"}},
    }
    with collect_external_refs() as met:
        assert accepts(schema, {"n": 3})
        assert not accepts(schema, {"n": "three"})
    assert met == set()


def test_an_embedded_id_resource_is_inside_the_schema() -> None:
    schema = {
        "$id": "https://example.test/root.json",
        "properties": {"n": {"$ref": "count.json"}},
        "$defs": {"count": {"$id": "https://example.test/count.json", "type": "integer"}},
    }
    with collect_external_refs() as met:
        assert not accepts(schema, {"n": "three"})
    assert met == set()


def test_a_missing_pointer_inside_the_schema_still_rejects() -> None:
    schema = {"properties": {"n": {"$ref": "#/$defs/missing"}}}
    with collect_external_refs() as met:
        assert not accepts(schema, {"n": 3})
    assert met == set()


@pytest.mark.parametrize("draft", DRAFTS)
def test_an_external_ref_is_accepted_and_counted(draft: dict[str, Any], tmp_path: Path) -> None:
    strict = tmp_path / "strict.json"
    strict.write_text('{"type": "integer"}', encoding="utf-8")
    schema = {
        **draft,
        "type": "object",
        "properties": {
            "a": {"$ref": REMOTE + "#/definitions/a"},
            "b": {"$ref": strict.as_uri()},
            "c": {"$ref": "sibling.json"},
            "d": {"type": "integer"},
        },
    }
    with collect_external_refs() as met:
        assert accepts(schema, {"a": "x", "b": "not an integer", "c": []})
        assert not accepts(schema, {"b": "x", "d": "not an integer"})  # the rest still holds
        assert not accepts(schema, [])
    assert met == {REMOTE, strict.as_uri(), "sibling.json"}


def test_unevaluated_keywords_do_not_fail_on_an_external_ref() -> None:
    items = {"type": "array", "$ref": REMOTE, "unevaluatedItems": False}
    properties = {"type": "object", "$ref": REMOTE, "unevaluatedProperties": False}
    with collect_external_refs() as met:
        assert accepts(items, [1])
        assert accepts(properties, {"a": 1})
    assert met == {REMOTE}
