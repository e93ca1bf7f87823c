"""Differential vectors for the Rust crate, computed by the plain Python specification.

The crate's integration tests (``native/tests/vectors.rs``) read the files this script
writes into ``native/tests/data/`` and compare the crate's answers with them. Regenerate
(deterministic: the generator is seeded) from the repository root with::

    PYTEST_ENTROPY_PURE=1 PYTHONPATH=$PWD /tmp/cold/bin/python native/tests/make_vectors.py

``--check`` writes nothing and fails (exit 1) when the committed files differ from what the
specification gives today (``.ci/run`` runs it: a change to the plain Python that moves a
vector must regenerate them, and then the crate must follow).

What is compared:

* ``json.json``: ``ingest/jsonparse.parse_json_bytes`` on hand-written hostile lines and
  generated ones: whether it parses, whether orjson (the fast path) read it, the value as a
  typed description (see :func:`describe`) and ``core/canonical.js_stringify`` of it;
* ``jsnum.json``: ``core/jscompat.js_string`` of doubles (as their bits) and of integers;
* ``lines.json``: ``ingest/lines.iter_lines`` (whole and chunked: the script checks that
  every chunk size gives the same lines), ``LineRead.terminated``, the scanner's line kinds
  (checked against ``SessionScanner``'s own tallies) and ``_may_mention``.
"""

from __future__ import annotations

import io
import json
import os
import random
import struct
import sys
from pathlib import Path
from typing import Any

from describe import describe

from pytest_entropy.core.canonical import js_stringify
from pytest_entropy.core.jscompat import js_string
from pytest_entropy.ingest.jsonparse import JSONParseError, parse_json_bytes
from pytest_entropy.ingest.lines import OVERSIZED, LineRead, iter_lines
from pytest_entropy.ingest.native import (
    _ASSISTANT_MARK,
    _MODEL_CHANGE_MARK,
    _TRACE_MARK,
    SessionScanner,
    _may_mention,
)

DATA = Path(__file__).parent / "data"
SEED = 28


# ------------------------------------------------------------------------------- json

JS_SPACE = ["\ufeff", "\u00a0", "\u2028", "\u2029", "\u3000", "\u000b", "\u000c", "\u1680"]
NOT_SPACE = ["\u0085", "\u180e", "\u200b", "\u001c"]
KEYS = ["a", "b", "0", "1", "12", "01", "-1", "4294967294", "4294967295", "10", "é", "\\ud800"]
NUMBERS = [
    "0",
    "-0",
    "-0.0",
    "0.0",
    "1",
    "-1",
    "1.0",
    "1e21",
    "1E21",
    "1e+21",
    "1e-7",
    "5e-324",
    "2e-324",
    "1e400",
    "-1e400",
    "1.7976931348623157e308",
    "1.7976931348623158e308",
    "9007199254740991",
    "9007199254740992",
    "9007199254740993",
    "-9007199254740993",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "123456789012345678901234567890",
    "0.1",
    "0.30000000000000004",
    "100",
    "1e2",
    "123e-2",
    "4.35",
    "0.000001",
    "1e-6",
    "1.5e300",
    "-2.5e-310",
]


def gen_number(rnd: random.Random) -> str:
    pick = rnd.random()
    if pick < 0.4:
        return rnd.choice(NUMBERS)
    if pick < 0.6:
        return str(rnd.randint(-(10 ** rnd.randint(1, 40)), 10 ** rnd.randint(1, 40)))
    if pick < 0.7:
        return rnd.choice("-") * rnd.randint(0, 1) + "9" * rnd.choice([299, 300, 301, 320])
    bits = rnd.getrandbits(64)
    x = struct.unpack(">d", bits.to_bytes(8, "big"))[0]
    if x != x or x in (float("inf"), float("-inf")):
        x = 1.5
    text = repr(x)
    if rnd.random() < 0.3:
        text = text.replace("e", "E")
    return text


def gen_string(rnd: random.Random) -> str:
    parts = ['"']
    for _ in range(rnd.randint(0, 8)):
        pick = rnd.random()
        if pick < 0.3:
            parts.append(rnd.choice(["a", "key", " ", "é", "😀", "\u2028", "\x7f", "'"]))
        elif pick < 0.5:
            parts.append(rnd.choice(['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"]))
        elif pick < 0.7:
            unit = rnd.choice([0x0001, 0x001F, 0x0041, 0x00E9, 0xD800, 0xDBFF, 0xDC00, 0xDFFF])
            parts.append(f"\\u{unit:04X}" if rnd.random() < 0.5 else f"\\u{unit:04x}")
        elif pick < 0.85:
            parts.append("\\ud83d\\ude00")
        else:
            parts.append(chr(rnd.choice([0x10FFFF, 0xFFFD, 0xFEFF, 0x00A0, 0x0600])))
    parts.append('"')
    return "".join(parts)


def gen_value(rnd: random.Random, depth: int) -> str:
    pick = rnd.random()
    ws = rnd.choice(["", "", " ", "\t", "\r\n  "])
    if depth > 2 or pick < 0.3:
        return rnd.choice(["null", "true", "false", gen_number(rnd), gen_string(rnd)])
    if pick < 0.6:
        items = [gen_value(rnd, depth + 1) for _ in range(rnd.randint(0, 5))]
        return "[" + ws + ("," + ws).join(items) + ws + "]"
    members = []
    for _ in range(rnd.randint(0, 4)):
        key = '"' + rnd.choice(KEYS) + '"' if rnd.random() < 0.7 else gen_string(rnd)
        members.append(key + ws + ":" + ws + gen_value(rnd, depth + 1))
    return "{" + ws + ("," + ws).join(members) + ws + "}"


def mutate(rnd: random.Random, text: str) -> bytes:
    pick = rnd.random()
    if pick < 0.15:
        text = rnd.choice(JS_SPACE) + text + rnd.choice([*JS_SPACE, " ", "\r"])
    elif pick < 0.2:
        text = rnd.choice(NOT_SPACE) + text
    elif pick < 0.25:
        text = " \t" + text + "\r"
    raw = text.encode("utf-8", "surrogatepass")
    pick = rnd.random()
    if pick < 0.1 and b'"' in raw:
        at = raw.index(b'"') + 1
        bad = rnd.choice(
            [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf0\x9f\x98", b"\xc0\xaf", b"\x80\x80"]
        )
        raw = raw[:at] + bad + raw[at:]
    elif pick < 0.15 and len(raw) > 2:
        raw = raw[: rnd.randrange(1, len(raw))]  # truncated: mostly an error
    elif pick < 0.18:
        raw = raw + rnd.choice([b",", b" x", b"]", b"}"])
    return raw


HAND_WRITTEN = [
    b"",
    b" ",
    b"\xef\xbb\xbf",
    b"null",
    b"true",
    b"false",
    b"nul",
    b"True",
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"[NaN]",
    b"01",
    b"-",
    b"+1",
    b".5",
    b"1.",
    b"1e",
    b"1e+",
    b"[1,]",
    b'{"a":1,}',
    b'{"a"}',
    b"{a:1}",
    b"[1 2]",
    b'"\\x"',
    b'"\\u12"',
    b'"\\uZZZZ"',
    b'"a\x01"',
    b'"\x7f"',
    b'"\\u0000"',
    b"'a'",
    b"[] []",
    b'{"a":1,"b":2,"a":3}',
    b'{"b":1,"a":2,"b":3,"1":4,"0":5}',
    b'{"__proto__":1}',
    b'"\\ud800"',
    b'"\\udc00\\ud800"',
    b'"\\ud800\\u0041"',
    b'"\\ud83d\\ude00"',
    b'"\\uD83D\\uDE00"',
    b'"\\ud800\\ud800\\udc00"',
    b'{"\\ud800":1,"\\ud800":2}',
    b'"\xed\xa0\x80"',
    b'"\xff\xfe"',
    b'"\xf4\x90\x80\x80"',
    b'"\xe0\x80\x80"',
    b'"\xf0\x9f\x98"',
    b"\xff",
    b"1\xff",
    b'"\xe2\x80\xa8"',
    "\ufeff{}".encode(),
    "\u00a01\u00a0".encode(),
    "\u20281\u2029".encode(),
    b"\x0b1\x0c",
    "\u00851".encode(),
    "\u180e1".encode(),
    b"\r\n1\r\n",
    b"1\r",
    b" \t{ } ",
    b"[" * 1024 + b"]" * 1024,
    b"[" * 1025 + b"]" * 1025,
    b'{"a":' * 1025 + b"1" + b"}" * 1025,
    b"[" * 30000 + b"{}" + b"]" * 30000,
    b"[" * 3000 + b"1" + b"]" * 2999,
    b'["' + b"x" * 70000 + b'"]',
    b"[" + b",".join([b"1e21"] * 2000) + b"]",
    b"-" + b"1" * 300,
    b"1" * 300,
    b"1" * 301,
    b"\xef\xbb\xbf" + b"1" * 300,
    "\ufeff18446744073709551616".encode(),
    b"[18446744073709551616, 1e400]",
    b'[18446744073709551616, "\\ud800"]',
]
HAND_WRITTEN += [n.encode() for n in NUMBERS]


def json_case(raw: bytes) -> dict[str, Any]:
    try:
        value, fast = parse_json_bytes(raw)
    except JSONParseError:
        return {"input": raw.hex(), "ok": False}
    return {
        "input": raw.hex(),
        "ok": True,
        "fast": fast,
        "value": describe(value),
        "stringify": js_stringify(value),
    }


def json_vectors(rnd: random.Random) -> dict[str, Any]:
    inputs = list(HAND_WRITTEN)
    inputs += [mutate(rnd, gen_value(rnd, 0)) for _ in range(2500)]
    return {
        "comment": "made by native/tests/make_vectors.py",
        "cases": [json_case(r) for r in inputs],
    }


# ----------------------------------------------------------------------------- jsnum


def jsnum_vectors(rnd: random.Random) -> dict[str, Any]:
    doubles = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.1,
        1e21,
        1e20,
        123456789012345680000.0,
        1e-6,
        1e-7,
        5e-324,
        2.2250738585072014e-308,
        1.7976931348623157e308,
        2.0**53,
        2.0**53 + 2,
        -(2.0**63),
        2.0**64,
        0.30000000000000004,
        1.5e-10,
        4.35,
        100.0,
        1e100,
        float("inf"),
        float("-inf"),
        float("nan"),
    ]
    for _ in range(4000):
        x = struct.unpack(">d", rnd.getrandbits(64).to_bytes(8, "big"))[0]
        if x == x:
            doubles.append(x)
    for _ in range(1000):
        doubles.append(round(rnd.uniform(-1e6, 1e6), rnd.randint(0, 8)))
        doubles.append(float(rnd.randint(-(2**60), 2**60)) * 10.0 ** rnd.randint(-30, 30))
    integers = [
        0,
        1,
        -1,
        2**53 - 1,
        2**53,
        2**53 + 1,
        -(2**53),
        -(2**53) - 1,
        2**63 - 1,
        2**63,
        -(2**63),
        2**64 - 1,
        2**64,
        10**21,
        10**25 + 1,
        10**299,
    ]
    integers += [
        rnd.randint(-(10 ** rnd.randint(1, 300)), 10 ** rnd.randint(1, 300)) for _ in range(500)
    ]
    return {
        "comment": "made by native/tests/make_vectors.py",
        "doubles": [[struct.pack(">d", x).hex(), js_string(x)] for x in doubles],
        "integers": [[str(n), js_string(n)] for n in integers],
    }


# ----------------------------------------------------------------------------- lines

LINE_PIECES = [
    b"",
    b"\r",
    b" ",
    b"{}",
    b'{"kind":"pi-fabric.execution","trace":1}',
    b'{"type":"model_change"}',
    b'{"message":{"role":"assistant"}}',
    b'{"role": "assistant"}',
    b"pi-fabric.execution",
    b'{"ref":"a"}',
    b'{"r\\u0065f":"a"}',
    b"x" * 40,
    b"\xff\xfe",
    "é\u2028".encode(),
]
MENTIONS = [b'"ref"', b'"tools.read"']


def kind(line: bytes) -> str:
    """The branch ``SessionScanner.scan_stream`` takes for a line."""
    if _TRACE_MARK in line:
        return "trace"
    if not line:
        return "oversized" if line is OVERSIZED else "empty"
    if _MODEL_CHANGE_MARK in line or _ASSISTANT_MARK in line:
        return "model"
    return "ignored"


def read_lines(data: bytes, cap: int, chunk: int) -> tuple[list[bytes], bool]:
    info = LineRead()
    lines = list(iter_lines(io.BytesIO(data), line_cap=cap, chunk_size=chunk, info=info))
    return lines, info.terminated


def check_tallies(data: bytes, cap: int, kinds: list[str]) -> None:
    scanner = SessionScanner(name="vector")
    scanner.scan_stream(io.BytesIO(data), line_cap=cap)
    d = scanner.diagnostics
    seen = {
        "trace": d.trace_lines,
        "model": d.model_lines,
        "empty": d.empty_lines,
        "ignored": d.ignored_lines,
        "oversized": d.oversized_lines,
    }
    expected = {name: kinds.count(name) for name in seen}
    if seen != expected or d.lines != len(kinds):
        raise SystemExit(f"the scanner's tallies {seen} differ from the kinds {expected}")


def lines_case(data: bytes, cap: int) -> dict[str, Any]:
    lines, terminated = read_lines(data, cap, 1 << 20)
    chunks = sorted({1, 2, 3, 7, max(1, cap), max(1, cap + 1), 64, len(data) or 1})
    for chunk in chunks:
        other, other_terminated = read_lines(data, cap, chunk)
        same = [(x is OVERSIZED, x) for x in other] == [(x is OVERSIZED, x) for x in lines]
        if not same or other_terminated != terminated:
            raise SystemExit(f"iter_lines differs at chunk size {chunk}")
    kinds = [kind(line) for line in lines]
    check_tallies(data, cap, kinds)
    return {
        "input": data.hex(),
        "cap": cap,
        "chunks": chunks,
        "lines": [None if line is OVERSIZED else line.hex() for line in lines],
        "terminated": terminated,
        "kinds": kinds,
        "mentions": [_may_mention(line, tuple(MENTIONS)) for line in lines],
    }


def lines_vectors(rnd: random.Random) -> dict[str, Any]:
    datas = [
        b"",
        b"\n",
        b"\n\n",
        b"a",
        b"a\n",
        b"a\r\nb\r\n",
        b"a\n\nb",
        b"\r",
        b"x" * 100 + b"\ny",
    ]
    for _ in range(300):
        pieces = [rnd.choice(LINE_PIECES) for _ in range(rnd.randint(0, 8))]
        data = b"\n".join(pieces) + rnd.choice([b"", b"\n", b"\r\n"])
        datas.append(data)
    cases = []
    for data in datas:
        for cap in (rnd.choice([0, 1, 5, 20, 41, 64]), 1 << 20):
            cases.append(lines_case(data, cap))
    return {
        "comment": "made by native/tests/make_vectors.py",
        "mentions": [m.decode() for m in MENTIONS],
        "cases": cases,
    }


def main() -> None:
    if os.environ.get("PYTEST_ENTROPY_PURE") != "1":
        raise SystemExit("run with PYTEST_ENTROPY_PURE=1: the vectors come from the plain path")
    check = sys.argv[1:] == ["--check"]
    sys.setrecursionlimit(10000)
    DATA.mkdir(parents=True, exist_ok=True)
    stale = []
    for name, make in (("json", json_vectors), ("jsnum", jsnum_vectors), ("lines", lines_vectors)):
        data = make(random.Random(f"{SEED}-{name}"))
        text = json.dumps(data, ensure_ascii=True, indent=0) + "\n"
        path = DATA / f"{name}.json"
        if check:
            if not path.exists() or path.read_text(encoding="ascii") != text:
                stale.append(str(path))
            continue
        path.write_text(text, encoding="ascii")
        print(f"{name}.json: {len(text):,} bytes")
    if stale:
        raise SystemExit(f"stale vectors (regenerate with make_vectors.py): {', '.join(stale)}")


if __name__ == "__main__":
    main()
