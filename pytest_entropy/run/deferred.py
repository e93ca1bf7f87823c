"""Deferred proposal evidence: what a file's evidence would hear, kept in order and replayed.

The corpus pipeline no longer defers (issue 28: a file's part is filled and merged, on the
plain path and on the Rust core alike). What is left here is the replay that the C kernels
of the proposals' evidence and of the audit harvest (``core/_proposals_native.c``,
``ingest/_audit_native.c``) are compared against in their differential tests; it goes with
those kernels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from pytest_entropy.core.proposals import ProposalEvidence
from pytest_entropy.core.records import Trace, ValueObservation
from pytest_entropy.ingest.native import value_tallier

__all__ = [
    "DEFERRED_TRACES",
    "DeferredEvidence",
    "replay_evidence_into",
    "values_listener",
]

# How much a DeferredEvidence keeps (four entries per trace) before it settles.
DEFERRED_TRACES: Final = 4096

_TRACE, _VALUE, _OBSERVATION, _VALUES, _OPERATIONS = 0, 1, 2, 3, 4


class DeferredEvidence:
    """The same for the proposals' evidence: what the file's evidence would hear, in order
    (traces and values interleaved: their tallies share one first-seen order)."""

    __slots__ = ("evidence", "pending")

    def __init__(self, evidence: ProposalEvidence) -> None:
        self.pending: list[tuple[Any, ...]] | None = []
        self.evidence = evidence

    def _add(self, entry: tuple[Any, ...]) -> None:
        pending = self.pending
        if pending is None:
            _replay_evidence(self.evidence, [entry])
            return
        pending.append(entry)
        if len(pending) > 4 * DEFERRED_TRACES:
            self.settle()

    def kernel_sink(self) -> tuple[str, int, int, int]:
        """What lets the scan kernel append what :meth:`add_signed` and :meth:`add_values`
        would append itself (:meth:`_add`'s limit)."""
        return ("evidence", 4 * DEFERRED_TRACES, _OPERATIONS, _VALUES)

    def add_trace(self, trace: Trace) -> None:
        self._add((_TRACE, trace))

    def add_signed(
        self, operations: Sequence[Any], task_key: Any = None, model: Any = None
    ) -> None:
        """The scanner's ``on_signed``: a trace's guarded operations (the evidence reads no
        more of them than :meth:`ProposalEvidence.add_operations` does)."""
        self._add((_OPERATIONS, operations))

    def add_value(self, ref: str, key: str, value: Any) -> None:
        self._add((_VALUE, ref, key, value))

    def add_observation(self, observation: ValueObservation) -> None:
        self._add((_OBSERVATION, observation))

    def add_values(self, values: tuple[Any, ...]) -> None:
        """The values of one line's audits as one flat ``(ref, key, value, ...)`` tuple
        (``ingest.native.harvest_values``): one entry for the line, in its place among the
        traces."""
        self._add((_VALUES, values))

    def settle(self) -> None:
        if self.pending is not None:
            _replay_evidence(self.evidence, self.pending)
            self.pending = None


def values_listener(
    evidence: ProposalEvidence | DeferredEvidence,
) -> Callable[[tuple[Any, ...]], None] | None:
    """None: ``evidence.add_value`` hears every value (the C kernel that tallied a line's
    values in one call is gone)."""
    return None


def _replay_evidence(evidence: ProposalEvidence, entries: list[tuple[Any, ...]]) -> None:
    _replay_python(evidence, entries)


def _replay_python(evidence: ProposalEvidence, entries: list[tuple[Any, ...]]) -> None:
    add_trace, add_value, add_observation, add_operations = (
        evidence.add_trace,
        evidence.add_value,
        evidence.add_observation,
        evidence.add_operations,
    )
    add_values: Callable[[tuple[Any, ...]], None] | None = None
    for entry in entries:
        kind = entry[0]
        if kind == _OPERATIONS:
            add_operations(entry[1])
        elif kind == _TRACE:
            add_trace(entry[1])
        elif kind == _VALUE:
            add_value(entry[1], entry[2], entry[3])
        elif kind == _VALUES:
            if add_values is None:
                add_values = value_tallier(evidence)
            add_values(entry[1])
        else:
            add_observation(entry[1])


def _replay_one(evidence: ProposalEvidence, entry: tuple[Any, ...]) -> None:
    """One entry of :func:`_replay_evidence`'s loop (for the kernel's hand-backs)."""
    _replay_python(evidence, [entry])


def replay_evidence_into(evidence: ProposalEvidence, origin: Any, entries: list[Any]) -> None:
    """One file's deferred evidence into ``evidence``: numbered as the file's own would be."""
    evidence.origin = origin
    evidence._executions = 0
    _replay_evidence(evidence, entries)
