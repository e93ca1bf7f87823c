"""The Rust core's tallies (``native/src/{audit,evidence,pool,trial}.rs``) equal the plain
Python on the same JSON text: the audit harvest, the proposals' evidence, the pool's window
summary and the trial's counts. The input is generated hostile-but-valid JSON written by
hand (so it can hold duplicate keys): huge and tiny numbers, ``-0``, ``1e21``, ``1e400``,
integers past 2**53 and 2**64, lone surrogates, array-index keys, deep nesting, many refs.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_entropy.core.canonical import canonical_json
from pytest_entropy.core.pool import POOL_MAX_VALUE_BYTES, native_tally_summary, summarize_window
from pytest_entropy.core.proposals import ProposalEvidence
from pytest_entropy.core.records import AuditCall, ValueObservation
from pytest_entropy.core.trial import TrialCounts, TrialSurfaces, TrialTally
from pytest_entropy.core.validation import CallChecks
from pytest_entropy.ingest.jsonparse import parse_json_bytes
from pytest_entropy.ingest.native import audit_records, harvest_values, tally_values
from tests.native_core_support import native_core_module
from tests.native_support import paths


def _rust() -> ModuleType:
    # The extension itself (importable whatever PYTEST_ENTROPY_PURE says): skipped where it
    # is not built, failed under CI.
    return native_core_module()


# ----------------------------------------------------------------------- JSON text

NUMBER_TEXTS = st.one_of(
    st.sampled_from(
        [
            "-0",
            "-0.0",
            "0",
            "1",
            "1.0",
            "2.50",
            "1e21",
            "1e20",
            "1E+21",
            "1e-7",
            "1e400",
            "-1e400",
            "5e-324",
            "1e-400",
            "9007199254740992",
            "9007199254740993",
            "-9007199254740993",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775809",
            "1" + "0" * 25,
            "1" + "0" * 320,
            "0.1",
            "123456789012345680000",
        ]
    ),
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)
STRING_VALUES = st.one_of(
    st.sampled_from(
        [
            "",
            "a",
            "\ud800",
            "\udfff",
            "\ud83d\ude00",
            "\U0001f600",
            "\ue000",
            "\uffff",
            " a",
            "a\u3000",
            "\ufeff",
            "\x00",
            "é",
            "x" * 20,
            '"\\/',
        ]
    ),
    st.text(max_size=8),
)
KEY_SAMPLES = st.sampled_from(
    [
        "a",
        "b",
        "x",
        "0",
        "1",
        "01",
        "10",
        "-1",
        "4294967294",
        "4294967295",
        "",
        " k",
        "k\x00",
        "\ud800",
        "\U0001f600",
        "\ue000",
        "ref",
        "args",
    ]
)
# Mostly the hostile samples (array-index keys, duplicates), sometimes any text.
KEYS = st.one_of(KEY_SAMPLES, KEY_SAMPLES, KEY_SAMPLES, st.text(max_size=3))
REF_SAMPLES = st.sampled_from(
    [
        "mcp.a",
        "mcp.b",
        "mcp.c",
        "mcp.d",
        "fabric.x",
        "pi.y",
        "",
        " mcp.e",
        "mcp.\ud800",
        "mcp.\U0001f600",
        "r\x00",
    ]
)
REFS = st.one_of(REF_SAMPLES, REF_SAMPLES, st.text(max_size=4))


def _string(text: str, ascii_only: bool) -> str:
    # A lone surrogate can only be written as an escape.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        ascii_only = True
    return json.dumps(text, ensure_ascii=ascii_only)


def _object(pairs: list[tuple[str, str]]) -> str:
    return "{" + ",".join(key + ":" + value for key, value in pairs) + "}"


PRIMITIVES = st.one_of(
    NUMBER_TEXTS,
    st.builds(_string, STRING_VALUES, st.booleans()),
    st.sampled_from(["true", "false", "null"]),
)
KEY_TEXTS = st.builds(_string, KEYS, st.booleans())
VALUES = st.recursive(
    PRIMITIVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda items: "[" + ",".join(items) + "]"),
        st.lists(st.tuples(KEY_TEXTS, inner), max_size=3).map(_object),
    ),
    max_leaves=8,
)
DEEP = st.integers(1, 300).map(lambda depth: "[" * depth + "1" + "]" * depth)
ARGS = st.lists(st.tuples(KEY_TEXTS, st.one_of(VALUES, PRIMITIVES, DEEP)), max_size=6).map(_object)
REF_TEXTS = st.builds(_string, REFS, st.booleans())


def _record(ref: str, args: str, extra: list[tuple[str, str]], ref_first: bool) -> str:
    pairs = [('"ref"', ref), ('"args"', args)]
    if not ref_first:
        pairs.reverse()
    return _object(pairs + extra)


RECORD = st.builds(
    _record,
    REF_TEXTS,
    ARGS,
    st.lists(
        st.tuples(
            st.one_of(st.sampled_from(['"x"', '"note"']), st.sampled_from(['"ref"', '"args"'])),
            VALUES,
        ),
        max_size=1,
    ),
    st.booleans(),
)
RECORDS = st.one_of(
    RECORD,
    RECORD,
    RECORD,
    PRIMITIVES,
    st.sampled_from(['{"ref":"mcp.a","args":[]}', '{"args":{"a":1}}', '{"ref":"","args":{}}']),
)
AUDIT_LIST = st.lists(RECORDS, min_size=1, max_size=6).map(
    lambda items: "[" + ",".join(items) + "]"
)
AUDITS = st.one_of(AUDIT_LIST, AUDIT_LIST, AUDIT_LIST, PRIMITIVES, st.just("[]"), st.just("{}"))
OUTCOMES = st.sampled_from(['"succeeded"', '"failed"', '"denied"'])
OPERATION = st.builds(lambda r, a, o: "[" + r + "," + a + "," + o + "]", REF_TEXTS, ARGS, OUTCOMES)
EXECUTION = st.lists(OPERATION, max_size=10).map(lambda items: "[" + ",".join(items) + "]")
# A trace line: one execution and the audits beside it.
LINES = st.lists(st.tuples(EXECUTION, AUDITS), max_size=8)
# Few refs, keys and values: enum thresholds, overflowing tallies, repeated sequences.
FEW_ARGS = st.lists(
    st.tuples(
        st.sampled_from(['"k"', '"q"', '"1"']),
        st.one_of(st.integers(0, 11).map(str), st.sampled_from(['"s"', "1.0", "true", "-0"])),
    ),
    max_size=2,
).map(_object)
FEW_REFS = st.sampled_from(['"mcp.a"', '"mcp.b"', '"mcp.c"', '"mcp.d"', '"pi.y"', '"fabric.x"'])
FEW_OPERATION = st.builds(
    lambda r, a, o: "[" + r + "," + a + "," + o + "]",
    FEW_REFS,
    FEW_ARGS,
    st.sampled_from(['"succeeded"', '"succeeded"', '"succeeded"', '"failed"']),
)
FEW_AUDITS = st.lists(
    st.builds(lambda r, a: '{"ref":' + r + ',"args":' + a + "}", FEW_REFS, FEW_ARGS), max_size=4
).map(lambda items: "[" + ",".join(items) + "]")
FEW_LINES = st.lists(
    st.tuples(
        st.lists(FEW_OPERATION, max_size=12).map(lambda items: "[" + ",".join(items) + "]"),
        FEW_AUDITS,
    ),
    max_size=12,
)


def _shape(value: Any) -> str:
    """What tells Python values apart exactly (types, -0.0, dict order)."""
    return repr(value)


def _parse(raw: str) -> Any:
    return parse_json_bytes(raw.encode("utf-8"))[0]


# ----------------------------------------------------------------------- audits


@settings(max_examples=150, deadline=None)
@given(AUDITS)
@example('[{"ref":"mcp.a","args":{"b":1,"1":2,"0":"x","b":-0}},{"ref":"mcp.a","args":[]}]')
def test_audit_harvest_agrees(raw: str) -> None:
    rust = _rust()
    audits = _parse(raw)
    calls: list[AuditCall] = []
    refs: set[str] = set()
    with paths("plain"):
        kept, skipped, values = harvest_values(audits, calls.append, refs)
    n_kept, n_skipped, n_calls, n_values = rust.audit_harvest(raw.encode("utf-8"))
    assert (n_kept, n_skipped) == (kept, skipped)
    assert _shape(n_calls) == _shape([(call.ref, call.args) for call in calls])
    assert {ref for ref, _ in n_calls} == refs
    assert _shape(n_values) == _shape(values)


# ----------------------------------------------------------------------- evidence


def _state(evidence: ProposalEvidence) -> str:
    """The evidence exactly (values by type, -0.0, dict order)."""
    tallies = [
        (key, tally.total, tally.overflowed, list(tally.counts.items()))
        for key, tally in evidence.tallies.items()
    ]
    clusters = [(ref, list(rows.items())) for ref, rows in evidence.clusters.items()]
    sequences = [
        (identity, window, occurrences, sorted(executions))
        for identity, (window, occurrences, executions) in evidence.sequences.items()
    ]
    return _shape((evidence._executions, tallies, clusters, sequences))


@settings(max_examples=120, deadline=None)
@given(st.one_of(LINES, FEW_LINES), st.booleans())
# Eight and nine distinct values of one parameter: the tally keeps, then forgets them.
@example(
    [("[]", "[" + ",".join(f'{{"ref":"mcp.a","args":{{"k":{n}}}}}' for n in range(8)) + "]")],
    False,
)
@example(
    [("[]", "[" + ",".join(f'{{"ref":"mcp.a","args":{{"k":{n}}}}}' for n in range(9)) + "]")],
    False,
)
def test_evidence_agrees(lines: list[tuple[str, str]], trace_values: bool) -> None:
    rust = _rust()
    plain = ProposalEvidence(trace_values=trace_values, origin=7)
    native = rust.Evidence(trace_values)
    with paths("plain"):
        for execution, audits in lines:
            operations = [tuple(op) for op in _parse(execution)]
            plain.add_operations(operations)
            _, _, values = harvest_values(_parse(audits), None)
            if values is not None:
                tally_values(plain, values)
            native.add_operations_json(execution.encode("utf-8"))
            native.add_audits_json(audits.encode("utf-8"))
    merged = ProposalEvidence(trace_values=trace_values, origin=7).add_native(native.export())
    assert _state(merged) == _state(plain)


def test_evidence_numbers_executions_after_what_it_heard() -> None:
    rust = _rust()
    trace = b'[["mcp.a",{},"succeeded"],["mcp.b",{},"succeeded"],["mcp.c",{},"succeeded"]]'
    plain = ProposalEvidence(origin=3)
    ops = [tuple(op) for op in _parse(trace.decode())]
    for _ in range(4):
        plain.add_operations(ops)
    first, second = rust.Evidence(), rust.Evidence()
    for native in (first, first, second, second):
        native.add_operations_json(trace)
    merged = ProposalEvidence(origin=3).add_native(first.export()).add_native(second.export())
    assert _state(merged) == _state(plain)
    assert merged.sequences["mcp.a→mcp.b→mcp.c"][2] == {(3, 0), (3, 1), (3, 2)}


# ----------------------------------------------------------------------- pool window

BOUNDS = st.one_of(st.none(), st.integers(-2, 12), st.just(POOL_MAX_VALUE_BYTES))


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(st.lists(AUDITS, max_size=6), FEW_LINES.map(lambda lines: [a for _, a in lines])),
    st.booleans(),
    BOUNDS,
)
def test_window_summary_agrees(lines: list[str], drop: bool, bound: int | None) -> None:
    rust = _rust()
    observations: list[ValueObservation] = []
    native = rust.WindowTally(drop, bound)
    with paths("plain"):
        for raw in lines:
            audit_records(_parse(raw), None, observations.append)
            native.add_audits_json(raw.encode("utf-8"))
        plain = summarize_window("w", observations, drop_unloadable=drop, max_value_bytes=bound)
    summary = native_tally_summary("w", native)
    assert summary == plain
    assert list(summary.counts.items()) == list(plain.counts.items())  # first-seen order


# ----------------------------------------------------------------------- trial

SCHEMA = {"type": "object", "properties": {"x": {"type": "number"}, "a": {"type": "string"}}}
TIGHT = {
    "type": "object",
    "properties": {"x": {"type": "number", "enum": [1, 2]}, "a": {"type": "string"}},
    "required": ["x"],
    "additionalProperties": False,
}
LIVE = {
    "actions": [
        {"ref": "mcp.a", "inputSchema": SCHEMA},
        {"ref": "mcp.b", "inputSchema": SCHEMA},
        {"ref": "mcp.c", "inputSchema": {"type": "object", "required": ["a"]}},
        {"ref": "fabric.x", "inputSchema": SCHEMA},
        {"ref": "mcp.\ud800", "inputSchema": SCHEMA},
        {"ref": "mcp.d", "inputSchema": "not a schema"},
    ]
}
EFFECTIVE = {
    "actions": [
        {"ref": "mcp.a", "inputSchema": TIGHT},
        {"ref": "mcp.c", "inputSchema": {"type": "object", "required": ["a"]}},
        {"ref": "fabric.x", "inputSchema": TIGHT},
        {"ref": "mcp.\ud800", "inputSchema": TIGHT},
        {"ref": "mcp.d", "inputSchema": TIGHT},
    ]
}
TRIAL_ARGS = st.lists(
    st.tuples(
        st.sampled_from(['"x"', '"a"', '"y"', '"1"']),
        st.one_of(st.sampled_from(["1", "1.0", "2", "3", "-0", "1e400", '"s"', "null"]), VALUES),
    ),
    max_size=3,
).map(_object)
TRIAL_REFS = st.sampled_from(
    ['"mcp.a"', '"mcp.b"', '"mcp.c"', '"mcp.d"', '"fabric.x"', '"mcp.\\ud800"', '"mcp.zz"']
)
TRIAL_OPERATION = st.builds(
    lambda r, a, o: "[" + r + "," + a + "," + o + "]", TRIAL_REFS, TRIAL_ARGS, OUTCOMES
)
TRIAL_AUDITS = st.lists(
    st.builds(lambda r, a: '{"ref":' + r + ',"args":' + a + "}", TRIAL_REFS, TRIAL_ARGS),
    max_size=4,
).map(lambda items: "[" + ",".join(items) + "]")
TRIAL_LINES = st.lists(
    st.tuples(
        st.lists(TRIAL_OPERATION, max_size=6).map(lambda items: "[" + ",".join(items) + "]"),
        TRIAL_AUDITS,
    ),
    max_size=8,
)


def _counts(counts: TrialCounts) -> str:
    return _shape(
        (
            [(ref, list(c.items())) for ref, c in counts.trace_classes.items()],
            [(ref, list(c.items())) for ref, c in counts.audit_classes.items()],
        )
    )


@settings(max_examples=100, deadline=None)
@given(TRIAL_LINES)
def test_trial_counts_agree(lines: list[tuple[str, str]]) -> None:
    rust = _rust()
    surfaces = TrialSurfaces(LIVE, EFFECTIVE, CallChecks(decoded=True))
    native = rust.TrialTally.over(surfaces.native_verdicts(rust))
    with paths("plain"):
        plain = TrialTally(LIVE, EFFECTIVE)
        for execution, audits in lines:
            plain.add_signed([tuple(op) for op in _parse(execution)], "task", None)
            for record in _parse(audits):
                plain.add_audit(AuditCall(record["ref"], record["args"]))
    for execution, audits in lines:
        native.add_trace_json(execution.encode("utf-8"))
        native.add_audits_json(audits.encode("utf-8"))
    assert _counts(TrialCounts().add_native(native.counts())) == _counts(plain.counts)


def test_trial_remembers_verdicts_of_pure_checks_only() -> None:
    rust = _rust()
    calls: list[Any] = []

    def counted(args: Any) -> bool:
        calls.append(args)
        return "x" in args

    def plain_check(args: Any) -> bool:
        calls.append(args)
        return True

    parts = {
        "mcp.pure": (3, counted, 3, counted, False, False),
        "mcp.plain": (1, plain_check, 3, counted, False, False),
    }
    native = rust.TrialTally(list(parts), parts.__getitem__)
    line = b'[["mcp.pure",{"x":1},"succeeded"],["mcp.plain",{"x":1},"failed"]]'
    native.add_trace_json(line)
    native.add_trace_json(line)
    # pure: two checks once; plain: its declared check each time, the compiled one each time
    # too (the verdict as a whole is not remembered when one check is not pure)
    assert len(calls) == 2 + 4
    assert native.counts() == (
        {"mcp.pure": {"both-accept": 2}, "mcp.plain": {"both-accept": 2}},
        {},
    )


def test_trial_plain_check_errors_propagate_compiled_ones_reject() -> None:
    rust = _rust()

    def boom(args: Any) -> bool:
        raise RuntimeError("boom")

    parts = {"g": (2, boom, 0, None, False, False), "p": (1, boom, 0, None, False, False)}
    native = rust.TrialTally(list(parts), parts.__getitem__)
    native.add_trace_json(b'[["g",{},"succeeded"]]')
    assert native.counts() == ({"g": {"both-reject": 1}}, {})
    with pytest.raises(RuntimeError, match="boom"):
        native.add_trace_json(b'[["p",{},"succeeded"]]')


# ----------------------------------------------------------------------- the pipeline


def _trace_line(operations: list[tuple[str, str, str]], audits: str | None, shape: int) -> str:
    ops = []
    for sequence, (ref, args, outcome) in enumerate(operations):
        stage = ',"failureStage":"validate"' if outcome == '"failed"' else ""
        ops.append(
            f'{{"type":"call","sequence":{sequence},"ref":{ref},"args":{args},'
            f'"outcome":{outcome}{stage}}}'
        )
    trace = (
        '{"kind":"pi-fabric.execution","version":1,"outcome":"succeeded","phases":["t"],'
        '"operations":[' + ",".join(ops) + '],"counts":{"droppedValues":0,'
        '"truncatedValues":0,"redactedValues":0,"droppedOperations":0}}'
    )
    members = [] if shape == 2 else ['"trace":' + trace]  # shape 2: audits, no trace
    if audits is not None:
        members.append('"audits":' + audits)
    details = "{" + ",".join(members) + "}"
    if shape == 1:
        return '{"type":"message","message":{"role":"toolResult","details":' + details + "}}"
    return '{"type":"custom","details":' + details + "}"


OPS = st.lists(
    st.one_of(
        st.tuples(FEW_REFS, FEW_ARGS, st.sampled_from(['"succeeded"', '"failed"'])),
        st.tuples(REF_TEXTS, ARGS, st.sampled_from(['"succeeded"', '"failed"'])),
        st.tuples(TRIAL_REFS, TRIAL_ARGS, st.sampled_from(['"succeeded"', '"failed"'])),
    ),
    max_size=8,
)
SESSION_LINES = st.one_of(
    st.builds(
        _trace_line,
        OPS,
        st.one_of(st.none(), AUDITS, FEW_AUDITS, TRIAL_AUDITS),
        st.integers(0, 2),
    ),
    st.sampled_from(
        [
            '{"type":"model_change","provider":"p","modelId":"m"}',
            "",
            "not json pi-fabric.execution",
            '{"details":7,"kind":"pi-fabric.execution"}',
        ]
    ),
)
SESSION_FILES = st.lists(
    st.lists(SESSION_LINES, max_size=10).map(lambda lines: "\n".join(lines).encode("utf-8")),
    min_size=1,
    max_size=3,
)


def _read_both(tmp: Any, files: list[bytes], plan: Any, **more: Any) -> list[Any]:
    from pytest_entropy.run.corpus import read_corpus, source_files
    from tests.native_core_support import on_path

    folder = tmp / f"c{len(list(tmp.iterdir()))}"
    folder.mkdir()
    paths = []
    for index, data in enumerate(files):
        path = folder / f"{index:02d}.jsonl"
        path.write_bytes(data)
        paths.append(path)
    out = []
    for path in ("native", "plain"):
        with on_path(path):
            out.append(read_corpus(source_files(paths), plan, **more))
    return out


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(SESSION_FILES, st.booleans())
def test_the_pipeline_gathers_the_same_on_both_paths(
    tmp_path: Any, files: list[bytes], audit_values: bool
) -> None:
    from pytest_entropy.run.corpus import CorpusPlan
    from pytest_entropy.run.trial import TrialReplay

    _rust()
    plan = CorpusPlan(trace_values=not audit_values, observation_values=audit_values)
    native, plain = _read_both(tmp_path, files, plan)
    assert native.diagnostics.to_json() == plain.diagnostics.to_json()
    assert _state(native.evidence) == _state(plain.evidence)
    assert native.audit_refs == plain.audit_refs
    report = plain.state.finalize(LIVE)
    assert canonical_json(native.evidence.proposals(report, LIVE)) == canonical_json(
        plain.evidence.proposals(report, LIVE)
    )
    pool_plan = CorpusPlan(meter=False, proposals=False, audit_refs=False, windows=True)
    native, plain = _read_both(tmp_path, files, pool_plan, pool=None)
    assert native.diagnostics.to_json() == plain.diagnostics.to_json()
    assert native.merged_pool().to_json() == plain.merged_pool().to_json()
    trial_plan = CorpusPlan(proposals=False, audit_refs=False, replay=TrialReplay(LIVE, EFFECTIVE))
    native, plain = _read_both(tmp_path, files, trial_plan, replayed=TrialCounts())
    assert native.diagnostics.to_json() == plain.diagnostics.to_json()
    assert _counts(native.replayed) == _counts(plain.replayed)


def test_the_verdicts_hold_across_the_files_of_one_command() -> None:
    rust = _rust()
    calls: list[Any] = []

    def counted(args: Any) -> bool:
        calls.append(args)
        return True

    parts = {"mcp.a": (3, counted, 3, counted, False, True)}
    verdicts = rust.TrialVerdicts(list(parts), parts.__getitem__)
    for _ in range(3):  # one tally per file, one check for the three
        tally = rust.TrialTally.over(verdicts)
        tally.add_trace_json(b'[["mcp.a",{"x":1},"succeeded"]]')
        assert tally.counts() == ({"mcp.a": {"both-accept": 1}}, {})
    assert len(calls) == 1
