"""What the Rust core's scan gathers beside the meter, and where its finished data goes.

A :class:`NativeTallies` says which of the plain scanner's listeners the Rust core stands in
for on one file: the refs with audit calls (``audit_refs``), the proposals' evidence
(``evidence``: the traces' operations when ``operations``, the audits' values when
``observation_values``), the pool window (``window``) and the trial (``trial``). It asks the
core's ``TraceScanner`` for them before the first chunk (:meth:`ask`) and folds what it
gathered into the Python accumulators at the end (:meth:`take`), which then merge across
files and engines exactly as the plain path's do; the meter's state may stay in the core
(``native_meter``: a ``NativeMeter``, merged in the core across files). Lines of another
session format are read by the plain scanner with the same listeners (:meth:`listeners`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pytest_entropy.core.plain_record import Record
from pytest_entropy.core.proposals import ProposalEvidence, _Tally
from pytest_entropy.core.records import AuditCall
from pytest_entropy.ingest.diagnostics import ScanDiagnostics

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:  # the trial's module is imported by the commands that replay, not by measure
    from typing import Any

    from pytest_entropy.core.pool import WindowSummary  # nor the pool's (measure writes none)
    from pytest_entropy.core.pool_window import WindowTally
    from pytest_entropy.core.trial import TrialTally

__all__ = ["CoreCarry", "NativeTallies", "settled_evidence"]


def settled_evidence(origin: int, trace_values: bool, exported: Sequence[Any]) -> ProposalEvidence:
    """A ``NativeEvidence`` (its first file ``origin``, its ``export()``) as plain evidence,
    what one crosses a process boundary as: the evidence the plain path's files would have
    merged to, each execution ``(file, number)`` as the plain path numbers it."""
    executions, tallies, clusters, sequences = exported
    evidence = ProposalEvidence(trace_values=trace_values, origin=origin)
    evidence._executions = executions
    for ref, key, total, overflowed, counts in tallies:
        tally = _Tally(ref, key)
        tally.total = total
        tally.overflowed = overflowed
        tally.counts = {identity: [value, count] for identity, value, count in counts}
        evidence.tallies[(ref, key)] = tally
    for ref, rows in clusters:
        evidence.clusters[ref] = dict(rows)
    for identity, window, occurrences, numbers in sequences:
        ids = {(number >> 32, number & 0xFFFFFFFF) for number in numbers}
        evidence.sequences[identity] = [window, occurrences, ids]
    return evidence


class CoreCarry:
    """A corpus's accumulators in the core (``holder.native_meter``, a ``NativeMeter``, and
    ``holder.native_evidence``, a ``NativeEvidence``) carried through each file's scan
    instead of merged after it: the same single pass a merge gives, without a state built,
    merged and dropped per file. Only where each file is read after the files before it
    have merged into ``holder`` (an in-process read, ``run/corpus.py``). ``adopted``: the
    running scan holds them, so a file that then fails midway has spoiled them."""

    __slots__ = ("evidence", "holder", "meter")

    def __init__(self, holder: Any) -> None:
        self.holder = holder
        self.meter = False
        self.evidence = False

    @property
    def adopted(self) -> bool:
        return self.meter or self.evidence

    def start(self) -> None:
        """A new file: nothing of it adopted yet."""
        self.meter = False
        self.evidence = False

    def adopt(self, scanner: Any, tallies: NativeTallies) -> None:
        """Hand ``scanner`` (before its first chunk) what the holder has of what
        ``tallies`` keep in the core."""
        meter = self.holder.native_meter if tallies.native_meter else None
        evidence = self.holder.native_evidence if tallies.gathers_evidence else None
        if isinstance(evidence, ProposalEvidence) or (
            evidence is not None
            and tallies.evidence is not None
            and evidence.trace_values != tallies.evidence.trace_values
        ):
            evidence = None  # settled into plain evidence, or tallied otherwise: not carried
        self.meter = meter is not None
        self.evidence = evidence is not None
        if self.adopted:
            scanner.adopt(meter=meter, evidence=evidence, origin=tallies.origin)


class NativeTallies(Record):
    """The listeners the Rust core stands in for on one file (see the module's comment)."""

    evidence: ProposalEvidence | None = None
    operations: bool = False
    observation_values: bool = False
    audit_refs: set[str] | None = None
    window: bool = False
    trial: TrialTally | None = None
    # The meter's state stays in the core (a ``NativeMeter``, :meth:`keep_meter`) instead of
    # becoming a MeterState: the corpus merges it in the core and exports it once.
    native_meter: bool = False
    meter: Any = None
    # Likewise the proposals' evidence (a ``NativeEvidence`` of the file numbered
    # ``origin``, in ``kept_evidence``) instead of folding into ``evidence``.
    native_evidence: bool = False
    origin: int = 0
    kept_evidence: Any = None
    # The file's window as the core summarised it (:meth:`take`), or the plain listeners'
    # tally of it (:meth:`listeners`).
    _window: tuple[Any, ...] | None = None
    _plain_window: WindowTally | None = None
    # The corpus's core accumulators, carried through this file's scan (``CoreCarry``).
    carry: CoreCarry | None = None

    @property
    def gathers_evidence(self) -> bool:
        """Whether the core's scanner gathers evidence it keeps (``kept_evidence``)."""
        return (
            self.native_evidence
            and self.evidence is not None
            and (self.operations or self.observation_values)
        )

    def ask(self, scanner: Any, native: Any) -> None:
        """Tell the core's scanner what to gather (before its first chunk); ``native`` is
        the core."""
        from pytest_entropy.core.pool_window import POOL_MAX_VALUE_BYTES

        trial = None if self.trial is None else self.trial.native_verdicts(native)
        scanner.gather(
            audit_refs=self.audit_refs is not None,
            operations=self.evidence is not None and self.operations,
            observation_values=self.evidence is not None and self.observation_values,
            trace_values=self.evidence is not None and self.evidence.trace_values,
            window=self.window,
            max_value_bytes=POOL_MAX_VALUE_BYTES,
            trial=trial,
        )
        if self.carry is not None:
            self.carry.adopt(scanner, self)

    def take(self, scanner: Any, diagnostics: ScanDiagnostics) -> None:
        """Fold what the scanner gathered into the accumulators."""
        if self.carry is not None and self.carry.evidence:
            scanner.take_evidence_into(self.carry.holder.native_evidence)
        elif self.native_evidence and self.evidence is not None:
            self.kept_evidence = scanner.take_evidence(self.origin)
        refs, evidence, window, trial, audit_calls, skipped_audits = scanner.gathered()
        diagnostics.audit_calls += audit_calls
        diagnostics.skipped_audits += skipped_audits
        if self.audit_refs is not None and refs is not None:
            self.audit_refs.update(refs)
        if self.evidence is not None and evidence is not None:
            self.evidence.add_native(evidence)
        if window is not None:
            self._window = window
        if self.trial is not None and trial is not None:
            self.trial.counts.add_native(trial)

    def keep_meter_of(self, scanner: Any) -> None:
        """The scan's meter state: back into the carried ``NativeMeter``, or kept."""
        if self.carry is not None and self.carry.meter:
            scanner.take_meter_into(self.carry.holder.native_meter)
        else:
            self.keep_meter(scanner.take_meter())

    def keep_meter(self, meter: Any) -> None:
        """A scan's ``NativeMeter``: kept, or merged after the one kept."""
        if self.meter is None:
            self.meter = meter
        else:
            self.meter.merge(meter)

    def window_summary(self, file: str) -> WindowSummary | None:
        """The window of the file, named ``file`` (``None``: not gathered)."""
        if self._plain_window is not None:
            from pytest_entropy.core.pool import tally_summary

            return tally_summary(file, self._plain_window)
        if self._window is not None:
            from pytest_entropy.core.pool import native_window_summary

            return native_window_summary(file, self._window)
        return None

    def listeners(self) -> dict[str, Any]:
        """The plain scanner's listeners doing the same (for lines of a foreign format)."""
        signed: list[Callable[[Sequence[Any], str, str | None], None]] = []
        audits: list[Callable[[AuditCall], None]] = []
        fields: list[Callable[[str, str, Any], None]] = []
        evidence = self.evidence
        if evidence is not None and self.operations:
            signed.append(evidence.add_signed)
        if evidence is not None and self.observation_values:
            fields.append(evidence.add_value)
        if self.audit_refs is not None:
            refs = self.audit_refs
            audits.append(lambda call: refs.add(call.ref))
        if self.window:
            from pytest_entropy.core.pool_window import POOL_MAX_VALUE_BYTES, WindowTally

            self._plain_window = WindowTally(True, POOL_MAX_VALUE_BYTES)
            fields.append(self._plain_window.add)
        if self.trial is not None:
            signed.append(self.trial.add_signed)
            audits.append(self.trial.add_audit)
        return {
            "on_signed": _every(signed),
            "on_audit": _every(audits),
            "on_value_fields": _every(fields),
        }


def _every(listeners: list[Any]) -> Any:
    if not listeners:
        return None
    if len(listeners) == 1:
        return listeners[0]

    def every(*args: Any) -> None:
        for listener in listeners:
            listener(*args)

    return every
