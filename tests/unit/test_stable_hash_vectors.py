"""The 460 stable-hash vectors: canonical text byte for byte, and its SHA-256."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from pytest_entropy.core.canonical import (
    EMPTY_ARRAY_DIGEST,
    canonical_json,
    stable_json_hash,
    stable_json_hash_array,
)
from tests.vectors import cases_of, ids, strict_json

CASES = cases_of("stable-hash")


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_canonical_text_and_digest(case: dict[str, Any]) -> None:
    value = strict_json(case["inputText"])
    text = canonical_json(value)
    assert text == case["canonicalJson"]
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == case["sha256"]
    assert stable_json_hash(value) == case["sha256"]


def test_every_vector_was_exercised() -> None:
    assert len(CASES) == 460


def test_empty_array_digest() -> None:
    assert stable_json_hash([]) == EMPTY_ARRAY_DIGEST


def test_chunked_array_hash_equals_the_whole() -> None:
    # V2-CV-25 #5: hashing 512 objects item by item equals hashing the list.
    items = [{"i": index, "b": [index, {"Z": "x", "a": None}]} for index in range(512)]
    assert stable_json_hash_array(items) == stable_json_hash(items)
    assert stable_json_hash_array(iter(items)) == stable_json_hash(items)
