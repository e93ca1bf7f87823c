"""Writes the inputs of the metric v3 golden cases and runs the upstream on them.

CI never runs this; it documents how ``tests/data/v3-upstream/`` (synthetic corpora, inputs
committed) and ``tests/data/v3-upstream-real/`` (converted third-party corpora: only the
upstream's outputs are committed, the inputs are rebuilt from ``../shared/corpora`` by
:func:`prepare_real_case`, which the corpora test calls too) were made.

    python tests/data/v3_upstream_cases.py /tmp/h19-upstream/out [SHARED_CORPORA] [--real-only]

The first argument is the compiled upstream (see ``tests/data/v3_upstream.mjs``).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SYNTHETIC = HERE / "v3-upstream"
REAL = HERE / "v3-upstream-real"

COUNTS = {"droppedValues": 0, "truncatedValues": 0, "redactedValues": 0, "droppedOperations": 0}

# ----------------------------------------------------------------------------- helpers


def _dump(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    # A lone surrogate is written as its escape (the file stays UTF-8).
    return re.sub("[\ud800-\udfff]", lambda match: f"\\u{ord(match.group()):04x}", text)


def _write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _trace(operations: list[dict[str, Any]], phases: list[str] | None = None, **extra: Any) -> Any:
    failed = any(op["outcome"] != "succeeded" for op in operations)
    trace = {
        "kind": "pi-fabric.execution",
        "version": 1,
        "outcome": "failed" if failed else "succeeded",
        "phases": phases if phases is not None else ["work"],
        "operations": operations,
        "counts": dict(COUNTS),
    }
    trace.update(extra)
    return trace


def _op(sequence: int, ref: str, args: dict[str, Any], outcome: str = "succeeded", **extra: Any):
    op: dict[str, Any] = {"type": "call", "sequence": sequence, "ref": ref, "args": args}
    op["outcome"] = outcome
    op.update(extra)
    return op


def _result_line(trace: Any, audits: list[Any] | None, *, top: bool = False, **message: Any):
    details: dict[str, Any] = {"success": trace.get("outcome") == "succeeded", "trace": trace}
    if audits is not None:
        details["audits"] = audits
    if top:
        return _dump({"type": "message", "details": details, **message})
    body = {"role": "toolResult", "toolName": "fabric_exec", "details": details, **message}
    return _dump({"type": "message", "message": body})


def _witness(rules: list[dict[str, str]], seed: str) -> dict[str, Any]:
    digest = hashlib.sha256(seed.encode()).hexdigest()
    return {
        "version": 1,
        "baseSchemaDigest": digest,
        "beforeShape": hashlib.sha256((seed + "b").encode()).hexdigest(),
        "afterShape": hashlib.sha256((seed + "a").encode()).hexdigest(),
        "rules": rules,
    }


# ----------------------------------------------------------------------------- surfaces

CLOSED_RENDER = {
    "type": "object",
    "additionalProperties": False,
    "required": ["format"],
    "properties": {
        "format": {"type": "string", "enum": ["pdf", "html", "docx", "plainText", "rare-format"]},
        "title": {"type": "string"},
        "outputFormat": {"type": "string"},
        "pageLimit": {"type": "integer", "minimum": 1},
        "scale": {"type": "number"},
        "draft": {"type": "boolean"},
    },
}

BENCH_SURFACE = {
    "version": 1,
    "actions": [
        {
            "ref": "pi.read",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["path"],
                "properties": {
                    "path": {"type": "string"},
                    "limit": {"type": "number"},
                    "offset": {"type": "number"},
                },
            },
        },
        {
            "ref": "pi.edit",
            "inputSchema": {
                "type": "object",
                "required": ["path"],
                "properties": {"path": {"type": "string"}},
            },
        },
        {
            "ref": "pi.bash",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["command"],
                "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}},
            },
        },
        {
            "ref": "pi.grep",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"path": {"type": "string"}, "limit": {"type": ["integer", "null"]}},
            },
        },
        {
            "ref": "mcp.report.render",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["format"],
                "properties": {
                    "format": {"type": "string", "x-fabric-enum-candidate": True},
                    "title": {"type": "string"},
                },
            },
        },
        {
            "ref": "mcp.flags.set",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["level"],
                "properties": {
                    "level": {"type": "string", "enum": ["info", "warn", "error", "debug", "Info"]}
                },
            },
        },
        {
            "ref": "mcp.notes.search",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["query"],
                "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": "integer"},
                    "filters": {"type": "object"},
                },
            },
        },
        {
            "ref": "memory.recall",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "query": {"type": "string"},
                    "role": {"type": "string", "enum": ["user", "assistant"]},
                },
                "anyOf": [{"required": ["query"]}],
            },
        },
    ],
}

WITNESS_SURFACE = {
    "version": 1,
    "actions": [
        {"ref": "mcp.report.render", "inputSchema": CLOSED_RENDER},
        {
            "ref": "mcp.notes.create",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["title"],
                "properties": {
                    "title": {"type": "string"},
                    "body": {"type": "string"},
                    "Tags": {"type": "array", "items": {"type": "string"}},
                    "tags": {"type": "array"},
                    "priority": {"type": "number"},
                    "_meta": {"type": "object"},
                    "Zed": {"type": "string"},
                    "émoji": {"type": "string"},
                    "a-b": {"type": "string"},
                    "aB": {"type": "string"},
                },
            },
        },
        {
            "ref": "mcp.notes.search",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["query"],
                "properties": {
                    "query": {"type": "string", "x-fabric-enum-candidate": True},
                    "limit": {"type": "integer", "maximum": 50},
                    "sort": {"type": "string", "enum": ["newest", "Newest", "oldest"]},
                },
            },
        },
        {
            "ref": "pi.read",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["path"],
                "properties": {
                    "path": {"type": "string"},
                    "limit": {"type": "number"},
                    "offset": {"type": "number", "minimum": 0},
                },
            },
        },
        {
            "ref": "pi.bash",
            "inputSchema": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
        {
            "ref": "flow.a",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"x": {"type": "integer"}},
            },
        },
        {
            "ref": "flow.b",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"y": {"type": "string"}},
            },
        },
        {"ref": "flow.c", "inputSchema": {"type": "object"}},
        {
            "ref": "mcp.overloaded",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "name": {"type": "string"},
                    "owner": {"type": "string"},
                },
            },
        },
    ],
}

OPEN_SURFACE = {
    "version": 1,
    "actions": [
        {
            "ref": "pi.read",
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
        {
            "ref": "mcp.report.render",
            "inputSchema": {
                "type": "object",
                "additionalProperties": True,
                "properties": {"format": {"type": "string"}},
            },
        },
    ],
}

# ----------------------------------------------------------------------------- corpora


def _witness_files() -> dict[str, list[str]]:
    """Lines at every v3 ingestion edge: witnesses, resultTruncated, guard failures with
    audits, whitespace model lines, models on trace lines, many models, normal-form wins."""
    render_rules = [{"kind": "key-form", "key": "outputFormat"}]
    files: dict[str, list[str]] = {}
    lines = [
        _dump({"type": "session", "id": "s1"}),
        '{"type" : "model_change", "provider" : "zro", "modelId" : "kimi-k3"}',
        "",
        # normalization witness and resultTruncated: v3 accepts both
        _result_line(
            _trace(
                [
                    _op(0, "mcp.report.render", {}, normalization=_witness(render_rules, "w1")),
                    _op(1, "pi.read", {"path": "a.py", "limit": 40}, resultTruncated=True),
                    _op(2, "fabric.discovery.search", {"limit": 5}),
                ],
                ["triage"],
            ),
            [
                {"ref": "mcp.report.render", "args": {"output-format": "pdf", "format": "PDF"}},
                {"ref": "pi.read", "args": {"path": "a.py", "limit": "40"}},
            ],
        ),
        # an invalid witness (four keys): the whole trace is refused, its audits too
        _result_line(
            _trace(
                [
                    _op(0, "mcp.report.render", {}, normalization={"version": 1, "rules": []}),
                ]
            ),
            [{"ref": "mcp.report.render", "args": {"format": "html", "title": "dropped"}}],
        ),
        # an unknown key on the envelope: refused with its audits
        _result_line(
            _trace([_op(0, "pi.read", {"path": "b.py"})], note="extra"),
            [{"ref": "pi.read", "args": {"path": "never"}}],
        ),
        # sequence not increasing
        _result_line(
            _trace([_op(1, "pi.read", {"path": "c"}), _op(1, "pi.read", {"path": "d"})]),
            [{"ref": "pi.read", "args": {"path": "seq"}}],
        ),
        # a trace line that also names a model (the cursor moves on trace lines in v3)
        _dump(
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "provider": "openai",
                    "model": "gpt-5",
                    "details": {
                        "trace": _trace(
                            [
                                _op(
                                    0,
                                    "mcp.notes.search",
                                    {"query": "x", "limit": "10"},
                                    "failed",
                                    failureStage="validate",
                                ),
                                _op(1, "mcp.notes.search", {"query": "x", "limit": 10}),
                            ],
                            ["search"],
                        ),
                        "audits": [
                            {"ref": "mcp.notes.search", "args": {"query": "x", "limit": "10"}},
                            {
                                "ref": "mcp.notes.search",
                                "args": {"query": "x", "limit": 10, "sort": "NEWEST"},
                            },
                            {"ref": "mcp.notes.search", "args": {"query": "y", "limit": None}},
                            "not an audit",
                            {"ref": 5, "args": {}},
                            {"ref": "mcp.x", "args": [1]},
                        ],
                    },
                },
            }
        ),
        # top-level details
        _result_line(
            _trace(
                [
                    _op(0, "mcp.notes.create", {"title": "t"}),
                    _op(
                        1,
                        "mcp.notes.create",
                        {"Title": "t", "priority": "2"},
                        "failed",
                        failureStage="validate",
                    ),
                    _op(
                        2,
                        "mcp.notes.create",
                        {"title": "t", "priority": "2.50"},
                        "failed",
                        failureStage="prepare",
                    ),
                    _op(
                        3,
                        "mcp.notes.create",
                        {"title": "t", "body": None},
                        "failed",
                        failureStage="resolve",
                    ),
                    _op(4, "mcp.notes.create", {"title": "t", "a_b": "x", "émoji": "é"}, "failed"),
                ],
                ["create", "review"],
            ),
            [],
            top=True,
        ),
        '{"type":"message","message":{"role" : "assistant","provider":"anthropic",'
        '"model":"claude-sonnet-4-5","content":[]}}',
        "not json at all pi-fabric.execution",
        '["pi-fabric.execution"]',
    ]
    files["s1.jsonl"] = lines
    # Many models, sequence-fuse and overload-split material, CRLF line ends.
    rng = random.Random(30)
    models = [(f"p{index}", f"m{index}") for index in range(7)]
    lines = []
    for index in range(24):
        provider, model = models[index % len(models)]
        if index % 3 == 0:
            lines.append(_dump({"type": "model_change", "provider": provider, "modelId": model}))
        elif index % 3 == 1:
            lines.append(
                _dump(
                    {
                        "type": "message",
                        "message": {"role": "assistant", "provider": provider, "model": model},
                    }
                )
            )
        ops = [
            _op(0, "flow.a", {"x": index}),
            _op(1, "flow.b", {"y": str(index)}),
            _op(2, "flow.c", {}),
        ]
        if index % 4 == 0:
            ops.append(_op(3, "mcp.overloaded", {"id": str(index)}))
        elif index % 4 == 1:
            ops.append(_op(3, "mcp.overloaded", {"name": "n", "owner": "o"}))
        else:
            stage = rng.choice(["invoke", "validate", "approve", "guard", "resolve", None])
            extra = {"failureStage": stage} if stage else {}
            ops.append(
                _op(
                    3,
                    "mcp.report.render",
                    {
                        "Format": rng.choice(["PDF", "plain_text", "Rare Format", "pdf"]),
                        "scale": rng.choice(["1.5", "1e3", "-0", "0.1", "x", 2]),
                    },
                    rng.choice(["failed", "succeeded", "aborted", "timed_out"]),
                    **extra,
                )
            )
        audits = (
            [
                {
                    "ref": "mcp.report.render",
                    "args": {
                        "format": rng.choice(["pdf", "PDF", "Plain Text", "html"]),
                        "page_limit": rng.choice(["3", "03", 3, "0"]),
                        "draft": rng.choice([None, True, "true"]),
                    },
                }
            ]
            if index % 2
            else None
        )
        lines.append(_result_line(_trace(ops, [rng.choice(["a", "b", "c"])]), audits))
        lines.append(_dump({"type": "message", "message": {"role": "user", "content": "ok"}}))
    files["s2.jsonl"] = [line + "\r" for line in lines]
    # Enum-candidate values for declare-enum and a pool over many files.
    for number in range(3):
        lines = []
        for index in range(6):
            query = ["release", "release", "incident", "release", "todo"][(index + number) % 5]
            lines.append(
                _result_line(
                    _trace([_op(0, "mcp.notes.search", {"query": query})]),
                    [{"ref": "mcp.notes.search", "args": {"query": query, "limit": index}}],
                )
            )
        files[f"s{3 + number}.jsonl"] = lines
    return files


EDGE_SURFACE = {
    "version": 1,
    "actions": [
        {"ref": "mcp.report.render", "inputSchema": CLOSED_RENDER},
        {
            "ref": "mcp.keys",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["a"],
                "properties": {
                    key: {"type": "string"}
                    for key in [
                        "b",
                        "10",
                        "2",
                        "a",
                        "A",
                        "B",
                        "_x",
                        "-y",
                        "1",
                        "01",
                        "4294967295",
                        "4294967294",
                        "\u00e9",
                        "e",
                        "E",
                        "\u00df",
                        "ss",
                        "a\u200b",
                        "\u00e4",
                        "z",
                        "\u03a9",
                        "\u4e2d",
                        "\U0001f600",
                        "aa",
                        "a a",
                        "a-a",
                        "a_a",
                        "Zz",
                        "zZ",
                    ]
                },
            },
        },
        {
            "ref": "mcp.numbers",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "n": {"type": "number"},
                    "i": {"type": "integer", "maximum": 100},
                    "m": {"type": "number", "multipleOf": 0.1},
                    "o": {"type": ["string", "null"]},
                    "p": {"anyOf": [{"type": "null"}]},
                },
            },
        },
    ],
}


def _edge_files() -> dict[str, list[str]]:
    """Parser, guard and number edges the two languages could read differently."""

    def line(trace: Any, audits: Any = None) -> str:
        return _result_line(trace, audits)

    def nested(depth: int) -> Any:
        value: Any = "leaf"
        for _ in range(depth):
            value = {"a": value}
        return value

    render = "mcp.report.render"
    audit_values = (
        [
            {"ref": "mcp.numbers", "args": {"n": value}}
            for value in [
                "1e3",
                "-0",
                "1.50",
                "0x10",
                " 2",
                "2",
                "1e21",
                "123456789012345678901234",
                "1.7976931348623157e308",
                "0.000001",
                "1e-7",
                "5e-324",
                "100",
                "1.5",
                "0.1",
                "NaN",
                "Infinity",
                "",
                "+1",
                "1.",
            ]
        ]
        + [
            {"ref": "mcp.numbers", "args": {"i": value, "m": value}}
            for value in ["3", "300", "0.3", "3.0", "-1", "1e2"]
        ]
        + [
            {"ref": "mcp.numbers", "args": {"o": None, "p": None}},
            {"ref": "mcp.numbers", "args": {"n": None}},
        ]
        + [
            {"ref": render, "args": args}
            for args in [
                {"format": "PLAIN TEXT"},
                {"format": "plain-text"},
                {"format": "Plain_Text"},
                {"format": "1pdf"},
                {"format": "rare format"},
                {"format": "RARE_FORMAT"},
                {"format": "pdf", "Output-Format": "x"},
                {"format": "pdf", "output format": "x"},
                {"format": "pdf", "OUTPUT_FORMAT": "x", "outputFormat": "y"},
                {"format": "pdf", "Output-Format": "x", "output_format": "y"},
                {"format": "pdf", "title": None},
                {"format": None},
                {"format": "HTML", "scale": "2"},
                {"format": "pdf", "Page-Limit": "0"},
                {"format": "pdf", "page limit": "7"},
                {"FORMAT": "Docx", "Draft": None},
                {"format": "pdf", "\u00e9": 1},
            ]
        ]
        + [
            {"ref": "mcp.keys", "args": {"a": "x", "A": "y"}},
            {"ref": "mcp.keys", "args": {"a": 1}},
        ]
    )
    rows = [
        # numbers the reader must take as JavaScript does
        '{"type":"message","message":{"role":"toolResult","details":{"trace":'
        '{"kind":"pi-fabric.execution","version":1.0,"outcome":"succeeded","phases":["n"],'
        '"operations":[{"type":"call","sequence":0.0,"ref":"mcp.numbers","args":{"n":1.0},'
        '"outcome":"succeeded"},{"type":"call","sequence":1e0,"ref":"mcp.numbers",'
        '"args":{"n":-0},"outcome":"succeeded"}],"counts":{"droppedValues":0.0,'
        '"truncatedValues":0,"redactedValues":0,"droppedOperations":0}},"audits":['
        '{"ref":"mcp.numbers","args":{"n":-0,"i":1.0,"m":12345678901234567890,'
        '"o":9007199254740993,"p":1e21,"q":1e-7,"r":0.1,"s":-0.0,"t":5e-324,"u":1e400}}]}}}',
        '{"type":"message","details":{"trace":{"kind":"pi-fabric.execution","version":1,'
        '"outcome":"succeeded","phases":[],"operations":[{"type":"call","sequence":0,'
        '"ref":"mcp.numbers","args":{"n":1e400},"outcome":"succeeded"}],"counts":'
        + _dump(COUNTS)
        + '},"audits":[{"ref":"mcp.numbers","args":{"n":"dropped-inf"}}]}}',
        line(
            _trace([_op(9007199254740992, "mcp.numbers", {})]),
            [{"ref": "mcp.numbers", "args": {"n": "dropped-seq"}}],
        ),
        line(
            _trace([_op(9007199254740991, "mcp.numbers", {})]),
            [{"ref": "mcp.numbers", "args": {"n": "kept-seq"}}],
        ),
    ]
    for depth in (12, 13, 14, 15, 16):
        rows.append(
            line(
                _trace([_op(0, "mcp.keys", {"deep": nested(depth)})]),
                [{"ref": "mcp.keys", "args": {"a": f"depth-{depth}"}}],
            )
        )
    # what the prefilter sees is the raw line
    escaped = _dump({"details": {"trace": _trace([_op(0, "mcp.keys", {"a": "escaped"})])}})
    rows.append(escaped.replace("pi-fabric.execution", "pi-fabric\\u002eexecution"))
    rows.append(
        _dump(
            {
                "note": "pi-fabric.execution",
                "details": {
                    "trace": {
                        **_trace([_op(0, "mcp.keys", {"a": "escaped-2"})]),
                        "kind": "pi-fabric.execution",
                    }
                },
            }
        ).replace('"kind":"pi-fabric.execution"', '"kind":"pi-fabric\\u002eexecution"')
    )
    rows.append("\ufeff" + line(_trace([_op(0, "mcp.keys", {"a": "bom"})])))
    rows.append("\u00a0" + line(_trace([_op(0, "mcp.keys", {"a": "nbsp"})])) + "\u2028")
    rows.append(" \t" + line(_trace([_op(0, "mcp.keys", {"a": "spaces"})])) + " ")
    # details as an array at the top: the message's details are used
    rows.append(
        _dump(
            {
                "details": [],
                "message": {
                    "details": {
                        "trace": _trace([_op(0, "mcp.keys", {"a": "message-details"})]),
                        "audits": [{"ref": "mcp.keys", "args": {"a": "from-message"}}],
                    }
                },
            }
        )
    )
    # models: whitespace, tabs, empty and non-string fields
    rows.append('{"type"\t:\t"model_change","provider":"tab","modelId":"m"}')
    rows.append(line(_trace([_op(0, "mcp.keys", {"a": "tab-model"})])))
    rows.append('{"type":"model_change","provider":"","modelId":"m"}')
    rows.append('{"type":"message","message":{"role":"assistant","provider":"p","model":7}}')
    rows.append(line(_trace([_op(0, "mcp.keys", {"a": "still-tab"})])))
    rows.append('{"message":{"role":"assistant","provider":"late","model":"x"},"type":"message"}')
    # witnesses that are not
    good = _witness([{"kind": "enum-form", "key": "format"}], "e1")
    bad_rules = [
        [{"kind": "enum-form", "key": "format", "extra": 1}],
        [{"kind": "rename", "key": "format"}],
        [{"kind": "key-form", "key": "k"}] * 129,
        [{"kind": "key-form", "key": "__proto__"}],
    ]
    rows.append(
        line(
            _trace([_op(0, render, {}, normalization=good)]),
            [{"ref": render, "args": {"format": "PDF"}}],
        )
    )
    for index, rules in enumerate(bad_rules):
        rows.append(
            line(
                _trace([_op(0, render, {}, normalization={**good, "rules": rules})]),
                [{"ref": render, "args": {"format": f"bad-witness-{index}"}}],
            )
        )
    rows.append(line(_trace([_op(0, render, {}, normalization={**good, "version": 2})])))
    rows.append(
        line(
            _trace([_op(0, render, {}, resultTruncated="yes")]),
            [{"ref": render, "args": {"format": "truncated-string"}}],
        )
    )
    rows.append(line(_trace([_op(0, render, {}, "failed", failureStage="unknown")])))
    # the 512 KiB bound counts UTF-8 bytes of JSON.stringify (escapes included)
    for text in ("\u00e9" * 270_000, "\u0001" * 88_000, "\u0001" * 87_000):
        rows.append(
            line(
                _trace([_op(0, "mcp.keys", {"blob": text})]),
                [{"ref": "mcp.keys", "args": {"a": f"blob-{len(text)}-{ord(text[0])}"}}],
            )
        )
    # audits the pool's loader would refuse (our named exception) and odd values
    rows.append(
        line(
            _trace([_op(0, "mcp.keys", {"a": "odd-audits"})]),
            [
                {
                    "ref": "mcp.keys",
                    "args": {
                        "": "empty-key",
                        " k": "space",
                        "a\u0000b": "nul",
                        "k": "\ud800",
                        "t": True,
                        "f": False,
                        "long": "v" * 70_000,
                        "nested": {"x": 1},
                        "list": [1],
                    },
                },
                {"ref": "", "args": {"a": "empty-ref"}},
                {"ref": " mcp.keys", "args": {"a": "padded-ref"}},
            ],
        )
    )
    rows.append(line(_trace([_op(0, "mcp.numbers", {})]), audit_values))
    rows.append("")
    return {"e1.jsonl": rows}


UNICODE_KEYS = [
    "\U0001f600",
    "\uff01",
    "\ue000",
    "a\u0301",
    "\u00e1",
    "\u01c6",
    "d\u017e",
    "\uff21",
    "A",
    "a\u0000",
    "a",
    "\U0001d400",
    "\ufb01",
    "fi",
    "\u2126",
    "\u03a9",
    "k" * 33,
]
UNICODE_SURFACE = {
    "version": 1,
    "actions": [
        {
            "ref": "mcp.unicode",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "properties": {key: {"type": "number"} for key in UNICODE_KEYS},
            },
        },
        {
            "ref": "mcp.\U0001f600",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["Mode"],
                "properties": {"Mode": {"type": "string", "enum": ["Fast", "slow", "\uff21"]}},
            },
        },
        {"ref": "mcp.\uff01", "inputSchema": {"type": "object"}},
        {
            "ref": "mcp.wide",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "properties": {f"key{index}": {"type": "string"} for index in range(40)},
            },
        },
    ],
}


def _unicode_files() -> dict[str, list[str]]:
    """Keys and refs outside the BMP and beside it: code-unit order, UTF-16 lengths
    (Levenshtein churn), collation in the stable hash, more than 32 keys in a signature."""
    rows = []
    for round_ in range(4):
        ops = []
        for index, key in enumerate(UNICODE_KEYS):
            ops.append(
                _op(
                    2 * index,
                    "mcp.unicode",
                    {key + "x" * round_: 1, "\U0001f600": {"a": {"b": {"c": [1]}}}},
                    "failed",
                    failureStage="validate",
                )
            )
            ops.append(_op(2 * index + 1, "mcp.unicode", {UNICODE_KEYS[-1 - index]: "1"}))
        ops.append(_op(100, "mcp.\U0001f600", {"mode": "FAST"}, "failed", failureStage="validate"))
        ops.append(_op(101, "mcp.\U0001f600", {"Mode": "Fast"}))
        ops.append(_op(102, "mcp.\uff01", {"\uff01": 1}))
        ops.append(_op(103, "mcp.wide", {f"key{index}": "v" for index in range(36)}))
        ops.append(
            _op(
                104,
                "mcp.wide",
                {f"Key{index}": "v" for index in range(3)},
                "failed",
                failureStage="validate",
            )
        )
        rows.append(
            _result_line(
                _trace(ops, ["\U0001f600", "b"][round_ % 2 :]),
                [
                    {
                        "ref": "mcp.unicode",
                        "args": {key: str(index) for index, key in enumerate(UNICODE_KEYS)},
                    },
                    {"ref": "mcp.\U0001f600", "args": {"MODE": "slow", "x": "\U0001f600"}},
                    {"ref": "mcp.wide", "args": {f"KEY_{index}": "v" for index in range(5)}},
                ],
            )
        )
    return {"u1.jsonl": rows}


def _write_case(
    name: str, files: dict[str, list[str]] | Path, surface: Any, repairs: Any = None
) -> Path:
    case = SYNTHETIC / name
    if case.exists():
        shutil.rmtree(case)
    (case / "sessions").mkdir(parents=True)
    sessions: list[str] = []
    if isinstance(files, Path):
        for path in sorted(files.glob("*.jsonl")):
            shutil.copyfile(path, case / "sessions" / path.name)
            sessions.append(f"sessions/{path.name}")
    else:
        for file_name, lines in sorted(files.items()):
            (case / "sessions" / file_name).write_text(
                "\n".join(lines) + "\n", encoding="utf-8", newline=""
            )
            sessions.append(f"sessions/{file_name}")
    if isinstance(surface, Path):
        shutil.copyfile(surface, case / "surface.json")
    else:
        _write_json(case / "surface.json", surface)
    spec: dict[str, Any] = {"sessions": sessions, "surface": "surface.json"}
    if repairs is not None:
        shutil.copyfile(repairs, case / "repairs.json")
        spec["repairs"] = "repairs.json"
    _write_json(case / "spec.json", spec)
    return case


def _pool_growth_case(scratch: Path) -> Path:
    """Three pool runs: files, then one grown, one rewritten, one new and one unchanged,
    then the first files again (skipped by digest)."""
    from corpus_gen import write_corpus  # type: ignore[import-not-found]

    first, second = scratch / "growth-1", scratch / "growth-2"
    write_corpus(first, files=3, megabytes=0.06, seed=5)
    write_corpus(second, files=4, megabytes=0.1, seed=6)
    case = _write_case("pool-growth", first, BENCH_SURFACE)
    steps: list[list[str]] = [[f"sessions/{path.name}" for path in sorted(first.glob("*.jsonl"))]]
    (case / "step-2").mkdir()
    grown = (first / "session-0000.jsonl").read_text(encoding="utf-8")
    grown += (second / "session-0003.jsonl").read_text(encoding="utf-8")
    (case / "step-2" / "session-0000.jsonl").write_text(grown, encoding="utf-8", newline="")
    for name in ("session-0001.jsonl", "session-0003.jsonl"):
        shutil.copyfile(second / name, case / "step-2" / name)
    shutil.copyfile(first / "session-0002.jsonl", case / "step-2" / "session-0002.jsonl")
    steps.append([f"step-2/{path.name}" for path in sorted((case / "step-2").glob("*.jsonl"))])
    steps.append(steps[0])
    spec = json.loads((case / "spec.json").read_text(encoding="utf-8"))
    spec["poolSteps"] = steps
    _write_json(case / "spec.json", spec)
    return case


DIFFERENCES = HERE / "v3-upstream-differences"


def write_difference_cases() -> list[Path]:
    """Cases where we differ from the upstream on purpose (docs/metric-v3.md)."""
    global SYNTHETIC
    kept, SYNTHETIC = SYNTHETIC, DIFFERENCES
    try:
        # A surface that declares a ref twice: the upstream derives a plan for each and
        # writes an artifact its own loader refuses; we refuse to write it.
        surface = {
            "version": 1,
            "actions": [
                WITNESS_SURFACE["actions"][0],
                *WITNESS_SURFACE["actions"],
                {
                    **WITNESS_SURFACE["actions"][3],
                    "inputSchema": OPEN_SURFACE["actions"][0]["inputSchema"],
                },
            ],
        }
        return [_write_case("duplicate-refs", _witness_files(), surface)]
    finally:
        SYNTHETIC = kept


def write_synthetic_cases(scratch: Path) -> list[Path]:
    sys.path.insert(0, str(ROOT / "bench"))
    from corpus_gen import write_corpus  # type: ignore[import-not-found]

    cases = [
        _write_case(
            "demo",
            ROOT / "corpora/demo/sessions",
            ROOT / "corpora/demo/surface.json",
            ROOT / "corpora/demo/repairs.json",
        ),
        _write_case("witnesses", _witness_files(), WITNESS_SURFACE),
        _write_case("open-surface", _witness_files(), OPEN_SURFACE),
        _write_case("edges", _edge_files(), EDGE_SURFACE),
        _write_case("unicode", _unicode_files(), UNICODE_SURFACE),
    ]
    bench = scratch / "bench"
    write_corpus(bench, files=3, megabytes=0.25, seed=19)
    cases.append(_write_case("bench", bench, BENCH_SURFACE))
    cases.append(_pool_growth_case(scratch))
    many = scratch / "bench-many"
    write_corpus(many, files=20, megabytes=0.2, seed=1930)
    cases.append(_write_case("bench-many-files", many, BENCH_SURFACE))
    return cases


def _artifact_variants(case: Path, compiled_text: str) -> list[str]:
    """Incumbent and peer artifacts derived from the case's own compiled.json: forged,
    stale, legacy, padded and invalid ones. Written under ``artifacts/``; returns their
    paths relative to the case."""
    compiled = json.loads(compiled_text)
    plans = compiled["normalizations"]
    ghost = {**plans[0], "ref": "mcp.ghost"}
    variants: dict[str, Any] = {
        "same-plans-other-gate.json": {
            **compiled,
            "gate": {"passed": False, "beforeScore": 9, "afterScore": 1.5, "reasons": ["old"]},
            "applied": [{"kind": "normal-form", "ref": " padded ", "detail": " 1 rule "}],
            "evidenceDigest": "  old-digest  ",
            "metricVersion": 7,
        },
        "forged.json": {
            **compiled,
            "normalizations": [
                {**plans[0], "rules": list(reversed(plans[0]["rules"]))},
                {**plans[1], "baseSchemaDigest": "0" * 64},
                *plans[2:],
                ghost,
            ],
        },
        "subset.json": {**compiled, "normalizations": plans[1:]},
        "stale-only.json": {**compiled, "normalizations": [ghost]},
        "empty-v2.json": {**compiled, "normalizations": [], "applied": []},
        "legacy-v1.json": {
            "version": 1,
            "metricVersion": 2,
            "actions": [
                {
                    "ref": plans[0]["ref"],
                    "inputSchema": {"type": "object"},
                    "baseSchemaDigest": plans[0]["baseSchemaDigest"],
                }
            ],
            "quarantined": [{"ref": "mcp.notes.search", "baseSchemaDigest": "abc"}],
            "applied": [{"kind": "enum-tighten", "ref": plans[0]["ref"], "detail": "x"}],
            "gate": {"passed": True, "beforeScore": 1, "afterScore": 0.5, "reasons": []},
            "evidenceDigest": "legacy",
        },
        "invalid-restrictions.json": {
            **compiled,
            "quarantined": [{"ref": "mcp.notes.search", "baseSchemaDigest": "abc"}],
        },
        "invalid-duplicate.json": {**compiled, "normalizations": [plans[0], plans[0]]},
        "invalid-plan.json": {**compiled, "normalizations": [{**plans[0], "extra": 1}]},
        "invalid-version.json": {**compiled, "version": 3},
    }
    (case / "artifacts").mkdir(exist_ok=True)
    names = []
    for name, value in variants.items():
        _write_json(case / "artifacts" / name, value)
        names.append(f"artifacts/{name}")
    return names


# ----------------------------------------------------------------------------- real corpora

# name -> (session path, format, tool list) under the shared corpora.
REAL_CASES: dict[str, tuple[str, str, str]] = {
    "pi-sessions": (
        "pi-sessions/sessions",
        "pi",
        "pi-sessions/surface/pi-coding-agent-0.73.1.tools.json",
    ),
    "pi-sessions-old-surface": (
        "pi-sessions/sessions",
        "pi",
        "pi-sessions/surface/pi-coding-agent-0.27.9.tools.json",
    ),
    "claude-code": (
        "claude-code-sessions-spotter/transcripts",
        "claude-code",
        "claude-code-sessions-spotter/surface/claude-code-2.1.39.tools.json",
    ),
    "tau-bench": (
        "tau-bench-historical/gpt-4o-airline.json",
        "tau-bench",
        "tau-bench-historical/tools_at_7362a17.json",
    ),
    "openhands": (
        "openhands-trajectories/evaluation/benchmarks/multi_swe_bench/examples/output.jsonl",
        "openhands",
        "openhands-trajectories/surface/openhands-codeact-tools@3d22520.json",
    ),
    "toolbench": ("toolbench-data-example/data_example/answer", "toolbench", ""),
    "bfcl-v4": ("bfcl-v4-results-gpt-oss/results", "bfcl", "bfcl-v4-data/multi_turn_func_doc"),
}


def _spelled(key: str, style: int) -> str:
    if style == 0:
        return key.upper()
    if style == 1:
        return re.sub("([a-z0-9])([A-Z])", r"\1_\2", key).lower()
    return re.sub("([a-z0-9])([A-Z])", r"\1-\2", key).replace("_", "-").title()


def _value_for(schema: Any, style: int) -> Any:
    """A value for a property: canonical (style -1) or spelled the way models spill it."""
    if not isinstance(schema, dict):
        return "x"
    kind = schema.get("type")
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        member = enum[style % len(enum)] if style >= 0 else enum[0]
        if style >= 0 and isinstance(member, str):
            return member.upper().replace("-", " ") if style % 2 else member.replace("_", "-")
        return member
    if kind in ("number", "integer"):
        return 3 if style < 0 else ("3", "03", "1e1")[style % 3]
    if kind == "boolean":
        return True if style < 0 else "true"
    if kind == "array":
        return [] if style < 0 else "[]"
    if kind == "object":
        return {}
    return "text" if style < 0 else None


def generated_sessions(surface: dict[str, Any], out: Path) -> list[str]:
    """Calls to every action of a real surface (no real session exists for it): canonical
    arguments, then keys and values spelt the ways models spill them, as failed validate
    calls with their audits. Deterministic; written to ``out/sessions/generated.jsonl``."""
    rows = []
    for index, action in enumerate(surface["actions"]):
        schema = action.get("inputSchema")
        properties = schema.get("properties") if isinstance(schema, dict) else None
        properties = properties if isinstance(properties, dict) else {}
        items = list(properties.items())
        calls = [{key: _value_for(value, -1) for key, value in items}]
        for style in range(3):
            spilled = {_spelled(key, style): _value_for(value, style) for key, value in items}
            calls.append(spilled)
        operations = [
            _op(
                number,
                action["ref"],
                {},
                *(("succeeded",) if number == 0 else ("failed",)),
                **({} if number == 0 else {"failureStage": "validate"}),
            )
            for number in range(len(calls))
        ]
        audits = [{"ref": action["ref"], "args": args} for args in calls]
        rows.append(_result_line(_trace(operations, [f"tool-{index % 5}"]), audits))
    (out / "sessions").mkdir(parents=True, exist_ok=True)
    (out / "sessions" / "generated.jsonl").write_text(
        "\n".join(rows) + "\n", encoding="utf-8", newline=""
    )
    return ["sessions/generated.jsonl"]


# Real surfaces without real sessions: name -> (tool files, ref prefix).
REAL_SURFACES: dict[str, tuple[str, str]] = {
    "github-mcp-toolsnaps": ("github-mcp-server-toolsnaps/head", "mcp.github."),
    "mcp-servers-tools-list": ("mcp-servers-tools-list/servers", ""),
}


def prepare_real_surface_case(name: str, corpora: Path, out: Path) -> dict[str, Any]:
    """A real surface (all its tool files, each server's tools under ``mcp.<server>.``)
    with generated calls; writes the snapshot and spec in ``out``; returns the spec."""
    from pytest_entropy.sources.surface import load_surface

    source, prefix = REAL_SURFACES[name]
    path = corpora / source
    if prefix:
        surface = load_surface(path, ref_prefix=prefix)
    else:
        actions = []
        for file in sorted(path.glob("*.tools.json")):
            server = file.name.removesuffix(".tools.json")
            actions += load_surface(file, ref_prefix=f"mcp.{server}.")["actions"]
        surface = {"version": 1, "actions": actions}
    _write_json(out / "surface.json", surface)
    spec = {"sessions": generated_sessions(surface, out), "surface": "surface.json"}
    _write_json(out / "spec.json", spec)
    return spec


def prepare_real_case(name: str, corpora: Path, out: Path) -> dict[str, Any]:
    """Convert one real corpus with our ``convert`` into ``out`` and write its snapshot
    surface and spec there; returns the spec (paths relative to ``out``)."""
    from pytest_entropy.cli import main
    from pytest_entropy.sources.surface import load_surface

    if name in REAL_SURFACES:
        return prepare_real_surface_case(name, corpora, out)
    sessions, session_format, tools = REAL_CASES[name]
    converted = out / "sessions"
    argv = [
        "convert",
        "--format",
        session_format,
        "--sessions",
        str(corpora / sessions),
        "--out",
        str(converted),
        "--no-progress",
        "--json",
    ]
    if tools:
        argv += ["--surface", str(corpora / tools)]
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()) as text:
        code = main(argv)
    if code != 0:
        raise RuntimeError(f"convert {name} exited {code}")
    result = json.loads(text.getvalue())
    files = sorted(Path(item["output"]).relative_to(out).as_posix() for item in result["files"])
    surface = load_surface(corpora / tools) if tools else {"version": 1, "actions": []}
    _write_json(out / "surface.json", surface)
    spec = {"sessions": files, "surface": "surface.json"}
    _write_json(out / "spec.json", spec)
    return spec


def run_upstream(upstream: Path, spec: Path) -> dict[str, Any]:
    text = subprocess.run(
        ["node", str(HERE / "v3_upstream.mjs"), str(upstream), str(spec)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(text)


def main() -> None:
    arguments = [argument for argument in sys.argv[1:] if not argument.startswith("--")]
    upstream = Path(arguments[0])
    corpora = Path(arguments[1]) if len(arguments) > 1 else ROOT.parent / "shared" / "corpora"
    scratch = Path("/tmp/v3-upstream-cases")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    real_only = "--real-only" in sys.argv
    synthetic = [] if real_only else [*write_synthetic_cases(scratch), *write_difference_cases()]
    for case in synthetic:
        value = run_upstream(upstream, case / "spec.json")
        if case.name in ("witnesses", "edges") and value["compiledJson"]:
            spec = json.loads((case / "spec.json").read_text(encoding="utf-8"))
            spec["artifacts"] = _artifact_variants(case, value["compiledJson"])
            _write_json(case / "spec.json", spec)
        output = subprocess.run(
            ["node", str(HERE / "v3_upstream.mjs"), str(upstream), str(case / "spec.json")],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        (case / "upstream.json").write_text(output, encoding="utf-8")
        print("wrote", case.relative_to(ROOT))
    for name in [*REAL_CASES, *REAL_SURFACES]:
        work = scratch / name
        work.mkdir()
        prepare_real_case(name, corpora, work)
        value = run_upstream(upstream, work / "spec.json")
        REAL.mkdir(exist_ok=True)
        # Only hashes and counts are kept: the inputs and their values are third-party data.
        kept = {
            key: value[key]
            for key in ("reportHash", "compact", "files", "recompileStatus", "poolNamedException")
        }
        report = value["report"]
        kept["summary"] = {
            "traces": report["totals"]["traces"],
            "actionOperations": report["totals"]["actionOperations"],
            "score": report["score"],
            "proposals": [proposal["kind"] for proposal in value["proposals"]],
            "compile": value["compile"]["status"],
            "trial": value["trial"]["verdict"],
        }
        _write_json(REAL / f"{name}.json", kept)
        print("wrote", name, kept["summary"])


if __name__ == "__main__":
    main()
