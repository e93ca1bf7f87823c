"""The Rust core reads a session file as metric v3's plain scanner does (issue 30, item 3).

``SessionScanner(metric_version=3)`` is the specification: its guard lets an operation's
``normalization`` member through when it is a normal-form witness (and refuses it under v2),
its model prefilter allows JavaScript white space around the colon, a trace line moves the
model cursor before its trace is metered, and a line gives audits only when its trace passes
the guard. Generated files with witnesses (valid and broken each way), ``resultTruncated``,
failed guards beside audits, spaced model lines and trace lines carrying model fields are
read natively and plainly under both generations; the meter, diagnostics, cursor, the
proposals' evidence, audited refs and pool windows must be the same.
"""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_entropy.core.canonical import canonical_json
from pytest_entropy.core.meter import MeterState, report_hash
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.native import SessionScanner
from pytest_entropy.ingest.native_scan import NativeTraceReader
from pytest_entropy.ingest.registry import ReadOptions
from pytest_entropy.run.corpus import CorpusPlan, measure_plan, read_corpus, source_files
from tests.native_core_support import native_core_module, on_path, state_snapshot

DIGEST = "0123456789abcdef" * 4
RULE = {"kind": "key-form", "key": "path"}
WITNESS = {
    "version": 1,
    "baseSchemaDigest": DIGEST,
    "beforeShape": DIGEST,
    "afterShape": DIGEST,
    "rules": [RULE],
}


def _with(**changes: Any) -> dict[str, Any]:
    witness = dict(WITNESS, **changes)
    return {key: value for key, value in witness.items() if value is not _DROP}


_DROP = object()
# Witnesses, valid and broken in each way ``is_normal_form_witness`` refuses (JSON text).
WITNESSES = [
    json.dumps(w)
    for w in [
        WITNESS,
        _with(version=1.0),
        _with(
            rules=[RULE, {"kind": "enum-form", "key": ""}, {"kind": "optional-null", "key": "k"}]
        ),
        _with(rules=[{"kind": "numeric-string", "key": "x" * 128}]),
        _with(rules=[{"kind": "key-form", "key": "\U0001f600" * 64}]),
        _with(rules=[RULE] * 128),
        _with(version=2),
        _with(version=True),
        _with(version="1"),
        _with(version=_DROP),
        _with(extra=1),
        _with(afterShape=_DROP, other=DIGEST),
        _with(baseSchemaDigest=DIGEST.upper()),
        _with(beforeShape=DIGEST[:63]),
        _with(afterShape=DIGEST + "0"),
        _with(afterShape=DIGEST[:63] + "g"),
        _with(afterShape=1),
        _with(rules=[]),
        _with(rules=[RULE] * 129),
        _with(rules={"0": RULE}),
        _with(rules=[{"kind": "key-form"}]),
        _with(rules=[{"kind": "key-form", "key": "k", "x": 1}]),
        _with(rules=[{"kind": "other", "key": "k"}]),
        _with(rules=[{"kind": "key-form", "key": 1}]),
        _with(rules=[{"kind": "key-form", "key": "__proto__"}]),
        _with(rules=[{"kind": "key-form", "key": "prototype"}]),
        _with(rules=[{"kind": "key-form", "key": "constructor"}]),
        _with(rules=[{"kind": "key-form", "key": "x" * 129}]),
        _with(rules=[{"kind": "key-form", "key": "\U0001f600" * 65}]),
        _with(rules=[RULE, 1]),
        [],
        None,
    ]
]
# A duplicate witness key (the last one wins) and a lone surrogate in a rule's key.
WITNESSES += [
    WITNESSES[0][:-1] + ',"version":2}',
    WITNESSES[6][:-1] + ',"version":1}',
    WITNESSES[0].replace('"path"', '"\\ud800' + "x" * 127 + '"'),
]
SPACES = ["", " ", "\t", "\r\n", "\u00a0", "\u2028", "\u3000", "\ufeff", "\u200b", "\u1680"]
MODELS = ["alpha", "beta", ""]


def _operation(sequence: int, draw: st.DrawFn) -> str:
    members = [
        '"type":"call"',
        f'"sequence":{sequence}',
        '"ref":' + draw(st.sampled_from(['"pi.read"', '"mcp.a"', '"mcp.b"'])),
        '"args":' + draw(st.sampled_from(['{"path":"a"}', '{"n":1}', "{}", '{"x":[1,{"y":2}]}'])),
    ]
    outcome = draw(st.sampled_from(["succeeded", "failed"]))
    members.append(f'"outcome":"{outcome}"')
    if outcome == "failed":
        members.append('"failureStage":' + draw(st.sampled_from(['"validate"', '"later"'])))
    if draw(st.integers(0, 2)) == 0:
        members.append('"normalization":' + draw(st.sampled_from(WITNESSES)))
    if draw(st.integers(0, 3)) == 0:
        members.append('"resultTruncated":' + draw(st.sampled_from(["true", "false", "1"])))
    if draw(st.integers(0, 4)) == 0:
        members.append('"result":' + draw(st.sampled_from(['"ok"', "1e400", '{"a":[1]}'])))
    order = draw(st.permutations(members))
    return "{" + ",".join(order) + "}"


def _model_fields(draw: st.DrawFn, top: bool) -> list[str]:
    model = draw(st.sampled_from(MODELS))
    if top:
        return ['"type":"model_change"', '"provider":"p"', f'"modelId":"{model}"']
    return []


@st.composite
def trace_lines(draw: st.DrawFn) -> str:
    operations = [_operation(n, draw) for n in range(draw(st.integers(0, 3)))]
    version = draw(st.sampled_from(["1", "1", "1", "2"]))
    trace = (
        f'{{"kind":"pi-fabric.execution","version":{version},"outcome":"succeeded",'
        '"phases":["t"],"operations":[' + ",".join(operations) + '],"counts":'
        '{"droppedValues":0,"truncatedValues":0,"redactedValues":0,"droppedOperations":0}}'
    )
    audits = draw(
        st.sampled_from(
            [
                None,
                '[{"ref":"mcp.a","args":{"mode":"x","n":1}}]',
                '[{"ref":"mcp.b","args":{"k":"v"}},{"ref":"mcp.a","args":[]}]',
            ]
        )
    )
    members = [] if draw(st.integers(0, 6)) == 0 else ['"trace":' + trace]
    if audits is not None:
        members.append('"audits":' + audits)
    details = "{" + ",".join(members) + "}"
    shape = draw(st.integers(0, 3))
    model = draw(st.sampled_from(MODELS))
    if shape == 0:  # a model_change record that is also a trace line
        fields = ['"type":"model_change"', '"provider":"p"', f'"modelId":"{model}"']
        return "{" + ",".join([*fields, '"details":' + details]) + "}"
    if shape == 1:  # an assistant message carrying a trace
        return (
            '{"type":"message","message":{"role":"assistant","provider":"q",'
            f'"model":"{model}","details":' + details + "}}"
        )
    if shape == 2:
        return '{"type":"message","message":{"role":"toolResult","details":' + details + "}}"
    return '{"type":"custom","details":' + details + "}"


@st.composite
def model_lines(draw: st.DrawFn) -> str:
    before, after = draw(st.sampled_from(SPACES)), draw(st.sampled_from(SPACES))
    model = draw(st.sampled_from(MODELS))
    if draw(st.booleans()):
        return f'{{"type"{before}:{after}"model_change","provider":"p","modelId":"{model}"}}'
    return f'{{"message":{{"role"{before}:{after}"assistant","provider":"q","model":"{model}"}}}}'


LINES = st.one_of(
    trace_lines(),
    trace_lines(),
    model_lines(),
    st.sampled_from(['{"type" : "model_changes"}', "", "plain", '{"role"::"assistant"}']),
)
FILES = st.lists(LINES, max_size=10).map(lambda lines: "\n".join(lines).encode("utf-8"))


def _plain(data: bytes, version: int) -> tuple[Any, ...]:
    state, diagnostics = MeterState(), ScanDiagnostics()
    with on_path("plain"):
        scanner = SessionScanner(
            meter=state, diagnostics=diagnostics, name="f.jsonl", metric_version=version
        )
        scanner.scan_stream(io.BytesIO(data))
    return state, diagnostics, scanner.current_model


def _native(data: bytes, version: int, chunk: int) -> tuple[Any, ...]:
    state, diagnostics = MeterState(), ScanDiagnostics()
    reader = NativeTraceReader(
        native_core_module(),
        meter=state,
        diagnostics=diagnostics,
        name="f.jsonl",
        metric_version=version,
    )
    reader.scan_stream(io.BytesIO(data), chunk_size=chunk)
    return state, diagnostics, reader.current_model


SPACED = '{"role"\u00a0: "assistant","provider":"q","model":"m"}'.encode()
WITNESSED = (
    '{"type":"model_change","provider":"p","modelId":"n","details":{"trace":'
    '{"kind":"pi-fabric.execution","version":1,"outcome":"succeeded","phases":["t"],'
    '"operations":[{"type":"call","sequence":0,"ref":"mcp.a","args":{},"outcome":"succeeded",'
    '"resultTruncated":true,"normalization":' + WITNESSES[0] + '}],"counts":{"droppedValues":0,'
    '"truncatedValues":0,"redactedValues":0,"droppedOperations":0}}}}'
).encode()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=FILES, version=st.sampled_from([2, 3]), chunk=st.sampled_from([1, 13, 1 << 20]))
@example(data=SPACED + b"\n" + WITNESSED, version=3, chunk=1 << 20)
def test_native_scan_reads_each_generation_as_the_plain_scan(
    data: bytes, version: int, chunk: int
) -> None:
    (p_state, p_diag, p_model) = _plain(data, version)
    (n_state, n_diag, n_model) = _native(data, version, chunk)
    assert n_diag.to_json() == p_diag.to_json()
    assert n_model == p_model
    assert state_snapshot(n_state) == state_snapshot(p_state)


def test_the_example_differs_between_generations() -> None:
    """What v3 changes is visible in the example: the witness passes and the spaced
    assistant line and the trace line move the cursor (so the scan above checks them)."""
    data = SPACED + b"\n" + WITNESSED
    v2, v3 = _native(data, 2, 1 << 20), _native(data, 3, 1 << 20)
    assert (v2[1].traces, v2[1].rejection_reasons) == (0, {"unknown operation key": 1})
    assert (v3[1].traces, v3[2]) == (1, "p/n")
    assert v2[2] is None
    assert list(v3[0].models) == ["p/n"]


def _read(paths: list[Path], plan: CorpusPlan, path: str, **more: Any) -> Any:
    with on_path(path):
        return read_corpus(source_files(paths), plan, **more)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(files=st.lists(FILES, min_size=1, max_size=3))
def test_the_v3_pipeline_reads_the_same_on_both_paths(tmp_path: Path, files: list[bytes]) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    paths = []
    for index, data in enumerate(files):
        path = folder / f"{index:02d}.jsonl"
        path.write_bytes(data)
        paths.append(path)
    native_core_module()
    options = ReadOptions(metric_version=3)
    plain, native = (_read(paths, measure_plan(options), p) for p in ("plain", "native"))
    assert native.diagnostics.to_json() == plain.diagnostics.to_json()
    report, expected = native.state.finalize(), plain.state.finalize()
    assert canonical_json(report.to_json()) == canonical_json(expected.to_json())
    assert report_hash(report) == report_hash(expected)
    gather = CorpusPlan(options, observation_values=True)
    plain, native = (_read(paths, gather, p) for p in ("plain", "native"))
    assert native.diagnostics.to_json() == plain.diagnostics.to_json()
    assert native.audit_refs == plain.audit_refs
    assert canonical_json(native.evidence.proposals(expected, {})) == canonical_json(
        plain.evidence.proposals(expected, {})
    )
    pool = CorpusPlan(options, meter=False, proposals=False, audit_refs=False, windows=True)
    plain, native = (_read(paths, pool, p, pool=None) for p in ("plain", "native"))
    assert native.diagnostics.to_json() == plain.diagnostics.to_json()
    assert native.merged_pool().to_json() == plain.merged_pool().to_json()
