"""Random corpora and surfaces through our v3 CLI and the upstream's (a differential fuzz).

CI never runs this. With the upstream built as ``tests/data/v3_upstream.mjs`` says:

    PYTHONPATH=. python tests/data/v3_upstream_fuzz.py UPSTREAM/out FIRST_SEED COUNT

Each seed writes a case (closed and open object schemas with colliding key spellings,
enums with colliding forms, numeric and nullable types, TypeBox keywords; calls with keys
and values spelt the ways models spill them, all outcomes and stages, audits, models) to
/tmp/v3-upstream-fuzz/c<seed>, runs the upstream driver and our CLI on it and prints every
seed whose outputs differ. Surfaces never declare a ref twice (a known difference,
docs/metric-v3.md).
"""

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path as _Path

ROOT = _Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "data"))
import v3_upstream_cases as C  # noqa: E402

from tests.v3_upstream_support import assert_matches_upstream, our_outputs  # noqa: E402

KEYS = [
    "userId",
    "user_id",
    "UserID",
    "user-id",
    "user id",
    "name",
    "Name",
    "limit",
    "LIMIT",
    "a",
    "A",
    "b",
    "__proto__",
    "constructor",
    "k" * 129,
    "émoji",
    "x1",
    "1x",
    "_x",
    "x_",
    "path",
    "filePath",
    "file_path",
    "mode",
    "format",
    "scale",
    "count",
    "tags",
    "Tags",
    "z",
]
ENUMS = [
    ["pdf", "PDF", "html"],
    ["plainText", "plain-text", "rare"],
    ["a b", "ab", "A_B"],
    ["x"],
    [],
    ["1a", "b2"],
    ["One", "two", 3],
    ["low", "medium", "high"],
    ["Low", "LOW"],
    ["é", "e"],
]


def rschema(rng, depth=0):
    t = rng.random()
    if t < 0.25:
        s = {"type": "string"}
    elif t < 0.45:
        s = {"type": "string", "enum": rng.choice(ENUMS)}
    elif t < 0.55:
        s = {"type": "number"}
    elif t < 0.65:
        s = {
            "type": "integer",
            **rng.choice([{}, {"minimum": 0}, {"maximum": 10}, {"multipleOf": 2}]),
        }
    elif t < 0.7:
        s = {"type": "boolean"}
    elif t < 0.75:
        s = {"type": ["string", "null"]}
    elif t < 0.8:
        s = {"anyOf": [{"type": "string"}, {"type": "null"}]}
    elif t < 0.85:
        s = {"type": "array", "items": {"type": "string"}}
    elif t < 0.9:
        s = {"type": "null"}
    elif t < 0.93:
        s = True
    elif t < 0.96 and depth < 2:
        s = robject(rng, depth + 1)
    else:
        s = {}
    if isinstance(s, dict) and rng.random() < 0.3:
        s.update(
            rng.choice(
                [
                    {"minLength": 2},
                    {"pattern": "^[a-z]+$"},
                    {"format": "email"},
                    {"format": "date-time"},
                    {"maxLength": 3},
                    {"minimum": 1.5},
                    {"exclusiveMaximum": 5},
                    {"const": "x"},
                    {"default": None},
                    {"nullable": True},
                    {"enum": [None, "a"]},
                    {"type": ["integer", "string"]},
                ]
            )
        )
    return s


def robject(rng, depth=0):
    keys = rng.sample(KEYS, rng.randrange(0, 7))
    props = {k: rschema(rng, depth) for k in keys}
    s = {"type": "object", "properties": props}
    r = rng.random()
    if r < 0.7:
        s["additionalProperties"] = False
    elif r < 0.8:
        s["additionalProperties"] = True
    elif r < 0.85:
        s["additionalProperties"] = {"type": "string"}
    if keys and rng.random() < 0.6:
        s["required"] = rng.sample(keys, rng.randrange(0, len(keys) + 1)) + (
            ["ghost"] if rng.random() < 0.1 else []
        )
    x = rng.random()
    if x < 0.05:
        s["oneOf"] = [{"required": keys[:1]}]
    elif x < 0.08:
        s["patternProperties"] = {"^x": {}}
    elif x < 0.1:
        s["not"] = {}
    if rng.random() < 0.05:
        s["type"] = "array"
    if rng.random() < 0.03:
        s = {"type": "object", "additionalProperties": False, "properties": []}
    return s


def variant(rng, key):
    v = rng.random()
    if v < 0.5:
        return key
    if v < 0.6:
        return key.upper()
    if v < 0.7:
        return key.lower()
    if v < 0.8:
        return key.replace("_", "-")
    if v < 0.9:
        return key.replace("_", " ")
    return key + "_"


def rvalue(rng, schema):
    if not isinstance(schema, dict):
        return rng.choice([1, "x", None])
    t = schema.get("type")
    r = rng.random()
    if schema.get("enum") and r < 0.6:
        e = rng.choice(schema["enum"])
        if isinstance(e, str) and rng.random() < 0.5:
            return rng.choice(
                [e.upper(), e.replace("-", " "), e.replace(" ", "_"), e.lower(), e.title()]
            )
        return e
    if t in ("number", "integer") and r < 0.6:
        return rng.choice(
            [
                1,
                2.5,
                -0.0,
                "1",
                "2.5",
                "02",
                "1e3",
                "1e-7",
                "-0",
                " 1",
                "NaN",
                "3",
                12,
                1e21,
                "1e21",
                5,
            ]
        )
    if r < 0.15:
        return None
    return rng.choice(["text", 1, True, [1], {"a": 1}, "", 0.1, 3])


def case(rng, i):
    actions = []
    refs = rng.sample(
        ["mcp.a", "mcp.b", "mcp.c", "pi.read", "pi.bash", "tool.x", "tool.y", "Tool.Y", "é.z"],
        rng.randrange(1, 7),
    )
    for ref in refs:
        actions.append(
            {
                "ref": ref,
                "inputSchema": robject(rng)
                if rng.random() < 0.9
                else rng.choice([None, True, {"type": "object"}]),
            }
        )
    pass
    schemas = {a["ref"]: a["inputSchema"] for a in actions}
    files = {}
    for f in range(rng.randrange(1, 4)):
        lines = []
        for _ in range(rng.randrange(1, 12)):
            if rng.random() < 0.2:
                lines.append(
                    C._dump(
                        {
                            "type": "model_change",
                            "provider": rng.choice(["p", "q"]),
                            "modelId": rng.choice(["m1", "m2"]),
                        }
                    )
                )
            ops, audits = [], []
            for s in range(rng.randrange(0, 7)):
                ref = rng.choice(
                    [*refs, "fabric.discovery.search", "fabric.workflow.phase", "mcp.unknown"]
                )
                sch = schemas.get(ref)
                args = {}
                if isinstance(sch, dict) and isinstance(sch.get("properties"), dict):
                    for k, ps in sch["properties"].items():
                        if rng.random() < 0.6:
                            args[variant(rng, k)] = rvalue(rng, ps)
                if rng.random() < 0.1:
                    args["extra"] = 1
                outcome = rng.choice(["succeeded"] * 4 + ["failed"] * 3 + ["aborted", "timed_out"])
                extra = {}
                if outcome == "failed" and rng.random() < 0.85:
                    extra["failureStage"] = rng.choice(
                        ["resolve", "prepare", "validate", "approve", "invoke", "guard"]
                    )
                ops.append(
                    C._op(
                        s,
                        ref,
                        args
                        if rng.random() < 0.5
                        else {k: v for k, v in args.items() if not isinstance(v, (dict, list))},
                        outcome,
                        **extra,
                    )
                )
                if rng.random() < 0.6:
                    audits.append({"ref": ref, "args": args})
            lines.append(
                C._result_line(
                    C._trace(ops, [rng.choice(["a", "b"])] if rng.random() < 0.8 else []),
                    audits if rng.random() < 0.8 else None,
                )
            )
        files[f"f{f}.jsonl"] = lines
    surface = {"version": 1, "actions": actions}
    return files, surface


def main():
    upstream, start, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    bad = 0
    for i in range(start, start + count):
        rng = random.Random(i)
        files, surface = case(rng, i)
        C.SYNTHETIC = _Path("/tmp/v3-upstream-fuzz")
        d = C._write_case(f"c{i}", files, surface)
        up = subprocess.run(
            ["node", str(ROOT / "tests/data/v3_upstream.mjs"), upstream, str(d / "spec.json")],
            capture_output=True,
            text=True,
        )
        if up.returncode != 0:
            print(i, "UPSTREAM FAILED", up.stderr[-300:])
            continue
        (d / "upstream.json").write_text(up.stdout)
        expected = json.loads(up.stdout)
        work = d / "work"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        try:
            ours = our_outputs(d, work)
            assert_matches_upstream(ours, expected)
        except Exception as e:
            bad += 1
            print(i, "DIFF", str(e)[:300])
    print("done", bad)


if __name__ == "__main__":
    main()
