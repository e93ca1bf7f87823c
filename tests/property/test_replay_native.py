"""The compile's replay in the Rust core (``TrialVerdicts.replay``, ``native/src/replay.rs``)
finds what the plain :class:`~pytest_entropy.core.compiler.ReplayTally` finds: the same
audit counts per touched ref in the same order, the same runs of trace violations, on
generated hostile-but-valid JSON (huge and tiny numbers, ``-0``, lone surrogates, deep
nesting, duplicate keys); each check is built only when a call needs it; and the
pipeline's second compile pass (with and without the mention filter) gathers the same on
both paths."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_entropy.core.compiler import ReplayCounts, ReplayTally
from pytest_entropy.core.records import AuditCall
from pytest_entropy.core.validation import CallChecks
from pytest_entropy.run.compile import CompileReplay, _mentions, _NativeReplay, _ReplayRoot
from tests.native_support import paths

from .test_native_tallies import (
    EFFECTIVE,
    LIVE,
    SESSION_FILES,
    TRIAL_LINES,
    _parse,
    _read_both,
    _rust,
    _shape,
)

REF_NAMES = ["mcp.a", "mcp.b", "mcp.c", "mcp.d", "fabric.x", "mcp.\ud800", "mcp.zz"]
TOUCHED = st.lists(st.sampled_from(REF_NAMES), unique=True, max_size=7)


def _counts(counts: ReplayCounts) -> str:
    return _shape((list(counts.audit_invalid.items()), counts.trace_runs))


@st.composite
def replays(draw: st.DrawFn) -> CompileReplay:
    """A compile replay of the test surfaces, either way round, over drawn touched refs."""
    candidate, before = (EFFECTIVE, LIVE) if draw(st.booleans()) else (LIVE, EFFECTIVE)
    touched = draw(TOUCHED)
    audited = draw(st.lists(st.sampled_from(touched), unique=True)) if touched else []
    return CompileReplay(
        candidate,
        before,
        frozenset(touched),
        frozenset(audited),
        audit_fragments=False,
        observation_fragments=False,
        checks=CallChecks(decoded=True),
    )


@settings(max_examples=150, deadline=None)
@given(replays(), TRIAL_LINES)
def test_the_kernel_counts_what_the_plain_tally_counts(
    replay: CompileReplay, lines: list[tuple[str, str]]
) -> None:
    rust = _rust()
    candidate, before = replay._schemas
    with paths("plain"):
        plain = ReplayTally(candidate, before, replay.touched, replay.audited)
        for execution, audits in lines:
            plain.add_signed([tuple(op) for op in _parse(execution)], "task", None)
            for record in _parse(audits):
                plain.add_audit(AuditCall(record["ref"], record["args"]))
    for _ in range(2):  # the second file meets remembered verdicts
        tally = ReplayTally(candidate, before, replay.touched, replay.audited)
        adapter = _NativeReplay(replay, tally)
        native = rust.ReplayTally.over(adapter.native_verdicts(rust))
        for execution, audits in lines:
            native.add_trace_json(execution.encode("utf-8"))
            native.add_audits_json(audits.encode("utf-8"))
        adapter.counts.add_native(native.counts())
        assert _counts(tally.counts) == _counts(plain.counts)


def test_each_check_is_built_when_a_call_first_needs_it() -> None:
    rust = _rust()
    built: list[tuple[str, bool]] = []

    def presence(ref: str) -> tuple[bool, bool]:
        return ref != "gone", ref != "new"

    def build(ref: str, of_before: bool) -> tuple[int, Any]:
        built.append((ref, of_before))
        return 3, lambda args: "x" in args

    verdicts = rust.TrialVerdicts.replay(["a", "gone", "new"], [], presence, build)
    tally = rust.ReplayTally.over(verdicts)
    tally.add_trace_json(b'[["a",{"x":1},"succeeded"],["a",{},"succeeded"],["a",{},"succeeded"]]')
    tally.add_trace_json(b'[["gone",{},"succeeded"],["new",{},"failed"]]')
    assert built == [("a", False)]  # trace calls need the candidate's check alone
    tally.add_audits_json(b'[{"ref":"a","args":{}},{"ref":"new","args":{"x":1}}]')
    assert built == [("a", False), ("a", True), ("new", False)]
    assert tally.counts() == ({"a": 0, "new": 0}, [["a", 1, 2], ["gone", 0, 1]])


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(SESSION_FILES, replays(), st.booleans())
def test_the_second_compile_pass_gathers_the_same_on_both_paths(
    tmp_path: Any, files: list[bytes], replay: CompileReplay, mention: bool
) -> None:
    from pytest_entropy.run.corpus import CorpusPlan

    _rust()
    plan = CorpusPlan(
        meter=False,
        proposals=False,
        audit_refs=False,
        replay=replay,
        mentions=_mentions(set(replay.touched)) if mention else None,
    )
    native, plain = _read_both(tmp_path, files, plan, replayed=_ReplayRoot())
    assert native.diagnostics.to_json() == plain.diagnostics.to_json()
    assert _counts(native.replayed.replay) == _counts(plain.replayed.replay)
