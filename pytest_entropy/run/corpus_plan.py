"""The records a corpus read is made of (``run/corpus.py`` reads with them).

A :class:`SourceFile` per session file (:func:`source_files`), a :class:`CorpusPlan` of
what to collect from each (:func:`measure_plan`, :func:`records_plan`), the
:class:`Replay` a plan may add and the :class:`ReplayHooks` it gives a file, and the
mergeable :class:`CorpusPart` each file contributes, folded into one :class:`CorpusRead`.
They sit below both ``run/corpus.py`` and ``run/corpus_native.py``, which both use them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence

from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.plain_record import Record, field
from pytest_entropy.core.proposals import ProposalEvidence
from pytest_entropy.core.records import AuditCall, Trace, ValueObservation
from pytest_entropy.core.typing_lite import Protocol
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.native import SessionEvidence
from pytest_entropy.sources.urls import is_url, url_stamp

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    from pytest_entropy.core.pool import PoolMerge, PoolMerger, WindowSummary

    Stamp: TypeAlias = "tuple[Any, ...]"

__all__ = [
    "CorpusPart",
    "CorpusPlan",
    "CorpusRead",
    "Replay",
    "ReplayHooks",
    "SourceFile",
    "measure_plan",
    "records_plan",
    "source_files",
    "source_stamp",
]


class SourceFile(Record, frozen=True):
    """One session file: its position, what a worker opens, the pool's name for it and, in
    a second pass, the stamp the first pass saw."""

    index: int
    location: str
    window: str
    stamp: Stamp | None = None
    # Set for a file a directory walk passed over (``surface``, ``companion``,
    # ``unrecognized``): it is counted in the diagnostics, never read as a session.
    skip: str | None = None


def source_files(
    sources: Iterable[str | os.PathLike[str]],
    skipped: Iterable[tuple[str | os.PathLike[str], str]] = (),
) -> list[SourceFile]:
    """Expanded session files (paths or URLs) as map items. Local paths are named by their
    absolute path in the pool (as the one-pass reader names them), URLs as given.
    ``skipped`` (a :class:`~pytest_entropy.sources.locate.SessionListing`'s) follow, to be
    counted, not read."""
    out = []
    for index, source in enumerate(sources):
        location = os.fspath(source)
        window = location if is_url(location) else os.path.abspath(location)
        out.append(SourceFile(index, location, window))
    for path, why in skipped:
        location = os.fspath(path)
        out.append(SourceFile(len(out), location, os.path.abspath(location), skip=why))
    return out


def source_stamp(location: str, options: ReadOptions | None = None) -> Stamp | None:
    """What must not change between the two compile passes (``None``: cannot stat)."""
    if is_url(location):
        return url_stamp(location, options.storage_options if options is not None else None)
    try:
        info = os.stat(location)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


# ------------------------------------------------------------------------------ plan


class ReplayHooks(Record):
    """One file's listeners of a :class:`Replay` and how to get what they found."""

    on_trace: Callable[[Trace], None] | None
    on_audit: Callable[[AuditCall], None] | None
    on_value: Callable[[ValueObservation], None] | None
    result: Callable[[], Any]
    # ``on_trace`` as ``on_signed(guarded operations, task key, model)``, without the Trace:
    # a scanner calls it instead when the replay is the only one listening to traces.
    on_signed: Callable[[Sequence[Any], str, str | None], None] | None = None
    # The trial tally these hooks feed (``TrialTally``), when the Rust core may count into
    # it instead (``TrialTally.counts_natively``): the trial's replay sets it.
    trial: Any = None


class Replay(Protocol):
    """A computation a plan adds to the read (the trial, the compile's replay): it travels
    to the workers with the plan (so it must pickle) and hears every record of a file;
    what it found must merge in order (``a.merge(b)`` is ``a``'s files followed by
    ``b``'s, returning ``a``)."""

    def start(self, source: SourceFile) -> ReplayHooks: ...


class CorpusPlan(Record, frozen=True):
    """What :func:`read_corpus` collects from each source.

    ``meter``: the merged meter state; ``file_states``: instead, each file's own state
    (the ``status`` view measures every file alone). ``proposals``: the proposals' evidence
    from traces, with ``trace_values`` the value corpus from trace arguments, with
    ``observation_values`` from the audits' observations. ``audit_refs``: the refs that
    have audit calls. ``windows``: one observation window per file, merged into the pool.
    ``stamps``: what identifies each readable file's version, for a second pass;
    ``check_stamps``: a second pass, where a file whose stamp differs from its source's
    counts as changed. ``records``: the session records themselves (traces, observations,
    audit calls). ``replay``: a further computation over every file. ``continuous``: one
    model cursor across the files instead of one per file (spec §12.1; in this process
    only). Audits are harvested, and counted in the diagnostics, only when something here
    listens to them. ``mentions``: only trace lines that may mention one of these quoted
    strings matter (a replay of a few refs); the others are skipped unread, so the
    diagnostics of such a read undercount.
    """

    options: ReadOptions = field(default_factory=ReadOptions)
    meter: bool = True
    file_states: bool = False
    proposals: bool = True
    trace_values: bool = False
    observation_values: bool = False
    audit_refs: bool = True
    windows: bool = False
    stamps: bool = False
    check_stamps: bool = False
    records: bool = False
    replay: Replay | None = None
    continuous: bool = False
    redact_values: bool = False  # the windows' values redacted before summarising (opt-in)
    mentions: tuple[bytes, ...] | None = None

    def __post_init__(self) -> None:
        if self.meter and self.file_states:
            raise ValueError("a plan collects the merged meter state or each file's, not both")


def measure_plan(options: ReadOptions | None = None) -> CorpusPlan:
    """The plan of a measurement: the merged meter state and nothing else."""
    return CorpusPlan(options or ReadOptions(), proposals=False, audit_refs=False)


def records_plan(options: ReadOptions | None = None, **more: Any) -> CorpusPlan:
    """The plan that keeps the session records, and ``more`` of :class:`CorpusPlan`."""
    settings: dict[str, Any] = {"meter": False, "proposals": False, "audit_refs": False}
    settings.update(more)
    return CorpusPlan(options or ReadOptions(), records=True, **settings)


# ------------------------------------------------------------------------------ parts


class CorpusPart(Record):
    """What one file, or a run of consecutive files, contributed (plain, picklable data)."""

    state: MeterState = field(default_factory=lambda: MeterState(retain_terms=True))
    evidence: ProposalEvidence = field(default_factory=ProposalEvidence)
    audit_refs: set[str] = field(default_factory=set)
    windows: list[WindowSummary] = field(default_factory=list)
    readable: list[tuple[SourceFile, Stamp | None]] = field(default_factory=list)
    files: list[tuple[SourceFile, MeterState | None]] = field(default_factory=list)
    unreadable: list[SourceFile] = field(default_factory=list)
    records: SessionEvidence = field(default_factory=SessionEvidence)
    replayed: Any = None
    patterns: set[str] = field(default_factory=set)
    external_refs: set[str] = field(default_factory=set)
    changed: list[str] = field(default_factory=list)
    diagnostics: ScanDiagnostics = field(default_factory=ScanDiagnostics)
    # The Rust core's meter state of the files that follow ``state``'s (a ``NativeMeter``,
    # which merges in the core and pickles as bytes), or None: the part's meter is
    # ``state`` followed by it (``run/corpus_native.py``).
    native_meter: Any = None
    # The same for the proposals' evidence: ``evidence`` followed by this (a
    # ``NativeEvidence``, or the ProposalEvidence one becomes when it is unpickled).
    native_evidence: Any = None


class CorpusRead(CorpusPart):
    """A whole corpus, merged in source order on the client: the parts folded into one,
    except that the windows merge into ``pool`` as they arrive instead of being kept.

    ``state`` drops churn terms (it is only ever the left-hand side of a merge): finalize
    it once. ``pool`` is set when the plan collects windows, ``replayed`` holds what the
    plan's replay found. ``readable`` lists the files that could be read (with their
    stamps) and ``unreadable`` those that could not, ``files`` every file with its own
    state (``None``: unreadable) when the plan asks for ``file_states``, ``changed`` the
    files a second pass found changed.
    """

    pool: PoolMerger | None = None

    def merged_pool(self) -> PoolMerge:
        """The pool with every readable file's window merged in (the plan's ``windows``)."""
        if self.pool is None:
            raise ValueError("the plan did not collect observation windows")
        return self.pool.result()
