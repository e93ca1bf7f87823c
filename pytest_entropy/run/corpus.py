"""The one corpus pipeline: every consumer of session files reads them through it.

A corpus is a list of sources (local paths or fsspec URLs, :func:`source_files`).
:func:`read_corpus` reads each source alone (:func:`~pytest_entropy.sources.scan.scan_source`,
or an incremental :class:`~pytest_entropy.sources.incremental.EvidenceCache`) into a small,
mergeable :class:`CorpusPart`, on the engine :class:`EngineOptions` names, and folds the
parts in source order into one :class:`CorpusRead`. A :class:`CorpusPlan` says what to
collect: the merged meter state or each file's own, the proposals' evidence, the refs that
have audit calls, the observation windows (merged into a pool as they arrive), stamps for
a second pass, the session records themselves. Each accumulator merges exactly (the merge
of consecutive pieces equals one pass over them), so every engine gives the bytes of one
sequential pass, and the client's memory grows with what is distinct, not with the corpus.

Measure, propose, compile, pool, trial (``run/compile.py``, ``run/trial.py``), status,
certification's corpus mode, the pytest gate, the fixtures and assertions and the compile
loop all read here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.native_core import core
from pytest_entropy.core.plain_record import Record, field
from pytest_entropy.core.proposals import ProposalEvidence
from pytest_entropy.core.regex import (
    note_external_refs,
    note_unsupported_patterns,
    watch_unenforced,
)
from pytest_entropy.core.typing_lite import TypeVar
from pytest_entropy.ingest.native import SessionEvidence
from pytest_entropy.ingest.native_tallies import CoreCarry
from pytest_entropy.ingest.paths import as_path
from pytest_entropy.ingest.registry import rereadable
from pytest_entropy.run.collector import relaxed_collector
from pytest_entropy.run.corpus_listeners import Listeners, plain_listeners
from pytest_entropy.run.corpus_native import (
    CarrySpoiled,
    combine_evidence,
    combine_meters,
    read_native,
    served_natively,
    settle_evidence,
    settle_meter,
)
from pytest_entropy.run.corpus_plan import (  # the records, here too under their old address
    CorpusPart,
    CorpusPlan,
    CorpusRead,
    Replay,
    ReplayHooks,
    SourceFile,
    measure_plan,
    records_plan,
    source_files,
    source_stamp,
)
from pytest_entropy.run.executor import ENGINES, SCHEDULER_TIMEOUT, map_merge
from pytest_entropy.run.file_verdicts import count_passed_over, judge_file
from pytest_entropy.run.progress import ProgressSink, tracked_merge
from pytest_entropy.sources.scan import ModelCursor, scan_source
from pytest_entropy.sources.urls import is_url

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    # The pool loads where a plan collects windows, the evidence cache where a caller
    # passes one (measure does neither).
    from typing import Any, TypeAlias

    from pytest_entropy.core.pool import PoolMerger
    from pytest_entropy.sources.incremental import EvidenceCache

__all__ = [
    "CorpusPart",
    "CorpusPlan",
    "CorpusRead",
    "EngineOptions",
    "Replay",
    "ReplayHooks",
    "SourceChangedError",
    "SourceFile",
    "measure_plan",
    "read_corpus",
    "records_plan",
    "source_files",
    "source_stamp",
]

PartT = TypeVar("PartT")
Stamp: TypeAlias = "tuple[Any, ...]"


class SourceChangedError(EntropyInputError):
    """A session file changed between the compile's two reads; nothing was written."""


class EngineOptions(Record, frozen=True):
    """Where the work runs (see :func:`~pytest_entropy.run.executor.map_ordered`)."""

    engine: str = "local"
    jobs: int = 1
    scheduler: str | None = None
    window: int | None = None
    batch: int | None = None
    scheduler_timeout: float = SCHEDULER_TIMEOUT
    # Who watches the read's progress (the CLI's bar on a terminal); it never changes a
    # result and stays on the client.
    progress: ProgressSink | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"unknown engine {self.engine!r}")

    @property
    def in_process(self) -> bool:
        """Whether every map runs in this process, one after another, in order."""
        return self.engine == "local" or (self.engine == "processes" and self.jobs <= 1)

    def fold(
        self,
        items: Sequence[Any],
        map_fn: Callable[[Any], PartT],
        merge_fn: Callable[[Any, PartT], Any],
        initial: Any,
        combine: Callable[[PartT, PartT], PartT],
    ) -> Any:
        return map_merge(
            items,
            map_fn,
            merge_fn,
            initial,
            combine=combine,
            engine=self.engine,
            jobs=self.jobs,
            scheduler=self.scheduler,
            window=self.window,
            batch=self.batch,
            scheduler_timeout=self.scheduler_timeout,
            progress=self.progress,
        )


def _skipped_part(location: str, why: str) -> CorpusPart:
    part = CorpusPart()
    count_passed_over(part.diagnostics, location, why)
    return part


def _pool_merger(pool: Mapping[str, Any] | None) -> PoolMerger:
    """The pool's merger: its entries in the Rust core where it is loaded (the windows a
    scan gathers leave their counts there), the plain one otherwise."""
    native = core()
    if native is not None:
        from pytest_entropy.ingest.native_pool import NativePoolMerger

        return NativePoolMerger(pool, native)
    from pytest_entropy.core.pool import PoolMerger

    return PoolMerger(pool)


def _extend_records(into: SessionEvidence, more: SessionEvidence) -> None:
    into.traces.extend(more.traces)
    into.value_observations.extend(more.value_observations)
    into.audit_calls.extend(more.audit_calls)


def _merge_replayed(first: Any, then: Any) -> Any:
    if then is None:
        return first
    return then if first is None else first.merge(then)


def _read_cached(
    source: SourceFile,
    plan: CorpusPlan,
    part: CorpusPart,
    cache: EvidenceCache,
    listening: Listeners,
) -> bool:
    read = cache.read(as_path(source.location), plan.options)
    part.diagnostics.merge(read.diagnostics)
    if read.evidence is None:
        return False
    # The cache hands the records over kind by kind, each kind in file order; every
    # listener keeps the kinds apart, so this equals the scan's order.
    for items, listener in (
        (read.evidence.traces, listening.on_trace),
        (read.evidence.audit_calls, listening.on_audit),
        (read.evidence.value_observations, listening.on_value),
    ):
        if listener is not None:
            for item in items:
                listener(item)
    if plan.meter or plan.file_states:
        part.state.add_traces(read.evidence.traces)
    return True


def _read_plain(
    source: SourceFile,
    plan: CorpusPlan,
    part: CorpusPart,
    cache: EvidenceCache | None,
    cursor: ModelCursor | None,
    hooks: ReplayHooks | None,
) -> tuple[bool, Listeners]:
    """One file on the plain path: the plain scanner (or the cache) and every listener."""
    listening = plain_listeners(source, plan, part, cache, hooks)
    with watch_unenforced() as met:
        if cache is not None:
            readable = _read_cached(source, plan, part, cache, listening)
        else:
            readable = scan_source(
                source.location,
                None if listening.on_signed is not None else listening.on_trace,
                on_signed=listening.on_signed,
                diagnostics=part.diagnostics,
                meter=part.state if plan.meter or plan.file_states else None,
                # Audits are harvested (and counted) only when someone listens to them.
                on_audit=listening.on_audit,
                on_value=(
                    listening.on_value
                    if listening.on_value_fields is None and listening.on_values is None
                    else None
                ),
                options=plan.options,
                cursor=cursor,
                on_value_fields=listening.on_value_fields,
                on_values=listening.on_values,
                mentions=plan.mentions,
            )
    if listening.hooks is not None:
        part.patterns = met.patterns
        part.external_refs = met.refs
    return readable, listening


def _read_one(
    source: SourceFile,
    plan: CorpusPlan,
    cache: EvidenceCache | None = None,
    cursor: ModelCursor | None = None,
    carry: CoreCarry | None = None,
) -> CorpusPart:
    if source.skip is not None:
        return _skipped_part(source.location, source.skip)
    if plan.check_stamps and source_stamp(source.location, plan.options) != source.stamp:
        return CorpusPart(changed=[source.location])
    stamp = source_stamp(source.location, plan.options) if plan.stamps else None
    part = CorpusPart(
        evidence=ProposalEvidence(trace_values=plan.trace_values, origin=source.index)
    )
    # The one place that picks an implementation: the Rust core when it is there and the
    # plan asks for nothing it does not compute, else the plain path.
    hooks = plan.replay.start(source) if plan.replay is not None else None
    native = core() if served_natively(plan, cache, hooks) else None
    if native is not None:
        readable, listening = read_native(source, plan, part, cursor, native, hooks, carry)
    else:
        readable, listening = _read_plain(source, plan, part, cache, cursor, hooks)
    if plan.check_stamps and (
        not readable or source_stamp(source.location, plan.options) != source.stamp
    ):
        return CorpusPart(changed=[source.location], diagnostics=part.diagnostics)
    if not readable:
        # An unreadable file contributes its diagnostics and nothing else, as in one pass.
        return CorpusPart(
            evidence=ProposalEvidence(trace_values=plan.trace_values, origin=source.index),
            files=[(source, None)] if plan.file_states else [],
            unreadable=[source],
            diagnostics=part.diagnostics,
        )
    return _finish_part(source, plan, part, stamp, listening)


def _finish_part(
    source: SourceFile,
    plan: CorpusPlan,
    part: CorpusPart,
    stamp: Stamp | None,
    listening: Listeners,
) -> CorpusPart:
    """A readable file's part: its verdict, window, stamp, own state and replay result."""
    judge_file(source.location, part.diagnostics, plan.options.session_format)
    if listening.window is not None:
        part.windows.append(listening.window)
    elif listening.tally is not None:
        from pytest_entropy.core.pool import tally_summary

        part.windows.append(tally_summary(source.window, listening.tally))
    elif plan.windows:
        observations = listening.observations
        if plan.redact_values:
            from pytest_entropy.core.redact import redact_observation  # opt-in: loaded then

            observations = [redact_observation(o) for o in observations]
        from pytest_entropy.core.pool import summarize_window

        part.windows.append(summarize_window(source.window, observations))
    part.readable.append((source, stamp))
    if plan.file_states:
        part.files.append((source, part.state))
        part.state = MeterState(retain_terms=True)
    if listening.hooks is not None:
        part.replayed = listening.hooks.result()
    return part


def _combine_parts(first: CorpusPart, then: CorpusPart) -> CorpusPart:
    combine_meters(first, then)  # both keep churn terms: still a right-hand side
    combine_evidence(first, then)
    first.audit_refs.update(then.audit_refs)
    first.windows.extend(then.windows)
    first.readable.extend(then.readable)
    first.files.extend(then.files)
    first.unreadable.extend(then.unreadable)
    _extend_records(first.records, then.records)
    first.replayed = _merge_replayed(first.replayed, then.replayed)
    first.patterns.update(then.patterns)
    first.external_refs.update(then.external_refs)
    first.changed.extend(then.changed)
    first.diagnostics.merge(then.diagnostics)
    return first


def _merge_part(corpus: CorpusRead, part: CorpusPart) -> CorpusRead:
    if corpus.pool is not None:
        for summary in part.windows:
            corpus.pool.add(summary)
    part.windows = []  # merged into the pool: the client keeps no window
    note_unsupported_patterns(part.patterns)
    note_external_refs(part.external_refs)
    _combine_parts(corpus, part)
    return corpus


def read_corpus(
    sources: Sequence[SourceFile],
    plan: CorpusPlan | None = None,
    engine: EngineOptions | None = None,
    *,
    pool: Mapping[str, Any] | None = None,
    replayed: Any = None,
    cache: EvidenceCache | None = None,
) -> CorpusRead:
    """Read ``sources`` as ``plan`` says, where ``engine`` says, merged in source order.

    With ``plan.windows`` each file's observation window merges into ``pool`` (a pool
    file's content, or ``None`` for a new pool). What ``plan.replay`` finds merges into
    ``replayed`` (default: the first file's result). ``cache`` reads the files
    incrementally (the compile loop re-reads a growing window); it, and
    ``plan.continuous``, need the maps to run in this process.
    """
    plan = plan or CorpusPlan()
    engine = engine or EngineOptions()
    if (cache is not None or plan.continuous) and not engine.in_process:
        raise ValueError("an evidence cache or one cursor across files needs the local engine")
    # In this process each file is read after the ones before it merged, so the Rust core
    # can carry the corpus's accumulators through every scan instead of merging a state
    # per file; a file that fails midway spoils them, and the corpus is then read again
    # the other way (rare: a truncated or corrupt compressed file, a read error). So every
    # source must read the same twice: not a pipe or FIFO, which the first read drains.
    # (A second pass that checks stamps drops a changed file after reading it: not carried.)
    carried = (
        engine.in_process
        and cache is None
        and not plan.file_states
        and not plan.check_stamps
        and all(is_url(s.location) or rereadable(s.location) for s in sources if s.skip is None)
    )
    try:
        if carried:
            try:
                return _read_all(sources, plan, engine, pool, replayed, cache, carried=True)
            except CarrySpoiled:
                pass
        return _read_all(sources, plan, engine, pool, replayed, cache, carried=False)
    finally:
        if engine.progress is not None:
            engine.progress.end()


def _read_all(
    sources: Sequence[SourceFile],
    plan: CorpusPlan,
    engine: EngineOptions,
    pool: Mapping[str, Any] | None,
    replayed: Any,
    cache: EvidenceCache | None,
    *,
    carried: bool,
) -> CorpusRead:
    corpus = CorpusRead(
        MeterState(retain_terms=False),
        ProposalEvidence(trace_values=plan.trace_values),
        replayed=replayed,
        pool=_pool_merger(pool) if plan.windows else None,
    )
    cursor = ModelCursor() if plan.continuous else None
    merge: Callable[[Any, Any], Any] = _merge_part
    if engine.progress is not None:
        merge = tracked_merge(sources, _merge_part, engine.progress)
    with relaxed_collector():
        read: CorpusRead = engine.fold(
            sources,
            functools.partial(
                _read_one,
                plan=plan,
                cache=cache,
                cursor=cursor,
                carry=CoreCarry(corpus) if carried else None,
            ),
            merge,
            corpus,
            _combine_parts,
        )
    settle_meter(read)  # the core's meter state leaves it once, here
    settle_evidence(read)  # and so does its evidence
    return read
