"""Who hears a file's records on the corpus pipeline's plain path (``run/corpus.py``).

A :class:`~pytest_entropy.run.corpus.CorpusPlan` says what to collect; here it becomes the
plain scanner's listeners for one file (a
:class:`~pytest_entropy.run.corpus.CorpusPart`, its source and the plan's replay hooks),
with the shortcuts the scanner offers when one listener alone hears a kind of record: the
guarded operations instead of Trace records, each line's values as one tuple, the window's
own tally. The Rust core (``ingest/native_scan.py``) needs none of this: it serves plans in
which only the meter listens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pytest_entropy.core.plain_record import Record, field
from pytest_entropy.core.records import ValueObservation

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, TypeAlias

__all__ = ["Listeners", "fan_out", "plain_listeners", "record_listeners"]


def fan_out(listeners: list[Callable[[Any], None]]) -> Callable[[Any], None] | None:
    """One listener that calls each of ``listeners`` in order (None for none)."""
    if not listeners:
        return None
    if len(listeners) == 1:
        return listeners[0]

    def every(item: Any) -> None:
        for listener in listeners:
            listener(item)

    return every


class Listeners(Record):
    """Who hears one file's records on the plain path (see :func:`plain_listeners`)."""

    on_trace: Callable[[Any], None] | None = None
    on_audit: Callable[[Any], None] | None = None
    on_value: Callable[[Any], None] | None = None
    on_signed: Callable[[Sequence[Any], str, str | None], None] | None = None
    on_value_fields: Callable[[str, str, Any], None] | None = None
    on_values: Callable[[tuple[Any, ...]], None] | None = None
    tally: Any = None  # the window's own tally, when it alone hears the values
    window: Any = None  # the window the Rust core summarised (a WindowSummary)
    observations: list[ValueObservation] = field(default_factory=list)
    hooks: Any = None  # the plan's ReplayHooks for this file


Listener: TypeAlias = "Callable[[Any], None]"


def record_listeners(
    plan: Any, part: Any, listening: Listeners
) -> tuple[list[Listener], list[Listener], list[Listener]]:
    """The trace, audit and value listeners a plan adds, in the order they hear a record."""
    evidence: Any = part.evidence
    traces: list[Listener] = []
    audits: list[Listener] = []
    values: list[Listener] = []
    if plan.proposals:
        traces.append(evidence.add_trace)
    if plan.audit_refs:
        refs = part.audit_refs
        audits.append(lambda call: refs.add(call.ref))
    if plan.observation_values:
        values.append(evidence.add_observation)
    if plan.windows:
        values.append(listening.observations.append)
    if plan.records:
        traces.append(part.records.traces.append)
        audits.append(part.records.audit_calls.append)
        values.append(part.records.value_observations.append)
    hooks = listening.hooks
    if hooks is not None:
        for listeners, hook in ((traces, hooks.on_trace), (audits, hooks.on_audit)):
            if hook is not None:
                listeners.append(hook)
        if hooks.on_value is not None:
            values.append(hooks.on_value)
    return traces, audits, values


def plain_listeners(source: Any, plan: Any, part: Any, cache: Any, hooks: Any = None) -> Listeners:
    """The plain path's listeners of one file, with the shortcuts the plain scanner offers
    when one listener alone hears a kind of record (no record objects are built)."""
    # The plan's replay hooks for this file (the caller started them: ``hooks``).
    listening = Listeners(hooks=hooks)
    traces, audits, values = record_listeners(plan, part, listening)
    listening.on_trace = fan_out(traces)
    listening.on_audit = fan_out(audits)
    listening.on_value = fan_out(values)
    hooks = listening.hooks
    if (
        hooks is not None
        and hooks.on_signed is not None
        and len(traces) == 1
        and traces[0] is hooks.on_trace
    ):
        listening.on_signed = hooks.on_signed  # the scanner hands over its guarded operations
    elif plan.proposals and len(traces) == 1:
        # The evidence alone listens to traces: it reads the guarded operations themselves.
        listening.on_signed = part.evidence.add_signed
    if len(values) == 1:
        if plan.observation_values:
            # The proposals' tallies alone hear values: their fields, no record built.
            listening.on_value_fields = part.evidence.add_value
        elif plan.windows and not plan.redact_values and cache is None:
            from pytest_entropy.core.pool_window import POOL_MAX_VALUE_BYTES, window_tally

            listening.tally = window_tally(True, POOL_MAX_VALUE_BYTES)
            listening.on_value_fields = listening.tally.add
    return listening
