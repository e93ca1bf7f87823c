"""Hypothesis strategies for operations, traces, schemas, surfaces and session lines.

hypothesis comes with the ``hypothesis`` (or ``testing``) extra, not with the plugin:
``pip install "pytest-entropy[hypothesis]"``. Without it, importing this module raises a
:class:`~pytest_entropy.core.extras.MissingExtraError` (an ``ImportError``) that says so::

    from hypothesis import given
    from pytest_entropy.testing import strategies as es

    @given(es.traces())
    def test_my_tool_surface(traces): ...
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from pytest_entropy.core.extras import missing_extra

try:
    from hypothesis import strategies as st
except ModuleNotFoundError as error:
    raise missing_extra(error, "hypothesis", "hypothesis", __name__) from None

__all__ = [
    "args",
    "json_values",
    "operations",
    "refs",
    "schemas",
    "session_line",
    "surface_pairs",
    "surfaces",
    "tightened",
    "trace_envelopes",
    "traces",
]

OUTCOMES = ("succeeded", "failed", "aborted", "timed_out")
STAGES = ("resolve", "prepare", "validate", "approve", "invoke", "guard")

_key_text = st.text(alphabet=st.characters(codec="utf-8"), min_size=0, max_size=6)
keys = st.one_of(
    st.sampled_from(["path", "limit", "query", "mode", "format", "10", "a"]), _key_text
)


@cache
def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Any finite JSON value (nested objects and arrays of bounded size)."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**53) + 1, 2**53 - 1),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=8),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)
        ),
        max_leaves=max_leaves,
    )


@cache
def args(max_leaves: int = 8) -> st.SearchStrategy[dict[str, Any]]:
    """An operation's argument object."""
    return st.dictionaries(keys, json_values(max_leaves), max_size=5)


@cache
def refs() -> st.SearchStrategy[str]:
    """Refs from every family the meter distinguishes (navigation, workflow, actions)."""
    return st.sampled_from(
        [
            "pi.read",
            "pi.edit",
            "pi.bash",
            "mcp.report.render",
            "mcp.flaky.run",
            "memory.expand",
            "state.get",
            "fabric.discovery.search",
            "fabric.workflow.phase",
            "fabric.workflow",
            "fabric.other.x",
            "\U0001f600.tool",
            "\uffff.tool",
        ]
    )


@st.composite
def operations(draw: st.DrawFn) -> dict[str, Any]:
    """A meter operation ``{ref, args, outcome, failureStage?}``."""
    op: dict[str, Any] = {
        "ref": draw(refs()),
        "args": draw(args()),
        "outcome": draw(st.sampled_from(OUTCOMES)),
    }
    if draw(st.booleans()):
        op["failureStage"] = draw(st.sampled_from(STAGES))
    return op


@st.composite
def traces(draw: st.DrawFn, max_operations: int = 8) -> dict[str, Any]:
    """A meter trace ``{operations, taskKey?, model?}``."""
    trace: dict[str, Any] = {
        "operations": draw(st.lists(operations(), max_size=max_operations)),
    }
    if draw(st.booleans()):
        trace["taskKey"] = draw(st.sampled_from(["build", "fix", "", "(none)", "verify"]))
    if draw(st.booleans()):
        trace["model"] = draw(st.sampled_from(["p/alpha", "p/beta", "z/kimi"]))
    return trace


@cache
def schemas(max_leaves: int = 10) -> st.SearchStrategy[Any]:
    """JSON Schemas of the shapes static freedom distinguishes, and some that are not."""
    leaves = st.one_of(
        st.sampled_from(
            [
                {"type": "string"},
                {"type": "integer"},
                {"type": "number"},
                {"type": "boolean"},
                {"type": "null"},
                {"type": ["string", "null"]},
                {"const": "x"},
                {},
                True,
            ]
        ),
        st.lists(st.text(max_size=4), max_size=70).map(lambda values: {"enum": values}),
    )

    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        objects = st.builds(
            lambda props, required, closed: {
                "type": "object",
                "properties": props,
                "required": required,
                **({"additionalProperties": False} if closed else {}),
            },
            st.dictionaries(keys, inner, max_size=4),
            st.lists(keys, max_size=3),
            st.booleans(),
        )
        arrays = st.builds(lambda items: {"type": "array", "items": items}, inner)
        unions = st.builds(
            lambda branches, which: {which: branches},
            st.lists(inner, min_size=1, max_size=3),
            st.sampled_from(["anyOf", "oneOf"]),
        )
        return st.one_of(objects, arrays, unions)

    return st.recursive(leaves, extend, max_leaves=max_leaves)


@st.composite
def surfaces(draw: st.DrawFn) -> dict[str, Any]:
    """A surface snapshot ``{version: 1, actions: [{ref, inputSchema}]}``."""
    names = draw(st.lists(refs(), max_size=5, unique=True))
    return {
        "version": 1,
        "actions": [{"ref": name, "inputSchema": draw(schemas())} for name in names],
    }


def _tighten_schema(draw: st.DrawFn, schema: Any) -> Any:
    """A schema that admits no more than ``schema``: enums narrowed, keys required, closed."""
    if type(schema) is not dict:
        return schema
    out = dict(schema)
    # Only anyOf branches: narrowing one oneOf branch can *admit* a value that used to
    # match two branches (oneOf [string, enum [a, b]] refuses "a"; with enum [b] it accepts
    # it), which schema containment rightly calls a loosening.
    if type(out.get("anyOf")) is list:
        out["anyOf"] = [_tighten_schema(draw, branch) for branch in out["anyOf"]]
    if type(out.get("enum")) is list and len(out["enum"]) > 1:
        out["enum"] = out["enum"][: draw(st.integers(1, len(out["enum"])))]
    if type(out.get("items")) is dict:
        out["items"] = _tighten_schema(draw, out["items"])
    properties = out.get("properties")
    if out.get("type") == "object" and type(properties) is dict and properties:
        out["properties"] = {key: _tighten_schema(draw, value) for key, value in properties.items()}
        required = list(out.get("required") or [])
        extra = draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
        out["required"] = required + [key for key in extra if key not in required]
        if draw(st.booleans()):
            out["additionalProperties"] = False
    return out


@st.composite
def tightened(draw: st.DrawFn, surface: dict[str, Any]) -> dict[str, Any]:
    """The same tools with schemas that admit no more (static freedom never rises)."""
    return {
        "version": 1,
        "actions": [
            {"ref": action["ref"], "inputSchema": _tighten_schema(draw, action["inputSchema"])}
            for action in surface["actions"]
        ],
    }


@st.composite
def surface_pairs(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(surface, a tightening of it)``: for ratchet and no-increase properties."""
    before = draw(surfaces())
    return before, draw(tightened(before))


@st.composite
def trace_envelopes(draw: st.DrawFn) -> dict[str, Any]:
    """A valid ``FabricExecutionTraceV1`` envelope."""
    ops = []
    for sequence, op in enumerate(draw(st.lists(operations(), max_size=6))):
        entry: dict[str, Any] = {"type": "call", "sequence": sequence * 2, **op}
        ops.append(entry)
    return {
        "kind": "pi-fabric.execution",
        "version": 1,
        "outcome": draw(st.sampled_from(OUTCOMES)),
        "phases": draw(st.lists(st.sampled_from(["build", "fix", ""]), max_size=2)),
        "operations": ops,
        "counts": {
            "droppedValues": 0,
            "truncatedValues": 0,
            "redactedValues": 0,
            "droppedOperations": 0,
        },
    }


def session_line(record: Any) -> str:
    """One compact JSON line as a host writes it."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)
