"""The Rust core reads a session file as the plain Python does (issue 28, item 3).

Generated hostile-but-valid session files (numbers at every edge: huge, tiny, ``-0``,
``1e21``, ``1e400``, integers past 2**53, 2**64 and 300 digits; lone surrogates escaped and
raw; integer-like and duplicate keys; arguments nested around the 14-level bound; many
models; traces rejected for every reason of the guard; malformed, empty, oversized and
foreign lines) are read by the native scanner and by the plain one. The finished meter
state (every slot, floats bit for bit), the diagnostics (counters, reasons, notes) and the
measure report's bytes must be the same, for every chunk size, line cap, starting model
and mentions selection.
"""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_entropy.core.canonical import canonical_json
from pytest_entropy.core.meter import MeterState, report_hash
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.native import SessionScanner
from pytest_entropy.ingest.native_scan import NativeTraceReader
from pytest_entropy.run.corpus import CorpusPlan, measure_plan, read_corpus, source_files
from pytest_entropy.testing import strategies as es
from tests.native_core_support import native_core_module, on_path, state_snapshot

MARK = "pi-fabric.execution"


class Raw(str):
    """JSON text written as it is (a number token the generator chose)."""


class Pairs(list[tuple[str, Any]]):
    """An object written member by member: a key may repeat (the last one wins)."""


NUMBER_TOKENS = [
    "-0",
    "-0.0",
    "0",
    "1.0",
    "1e21",
    "1E21",
    "1e-7",
    "5e-324",
    "1e400",
    "-1e400",
    "0.1",
    "1.7976931348623157e308",
    "9007199254740991",
    "9007199254740993",
    "-9223372036854775809",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "1" * 300,
    "1" * 301,
    "9" * 309,
    "123456789012345678901234567890",
    "2.5e-8",
    "-1.5",
]
STRING_PIECES = ["", "a", "\ud800", "\udc00x", "\U0001f600", "\uffff", "é", '"\\', "\u2028", "\x00"]
KEYS = ["path", "10", "0", "01", "-1", "4294967295", "4294967294", "\ud83d", "\U0001f600", "\uff01"]


def dump(value: Any, ascii_only: bool) -> str:
    """JSON text of a generated value, keeping Raw tokens and repeated Pairs keys."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, Pairs):
        members = (dump(key, ascii_only) + ":" + dump(item, ascii_only) for key, item in value)
        return "{" + ",".join(members) + "}"
    if isinstance(value, dict):
        return dump(Pairs(value.items()), ascii_only)
    if isinstance(value, list):
        return "[" + ",".join(dump(item, ascii_only) for item in value) + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


strings = st.lists(st.sampled_from(STRING_PIECES), max_size=3).map("".join)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(NUMBER_TOKENS).map(Raw),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    strings,
)
keys = st.one_of(st.sampled_from(KEYS), strings)


def objects(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    pairs = st.lists(st.tuples(keys, inner), max_size=4)
    return st.one_of(pairs.map(Pairs), st.dictionaries(keys, inner, max_size=4))


values = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=3), objects(inner)), max_leaves=10
)


@st.composite
def nested(draw: st.DrawFn) -> Any:
    """A value nested around the guard's 14-level bound (arrays or objects)."""
    depth = draw(st.integers(11, 17))
    value: Any = draw(st.sampled_from([[], {}, 1, Raw("2.5")]))
    for _ in range(depth):
        value = [value] if draw(st.booleans()) else {"k": value}
    return value


# Mutations of a valid envelope, one per reason the guard gives (and a few that pass).
def _op(trace: dict[str, Any]) -> dict[str, Any]:
    return trace["operations"][0]


MUTATIONS: list[Any] = [
    lambda t: [],
    lambda t: dict(t, extra=1),
    lambda t: dict(t, kind="x"),
    lambda t: dict(t, version=Raw("1.0")),
    lambda t: dict(t, version=True),
    lambda t: dict(t, version=2),
    lambda t: dict(t, outcome="done"),
    lambda t: dict(t, phases="build"),
    lambda t: dict(t, phases=["a", 1]),
    lambda t: dict(t, operations={}),
    lambda t: dict(t, counts={"droppedValues": 0}),
    lambda t: dict(t, counts=dict(t["counts"], droppedValues=Raw("-0"))),
    lambda t: dict(t, counts=dict(t["counts"], droppedValues=Raw("0.5"))),
    lambda t: dict(t, counts=dict(t["counts"], droppedValues=Raw("9007199254740992"))),
    lambda t: dict(t, counts=dict(t["counts"], droppedValues=Raw("2.0"))),
    lambda t: dict(t, error=3),
    lambda t: dict(t, error="boom"),
    lambda t: dict(t, operations=[1]),
    lambda t: dict(t, operations=[dict(_op(t), surprise=1)]),
    lambda t: dict(t, operations=[dict(_op(t), type="event")]),
    lambda t: dict(t, operations=[dict(_op(t), sequence=-1)]),
    lambda t: dict(t, operations=[dict(_op(t), sequence=Raw("3.0"))]),
    lambda t: dict(t, operations=[dict(_op(t), sequence=Raw("-0"))]),
    lambda t: dict(t, operations=[dict(_op(t), sequence=Raw("0.5"))]),
    lambda t: dict(t, operations=[dict(_op(t), sequence=Raw("9007199254740992"))]),
    lambda t: dict(t, operations=[_op(t), dict(_op(t), sequence=0)]),
    lambda t: dict(t, operations=[dict(_op(t), ref=1)]),
    lambda t: dict(t, operations=[dict(_op(t), args=[])]),
    lambda t: dict(t, operations=[dict(_op(t), outcome="ok")]),
    lambda t: dict(t, operations=[dict(_op(t), provider=1)]),
    lambda t: dict(t, operations=[dict(_op(t), action=None)]),
    lambda t: dict(t, operations=[dict(_op(t), failureStage="later")]),
    lambda t: dict(t, operations=[dict(_op(t), failureStage="guard", outcome="failed")]),
    lambda t: dict(t, operations=[dict(_op(t), error=[])]),
    lambda t: dict(t, operations=[dict(_op(t), result=Raw("1e400"))]),
    lambda t: dict(t, operations=[dict(_op(t), result={"deep": [[[1.5]]]})]),
    lambda t: dict(t, operations=[dict(_op(t), resultTruncated=1)]),
    lambda t: dict(t, operations=[dict(_op(t), args={"n": Raw("1e400")})]),
    lambda t: dict(t, operations=[dict(_op(t), args={"n": Raw("9" * 309)})]),
]


@st.composite
def envelopes(draw: st.DrawFn) -> Any:
    trace: dict[str, Any] = draw(es.trace_envelopes())
    ops = []
    for op in trace["operations"]:
        op = dict(op)
        if draw(st.integers(0, 3)) == 0:
            op["args"] = draw(objects(values))
        if draw(st.integers(0, 5)) == 0:
            op["args"] = {"deep": draw(nested())}
        if draw(st.integers(0, 5)) == 0:
            op["ref"] = draw(st.sampled_from(["\ud800.tool", "a\udc00", "fabric.discovery.\ud800"]))
        if draw(st.integers(0, 4)) == 0:
            op["result"] = draw(st.one_of(values, nested()))
        ops.append(op)
    trace["operations"] = ops
    if ops and draw(st.integers(0, 3)) == 0:
        trace = draw(st.sampled_from(MUTATIONS))(trace)
    return trace


@st.composite
def trace_lines(draw: st.DrawFn) -> bytes:
    details: Any = Pairs([("trace", draw(envelopes()))])
    if draw(st.integers(0, 4)) == 0:  # a duplicate trace key: the last one wins
        details.append(("trace", draw(envelopes())))
    shape = draw(st.integers(0, 5))
    record: Any
    if shape == 0:
        record = {"type": "custom", "details": details}
    elif shape == 1:
        record = {"type": "custom", "details": 7, "kind": MARK}  # no details
    elif shape == 2:
        record = {"type": "custom", "details": {"audits": []}, "kind": MARK}  # no trace
    else:
        record = {"type": "message", "message": {"role": "toolResult", "details": details}}
    text = dump(record, ascii_only=draw(st.booleans()))
    if draw(st.integers(0, 9)) == 0:
        text = draw(st.sampled_from(["\ufeff", " ", "\u00a0", "\t"])) + text + "\r"
    data = text.encode("utf-8", "surrogatepass")  # a raw lone surrogate: invalid UTF-8
    if draw(st.integers(0, 12)) == 0:
        data = data[: draw(st.integers(0, len(data)))]  # a truncated write
    return data


@st.composite
def model_lines(draw: st.DrawFn) -> bytes:
    provider = draw(st.sampled_from(["p", "q", "", "\ud800"]))
    model = draw(st.sampled_from(["alpha", "beta", "gamma", "delta", "", "\U0001f600", 7]))
    if draw(st.booleans()):
        record: Any = {"type": "model_change", "provider": provider, "modelId": model}
    else:
        record = {"message": {"role": "assistant", "provider": provider, "model": model}}
    data = dump(record, ascii_only=draw(st.booleans())).encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 10)) == 0:
        data = data[:-1]
    return data


ODD_LINES = [
    b"",
    b"   ",
    b"plain text",
    b'["' + MARK.encode() + b'"]',
    b'"' + MARK.encode() + b'"',
    b"{" + MARK.encode(),
    b'{"a":NaN,"k":"' + MARK.encode() + b'"}',
    b'{"k":"\\u0070i-fabric.execution"}',
    b"x" * 300,
    b'{"a":"' + b"y" * 300 + MARK.encode() + b'"}',
    b'{"deep":' + b"[" * 1100 + b"]" * 1100 + b',"k":"' + MARK.encode() + b'"}',
]


@st.composite
def session_files(draw: st.DrawFn) -> bytes:
    lines = draw(
        st.lists(
            st.one_of(trace_lines(), trace_lines(), model_lines(), st.sampled_from(ODD_LINES)),
            max_size=12,
        )
    )
    data = b"\n".join(lines)
    if draw(st.booleans()):
        data += b"\n"
    return data


def _plain(
    data: bytes, line_cap: int, model: str | None, mentions: tuple[bytes, ...] | None
) -> tuple[MeterState, ScanDiagnostics, str | None]:
    state, diagnostics = MeterState(), ScanDiagnostics()
    with on_path("plain"):
        scanner = SessionScanner(
            meter=state,
            diagnostics=diagnostics,
            name="f.jsonl",
            current_model=model,
            mentions=mentions,
            accelerate=False,
        )
        scanner.scan_stream(io.BytesIO(data), line_cap=line_cap)
    return state, diagnostics, scanner.current_model


def _native(
    data: bytes, line_cap: int, model: str | None, mentions: tuple[bytes, ...] | None, chunk: int
) -> tuple[MeterState, ScanDiagnostics, str | None]:
    state, diagnostics = MeterState(), ScanDiagnostics()
    reader = NativeTraceReader(
        native_core_module(),
        meter=state,
        diagnostics=diagnostics,
        name="f.jsonl",
        current_model=model,
        mentions=mentions,
    )
    reader.scan_stream(io.BytesIO(data), line_cap=line_cap, chunk_size=chunk)
    return state, diagnostics, reader.current_model


def _compare(plain: Any, native: Any) -> None:
    (p_state, p_diag, p_model), (n_state, n_diag, n_model) = plain, native
    assert n_diag.to_json() == p_diag.to_json()
    assert n_model == p_model
    assert state_snapshot(n_state) == state_snapshot(p_state)
    assert canonical_json(n_state.finalize().to_json()) == canonical_json(
        p_state.finalize().to_json()
    )


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    data=session_files(),
    line_cap=st.sampled_from([64 << 20, 200, 1000]),
    model=st.sampled_from([None, "start/model", "\ud800/x"]),
    chunk=st.sampled_from([1, 7, 64, 1 << 20]),
)
def test_native_scan_equals_the_plain_scan(
    data: bytes, line_cap: int, model: str | None, chunk: int
) -> None:
    _compare(_plain(data, line_cap, model, None), _native(data, line_cap, model, None, chunk))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=session_files(),
    mentions=st.lists(
        st.sampled_from([b'"pi.read"', b'"mcp.report.render"', b'"\xf0\x9f\x98\x80.tool"']),
        min_size=1,
        max_size=2,
    ).map(tuple),
)
def test_mentions_select_the_same_lines(data: bytes, mentions: tuple[bytes, ...]) -> None:
    _compare(_plain(data, 64 << 20, None, mentions), _native(data, 64 << 20, None, mentions, 97))


def _trace_line(size: int) -> bytes:
    """A valid trace line whose JSON.stringify text is ``size`` bytes plus a constant."""
    trace: dict[str, Any] = {
        "kind": MARK,
        "version": 1,
        "outcome": "succeeded",
        "phases": ["t"],
        "operations": [
            {
                "type": "call",
                "sequence": 1,
                "ref": "pi.read",
                "args": {"x": 1.5},
                "outcome": "succeeded",
                "result": "r" * size,
            }
        ],
        "counts": {
            "droppedValues": 0,
            "truncatedValues": 0,
            "redactedValues": 0,
            "droppedOperations": 0,
        },
    }
    return json.dumps({"details": {"trace": trace}}, separators=(",", ":")).encode()


@pytest.mark.parametrize("escape", [b"", b"\\ud800", b"\\u00e9"])
@pytest.mark.parametrize("delta", [-30, -1, 0, 1, 30])
def test_the_size_bound_around_512_kib(escape: bytes, delta: int) -> None:
    base = len(_trace_line(0)) - len(b'{"details":{"trace":') - 2
    line = _trace_line(524_288 - base + delta)
    if escape:  # an escape makes the line non-fast or longer than its JavaScript text
        line = line.replace(b"rrrrrr", b"rr" + escape, 1)
    data = line + b"\n" + line
    _compare(_plain(data, 64 << 20, None, None), _native(data, 64 << 20, None, None, 1 << 16))


def _write(tmp: Path, files: list[bytes]) -> list[Path]:
    paths = []
    for index, data in enumerate(files):
        path = tmp / f"{index:02d}.jsonl"
        path.write_bytes(data)
        paths.append(path)
    return paths


def _read(paths: list[Path], plan: CorpusPlan, path: str) -> Any:
    with on_path(path):
        return read_corpus(source_files(paths), plan)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(files=st.lists(session_files(), min_size=1, max_size=4))
def test_the_corpus_reads_the_same_on_both_paths(tmp_path: Path, files: list[bytes]) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    paths = _write(folder, files)
    native_core_module()
    plain, native = _read(paths, measure_plan(), "plain"), _read(paths, measure_plan(), "native")
    assert native.diagnostics.to_json() == plain.diagnostics.to_json()
    assert native.diagnostics.damaged_names == plain.diagnostics.damaged_names
    report, expected = native.state.finalize(), plain.state.finalize()
    assert canonical_json(report.to_json()) == canonical_json(expected.to_json())
    assert report_hash(report) == report_hash(expected)
    each = CorpusPlan(meter=False, file_states=True, proposals=False, audit_refs=False)
    plain_files, native_files = _read(paths, each, "plain"), _read(paths, each, "native")
    assert [
        None if state is None else state_snapshot(state) for _, state in native_files.files
    ] == [None if state is None else state_snapshot(state) for _, state in plain_files.files]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=st.lists(session_files(), min_size=1, max_size=3), retain=st.booleans())
def test_files_add_to_one_state_as_the_plain_scan_adds_them(
    files: list[bytes], retain: bool
) -> None:
    """A state that already holds files (or drops its churn terms) takes the next file's
    native state as the plain scan would have grown it (``MeterState.merge_plain``)."""
    native = native_core_module()
    plain_state, native_state = MeterState(retain_terms=retain), MeterState(retain_terms=retain)
    for data in files:
        with on_path("plain"):
            SessionScanner(meter=plain_state).scan_stream(io.BytesIO(data))
        NativeTraceReader(native, meter=native_state).scan_stream(io.BytesIO(data))
    assert state_snapshot(native_state) == state_snapshot(plain_state)
    assert native_state.retain_terms is plain_state.retain_terms
    assert all(m.retain_terms is retain for m in native_state.models.values())
