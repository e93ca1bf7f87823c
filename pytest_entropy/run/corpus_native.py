"""The Rust core in the corpus read (``run/corpus.py``): which files it reads, how, and its
accumulators in the corpus's parts.

:func:`served_natively` says whether the core can read a file for a plan, and
:func:`read_native` reads it: into the file's part, or through the corpus's own
accumulators, which a ``CoreCarry`` hands from scan to scan. A
:class:`~pytest_entropy.run.corpus_plan.CorpusPart` holds its meter as ``state`` followed by
``native_meter`` (a ``NativeMeter`` of the core, or None) and its proposals' evidence as
``evidence`` followed by ``native_evidence`` (a ``NativeEvidence``, or the plain
:class:`ProposalEvidence` one becomes when it crosses a process). Parts combine in file
order: native accumulators merge in the core, and one is exported into the plain
accumulator before it only when a plain one follows it, so the merges keep the files'
order whatever mixes. ``read_corpus`` settles what is left once, at the end.
"""

from __future__ import annotations

from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.proposals import ProposalEvidence
from pytest_entropy.core.regex import watch_unenforced
from pytest_entropy.ingest.native_tallies import CoreCarry, NativeTallies, settled_evidence
from pytest_entropy.run.corpus_listeners import Listeners
from pytest_entropy.sources.scan import ModelCursor, scan_source

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any

    from pytest_entropy.run.corpus_plan import CorpusPart, CorpusPlan, ReplayHooks, SourceFile
    from pytest_entropy.sources.incremental import EvidenceCache

__all__ = [
    "CarrySpoiled",
    "combine_evidence",
    "combine_meters",
    "read_native",
    "served_natively",
    "settle_evidence",
    "settle_meter",
]


def _has_meter(state: MeterState) -> bool:
    return bool(state.traces or state.refs or state.models or state.task_sequences)


def settle_meter(part: Any) -> None:
    """``state`` followed by ``native_meter`` as one MeterState (the core's exported once:
    the export moves the state out of the core, freeing it as the plain data is built)."""
    if part.native_meter is not None:
        data = part.native_meter.export()
        part.native_meter = None
        part.state.merge_plain(data)


def combine_meters(first: Any, then: Any) -> None:
    """``first``'s meter followed by ``then``'s, each ``state`` then ``native_meter``: the
    native states merge in the core, and leave it only when a plain state follows one."""
    if _has_meter(then.state):
        settle_meter(first)
        first.state.merge(then.state)
    if then.native_meter is not None:
        if first.native_meter is None:
            first.native_meter = then.native_meter
        else:
            first.native_meter.merge(then.native_meter)
        then.native_meter = None


def _has_evidence(evidence: ProposalEvidence) -> bool:
    return bool(evidence.tallies or evidence.clusters or evidence.sequences)


def _plain_evidence(found: Any, trace_values: bool) -> ProposalEvidence:
    if isinstance(found, ProposalEvidence):
        return found
    return settled_evidence(found.origin, trace_values, found.export())


def settle_evidence(part: Any) -> None:
    """``evidence`` followed by ``native_evidence`` as one ProposalEvidence."""
    found = part.native_evidence
    if found is None:
        return
    part.native_evidence = None
    if isinstance(found, ProposalEvidence):
        settled = found
    else:  # the core's evidence is freed before its plain data becomes objects
        origin, data = found.origin, found.export()
        del found
        settled = settled_evidence(origin, part.evidence.trace_values, data)
    if _has_evidence(part.evidence):
        part.evidence.merge(settled)
    else:  # it becomes the part's evidence, which merges had not numbered on
        settled.origin, settled._executions = part.evidence.origin, part.evidence._executions
        part.evidence = settled


def combine_evidence(first: Any, then: Any) -> None:
    """``first``'s evidence followed by ``then``'s (as :func:`combine_meters`)."""
    if _has_evidence(then.evidence):
        settle_evidence(first)
        first.evidence.merge(then.evidence)
    found, then.native_evidence = then.native_evidence, None
    if found is None:
        return
    mine = first.native_evidence
    if mine is None and not isinstance(found, ProposalEvidence):
        first.native_evidence = found
    elif (
        mine is not None
        and not isinstance(mine, ProposalEvidence)
        and not isinstance(found, ProposalEvidence)
    ):
        mine.merge(found)
    else:
        settle_evidence(first)
        first.evidence.merge(_plain_evidence(found, first.evidence.trace_values))


def served_natively(
    plan: CorpusPlan, cache: EvidenceCache | None, hooks: ReplayHooks | None
) -> bool:
    """Whether the Rust core can read a file for ``plan``: it gathers the meter, the audited
    refs, the proposals' evidence, the pool window and the trial (a replay that is the
    trial alone); not the session records, redacted windows, other replays or a cache. It
    reads as the generation ``plan.options.metric_version`` names, as the plain path does."""
    if cache is not None or plan.records or (plan.windows and plan.redact_values):
        return False
    if hooks is None:
        return True
    return hooks.trial is not None and hooks.on_value is None and hooks.trial.counts_natively()


def _native_tallies(
    source: SourceFile,
    plan: CorpusPlan,
    part: CorpusPart,
    hooks: ReplayHooks | None,
    carry: CoreCarry | None,
) -> NativeTallies:
    """What the Rust core gathers for ``plan`` beside the meter, into ``part`` (or into the
    corpus's accumulators that ``carry`` carries)."""
    wants_evidence = plan.proposals or plan.observation_values
    return NativeTallies(
        carry=carry,
        native_meter=plan.meter,
        native_evidence=True,
        origin=source.index,
        evidence=part.evidence if wants_evidence else None,
        operations=plan.proposals,
        observation_values=plan.observation_values,
        audit_refs=part.audit_refs if plan.audit_refs else None,
        window=plan.windows,
        trial=None if hooks is None else hooks.trial,
    )


def read_native(
    source: SourceFile,
    plan: CorpusPlan,
    part: CorpusPart,
    cursor: ModelCursor | None,
    native: Any,
    hooks: ReplayHooks | None,
    carry: CoreCarry | None,
) -> tuple[bool, Listeners]:
    """One file read by the Rust core: the meter and what :func:`_native_tallies` says."""
    if carry is not None:
        carry.start()  # nothing adopted yet for this file
    tallies = _native_tallies(source, plan, part, hooks, carry)
    with watch_unenforced() as met:  # the trial's checks are built as the calls come
        readable = scan_source(
            source.location,
            diagnostics=part.diagnostics,
            meter=part.state if plan.meter or plan.file_states else None,
            options=plan.options,
            cursor=cursor,
            mentions=plan.mentions,
            native=native,
            tallies=tallies,
        )
    if not readable and carry is not None and carry.adopted:
        raise CarrySpoiled(source.location)
    if hooks is not None:
        part.patterns = met.patterns
        part.external_refs = met.refs
    part.native_meter = tallies.meter
    part.native_evidence = tallies.kept_evidence
    return readable, Listeners(hooks=hooks, window=tallies.window_summary(source.window))


class CarrySpoiled(Exception):
    """A file failed midway through a scan that carried the corpus's accumulators."""
