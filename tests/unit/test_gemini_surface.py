"""The ``gemini`` surface format: functionDeclarations in every shape, detected by auto."""

from __future__ import annotations

import pytest

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.ingest.registry import surface_formats
from pytest_entropy.ingest.surfaces import surface_from_parsed
from pytest_entropy.ingest.tool_lists import detect_surface_format

DECLARATIONS = [
    {
        "name": "find",
        "parameters": {
            "type": "OBJECT",
            "properties": {
                "q": {"type": "STRING"},
                "tags": {"type": "ARRAY", "items": {"type": "STRING"}, "nullable": True},
            },
            "required": ["q"],
        },
    },
    {"name": "ping"},
    {"name": "raw", "parametersJsonSchema": {"type": "object", "additionalProperties": False}},
]
EXPECTED = [
    (
        "find",
        {
            "type": "object",
            "properties": {
                "q": {"type": "string"},
                "tags": {"type": ["array", "null"], "items": {"type": "string"}},
            },
            "required": ["q"],
        },
    ),
    ("ping", {"type": "object", "properties": {}}),
    ("raw", {"type": "object", "additionalProperties": False}),
]


@pytest.mark.parametrize(
    "value",
    [
        {"functionDeclarations": DECLARATIONS},
        {"function_declarations": DECLARATIONS},
        {
            "tools": [
                {"functionDeclarations": DECLARATIONS[:1]},
                {"functionDeclarations": DECLARATIONS[1:]},
            ]
        },
        [{"functionDeclarations": DECLARATIONS}],
    ],
)
def test_every_shape_reads_and_is_detected(value: object) -> None:
    assert "gemini" in surface_formats()
    assert detect_surface_format(value) == "gemini"
    surface = surface_from_parsed(value, source="g.json")
    assert [(a["ref"], a["inputSchema"]) for a in surface["actions"]] == EXPECTED


def test_a_declaration_without_a_name_is_named_in_the_error() -> None:
    with pytest.raises(EntropyInputError, match=r"g\.json: function declaration 1 has no name"):
        surface_from_parsed({"functionDeclarations": [{"name": "a"}, {}]}, source="g.json")
