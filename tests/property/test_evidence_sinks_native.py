"""The evidence path between the scan kernel and the corpus's accumulators, without a Python
call per line or per entry, holds what its Python twins hold.

Three kernels take over there: the scan kernel (``ingest/_scan_native.c``) appends what a
``DeferredMeter`` / ``DeferredEvidence`` would append itself and calls the audit kernel's
harvest in place of ``SessionScanner._harvest``; the proposals kernel
(``core/_proposals_native.c``) replays a file's deferred entries in one call. Compared here,
native against python (fast paths, no kernels) and plain, on generated inputs: every kind of
deferred entry interleaved (and entries outside the kernels' domain), the executions'
numbering from any start, the trace-value tallies, the settle thresholds (DEFERRED_TRACES),
listeners that settle or swap the deferral midway, subclasses that override the methods, the
diagnostics counts, and the bytes ``measure``, ``propose`` and ``compile`` write.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_entropy.cli import main
from pytest_entropy.core.jscompat import js_own_keys, value_key
from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.proposals import ENUM_MAX_DISTINCT, ProposalEvidence, _Tally
from pytest_entropy.core.records import AuditCall, Operation, Trace, ValueObservation
from pytest_entropy.ingest.native import SessionScanner, audit_records, harvest_values
from pytest_entropy.ingest.native_sinks import AuditRefs
from pytest_entropy.run import deferred as deferred_module
from pytest_entropy.run.deferred import (
    _OBSERVATION,
    _OPERATIONS,
    _TRACE,
    _VALUE,
    _VALUES,
    DeferredEvidence,
    DeferredMeter,
    values_listener,
)
from tests.native_support import native_kernel, paths
from tests.property.test_audit_native import (
    SURFACE,
    argument_objects,
    audits_lists,
    primitives,
)
from tests.property.test_audit_native import session_files as audited_files

KERNELS = ("core._proposals_native", "ingest._scan_native", "ingest._audit_native")
PATHS = ("native", "python", "plain")
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def kernels() -> None:
    for name in KERNELS:
        native_kernel(name)


@contextlib.contextmanager
def deferred_traces(limit: int) -> Iterator[None]:
    previous = deferred_module.DEFERRED_TRACES
    deferred_module.DEFERRED_TRACES = limit
    try:
        yield
    finally:
        deferred_module.DEFERRED_TRACES = previous


class Ref(str):
    """A str subclass: outside the proposals kernel's exact domain."""


# ------------------------------------------------------------------ the replay

REFS = ["a.one", "a.two", "a.three", "b.x", "pi.read", "fabric.x", "é.tool", "😀", ""]
refs = st.sampled_from(REFS)
outcomes = st.sampled_from(["succeeded", "succeeded", "failed"])
operations = st.one_of(
    st.builds(Operation, refs, argument_objects, outcomes),
    # the scanner's signed operations: (ref, args, outcome, stage, signature)
    st.tuples(refs, argument_objects, outcomes, st.none(), st.just("sig")),
    # outside the kernel's domain: the Python loop reads them
    st.tuples(refs.map(Ref), argument_objects, outcomes),
    st.lists(st.one_of(refs, argument_objects, outcomes), min_size=3, max_size=3).map(
        lambda items: [
            items[0] if isinstance(items[0], str) else "a.one",
            items[1] if isinstance(items[1], dict) else {},
            "succeeded",
        ]
    ),
)
op_lists = st.one_of(
    st.lists(operations, max_size=8),
    st.lists(operations, max_size=8).map(tuple),
    st.lists(st.sampled_from(["a.one", "a.two", "a.three", "b.x"]), max_size=40).map(
        lambda names: [(name, {}, "succeeded", None, "s") for name in names]  # long, repeating
    ),
)
flat_values = st.lists(
    st.tuples(refs, st.sampled_from(["k", "10", "é"]), primitives), min_size=1, max_size=4
).map(lambda triples: tuple(item for triple in triples for item in triple))
entries = st.one_of(
    op_lists.map(lambda ops: (_OPERATIONS, ops)),
    op_lists.map(lambda ops: (_TRACE, Trace(tuple(Operation(*op[:3]) for op in ops), "task"))),
    st.tuples(st.just(_VALUE), refs, st.sampled_from(["k", "10"]), primitives),
    flat_values.map(lambda values: (_VALUES, values)),
    st.builds(ValueObservation, refs, st.sampled_from(["k", "10"]), primitives).map(
        lambda observation: (_OBSERVATION, observation)
    ),
    # spelled unlike the deferral's entries: the Python dispatch decides (True == _VALUE)
    st.tuples(st.just(True), refs, st.just("k"), primitives),
    flat_values.map(lambda values: (_VALUES, values, "extra")),
)


# ------------------------------------------------------------- the scan's sinks


class CountingMeter(DeferredMeter):
    """Overrides add_signed: the kernel must call it (it does not define kernel_sink)."""

    __slots__ = ("calls",)

    def __init__(self, state: MeterState) -> None:
        super().__init__(state)
        self.calls = 0

    def add_signed(self, operations: Any, task_key: str | None, model: str | None) -> None:
        self.calls += 1
        super().add_signed(operations, task_key, model)


def harvested(kind: str, data: bytes, on_values: bool) -> Any:
    heard: list[Any] = []
    with paths(kind):
        scanner = SessionScanner(
            None,
            meter=MeterState(retain_terms=True),
            on_audit=lambda call: heard.append(("call", tuple(call))),
            on_values=(lambda values: heard.append(("values", values))) if on_values else None,
            on_value_fields=None if on_values else (lambda *f: heard.append(("fields", f))),
            on_value=None if on_values else (lambda o: heard.append(("observation", o))),
        )
        scanner.scan_stream(io.BytesIO(data))
    return repr(heard), dataclasses.asdict(scanner.diagnostics)


@settings(SETTINGS, max_examples=80)
@given(batches=st.lists(audits_lists, max_size=6), on_values=st.booleans())
def test_the_harvest_counts_what_the_python_harvest_counts(
    batches: list[Any], on_values: bool
) -> None:
    """Audits of every shape (not a list, records that are not objects, foreign keys) on
    trace lines, heard through on_values or through on_value_fields and on_value."""
    kernels()
    lines = []
    for audits in batches:
        trace = {
            "kind": "pi-fabric.execution",
            "version": 1,
            "outcome": "succeeded",
            "phases": [],
            "operations": [],
            "counts": {
                "droppedValues": 0,
                "truncatedValues": 0,
                "redactedValues": 0,
                "droppedOperations": 0,
            },
        }
        try:
            lines.append(json.dumps({"details": {"trace": trace, "audits": audits}}))
        except (TypeError, ValueError):
            continue
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    found = [harvested(kind, data, on_values) for kind in PATHS]
    assert found[0] == found[1]
    if not on_values:
        assert found[0] == found[2]
    else:
        assert found[0][1] == found[2][1]


def both(first: Any, then: Any) -> Any:
    def heard(call: Any) -> None:
        first(call)
        if then is not None:
            then(call)

    return heard


@SETTINGS
@given(audits=audits_lists, calls=st.booleans(), given_set=st.sampled_from([set(), {"a"}]))
def test_the_audit_kernel_keeps_the_refs_an_audit_refs_listener_keeps(
    audits: Any, calls: bool, given_set: set[str]
) -> None:
    native = native_kernel("ingest._audit_native")
    heard: list[Any] = []
    on_call = (lambda call: heard.append(tuple(call))) if calls else None
    found = []
    for run in ("native-values", "twin-values", "native-records", "twin-records", "listener"):
        heard.clear()
        refs = set(given_set)
        if run == "native-values":
            out = native.harvest_values(audits, on_call, AuditCall, js_own_keys, refs)
        elif run == "twin-values":
            out = harvest_values(audits, on_call, refs)
        elif run == "native-records":
            out = native.audit_records(
                audits, on_call, AuditCall, None, ValueObservation, None, js_own_keys, refs
            )
        elif run == "twin-records":
            out = audit_records(audits, on_call, None, None, refs)
        else:
            out = audit_records(audits, both(AuditRefs(refs), on_call), None)
        found.append((repr(out[:2]), sorted(refs), list(heard)))
    assert all(item == found[0] for item in found)


def test_the_audit_kernel_refuses_refs_that_are_not_a_set() -> None:
    native = native_kernel("ingest._audit_native")
    with pytest.raises(TypeError):
        native.harvest_values([], None, AuditCall, js_own_keys, frozenset())
    with pytest.raises(TypeError):
        native.audit_records([], None, AuditCall, None, ValueObservation, None, js_own_keys, [])


def swapped(kind: str, data: bytes) -> Any:
    with paths("native"):
        first = DeferredMeter(MeterState(retain_terms=True))
        second = DeferredMeter(MeterState(retain_terms=True))
        evidence = DeferredEvidence(ProposalEvidence())
        later: list[Any] = []
        scanner: SessionScanner

        def swap(call: Any) -> None:
            scanner.meter = second
            scanner.on_signed = lambda signed, task, model: later.append(len(signed))

        scanner = SessionScanner(
            None,
            meter=first,
            on_signed=evidence.add_signed,
            on_audit=swap,
            on_values=values_listener(evidence),
        )
        if kind == "twin":
            scanner._scan = None
        scanner.scan_stream(io.BytesIO(data))
    return first.pending, second.pending, later, evidence.pending


def test_a_swapped_listener_is_called_not_bypassed() -> None:
    """The kernel's sinks are fixed per scan: a meter or listener replaced midway is
    called like any other."""
    kernels()
    trace = {
        "kind": "pi-fabric.execution",
        "version": 1,
        "outcome": "succeeded",
        "phases": ["p"],
        "operations": [
            {"type": "call", "sequence": 0, "ref": "a", "args": {}, "outcome": "succeeded"}
        ],
        "counts": {
            "droppedValues": 0,
            "truncatedValues": 0,
            "redactedValues": 0,
            "droppedOperations": 0,
        },
    }
    line = json.dumps({"details": {"trace": trace, "audits": [{"ref": "a", "args": {"k": 1}}]}})
    data = ("\n".join([line] * 4)).encode()
    found = [swapped(kind, data) for kind in ("native", "twin")]
    assert found[0] == found[1]
    assert found[0][0] is not None and len(found[0][0]) == 1 and len(found[0][1]) == 3


# ---------------------------------------------------------------- end to end


def command_bytes(kind: str, folder: Path, command: str, limit: int) -> Any:
    out, err = io.StringIO(), io.StringIO()
    argv = [command, "--sessions", str(folder / "sessions"), "--surface"]
    argv += [str(folder / "surface.json")]
    target = folder / f"{command}-{kind}.json"
    if command == "compile":
        argv += ["--out", str(target)]
    with (
        paths(kind),
        deferred_traces(limit),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        status = main(argv)
    written = target.read_bytes() if target.exists() else None
    # the compile's summary line says how long it took: not part of what is compared
    text = re.sub(r"\(\d+(\.\d+)?m?s\)", "(time)", out.getvalue().replace(str(target), "<out>"))
    return status, text, err.getvalue().replace(str(target), "<out>"), written


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    files=audited_files(),
    command=st.sampled_from(["measure", "propose", "compile"]),
    limit=st.sampled_from([0, 1, 4096]),
)
@example(
    files=[
        [
            '{"type": "message", "message": {"details": {"trace": {"kind": "pi-fabric.execution",'
            ' "version": 1, "outcome": "succeeded", "phases": ["build"], "operations": [],'
            ' "counts": {"droppedValues": 0, "truncatedValues": 0, "redactedValues": 0,'
            ' "droppedOperations": 0}}, "audits": [{"args": {"0": Infinity}}]}}}'
        ]
    ],
    command="measure",
    limit=0,
)
def test_measure_propose_and_compile_write_the_same_bytes_on_every_path(
    tmp_path_factory: pytest.TempPathFactory, files: list[list[str]], command: str, limit: int
) -> None:
    kernels()
    folder = tmp_path_factory.mktemp(command)
    (folder / "surface.json").write_text(json.dumps(SURFACE), encoding="utf-8")
    sessions = folder / "sessions"
    sessions.mkdir()
    for index, lines in enumerate(files):
        text = "".join(line + "\n" for line in lines)
        (sessions / f"{index:02d}.jsonl").write_text(text, encoding="utf-8")
    found = [command_bytes(kind, folder, command, limit) for kind in PATHS]
    assert found[0] == found[1] == found[2]
    status, _text, err, _written = found[0]
    if status == 2:  # every generated line refused (e.g. a non-JSON Infinity): nothing measured
        assert "--allow-empty accepts an empty corpus" in err, err
    else:
        assert status in (0, 1), err


# ------------------------------------------------------------- float identities

EDGE_FLOATS = [
    0.0,
    -0.0,
    float("nan"),
    float("inf"),
    float("-inf"),
    5e-324,
    1.7976931348623157e308,
    0.1,
    1e-6,
    1e-7,
    1.5e-7,
    123e-9,
    1e20,
    1e21,
    1.5e21,
    123456789012345680000.0,
    2.0**53,
    2.0**53 + 2,
    1e16,
    1e15 + 0.5,
    100.0,
    0.5,
    -2.5e-5,
    -1e300,
]


@SETTINGS
@given(value=st.one_of(st.floats(), st.sampled_from(EDGE_FLOATS)), negate=st.booleans())
def test_the_tally_spells_a_float_as_value_key_does(value: float, negate: bool) -> None:
    """The audit kernel spells an exact float's identity itself (JavaScript's
    Number::toString): the same text as the Python value_key, on every float."""
    native = native_kernel("ingest._audit_native")
    value = -value if negate else value
    tallies: dict[Any, Any] = {}
    native.tally_values(tallies, _Tally, value_key, ENUM_MAX_DISTINCT, ("r", "k", value))
    assert list(tallies[("r", "k")].counts) == [value_key(value)]
