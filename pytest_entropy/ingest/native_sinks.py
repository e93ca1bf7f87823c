"""What the scan kernel (``_scan_native.c``) fills itself instead of calling a listener per
line: the pending lists of the deferring listeners of ``run.deferred`` (see
:func:`kernel_sinks`) and the set of an :class:`AuditRefs`. The Python scanner calls the
listeners as usual; these only tell the kernel what the calls would do.
"""

from __future__ import annotations

from types import MethodType
from typing import Any

from pytest_entropy.core.records import AuditCall

__all__ = ["AuditRefs", "kernel_sinks"]


class AuditRefs:
    """An ``on_audit`` listener that keeps the ref of every audit call it hears in ``refs``.

    The scan kernel hands the set itself to the audit kernel (its ``refs`` argument) when
    this is the scanner's ``on_audit``, so no call is built or made per audit."""

    __slots__ = ("refs",)

    def __init__(self, refs: set[str]) -> None:
        self.refs = refs

    def __call__(self, call: AuditCall) -> None:
        self.refs.add(call.ref)


def _deferring(owner: Any, kind: str) -> tuple[Any, ...] | None:
    """``owner.kernel_sink()`` when ``owner``'s own class defines it and it is of ``kind``."""
    if "kernel_sink" not in type(owner).__dict__:
        return None
    sink = owner.kernel_sink()
    return sink if type(sink) is tuple and sink and sink[0] == kind else None


def _deferred_method(listener: Any, name: str) -> tuple[Any, tuple[Any, ...]] | None:
    """(owner, its kernel sink) when ``listener`` is the bound method ``name`` of a
    deferring evidence listener whose class defines that method itself."""
    if type(listener) is not MethodType:
        return None
    owner = listener.__self__
    sink = _deferring(owner, "evidence")
    if sink is None or listener.__func__ is not type(owner).__dict__.get(name):
        return None
    return owner, sink


def kernel_sinks(scanner: Any) -> tuple[Any, ...] | None:
    """What the scan kernel appends to itself instead of calling a deferring listener (once
    per scan; None: it calls every listener).

    A class opts in by defining ``kernel_sink()`` in its own body, which promises that
    while an instance's ``pending`` is a list, its methods only append to it and call
    ``settle()`` once it holds more than the limit:

    * ``("meter", limit)``: ``add_signed(signed, task_key, model)`` appends
      ``(signed, task_key, model)`` (run.deferred.DeferredMeter);
    * ``("evidence", limit, operations_tag, values_tag)``: ``add_signed(signed, ...)``
      appends ``(operations_tag, signed)`` and ``add_values(values)`` appends
      ``(values_tag, values)`` (run.deferred.DeferredEvidence).
    """
    meter, meter_limit = scanner.meter, 0
    sink = _deferring(meter, "meter")
    if sink is None:
        meter = None
    else:
        meter_limit = sink[1]
    signed: Any = scanner.on_signed
    found = _deferred_method(signed, "add_signed")
    values: Any = scanner.on_values
    found_values = _deferred_method(values, "add_values")
    evidence = found if found is not None else found_values
    if evidence is None:
        if meter is None:
            return None
        evidence = (None, ("evidence", 0, None, None))
    if found is None:
        signed = None
    if found_values is None:
        values = None
    elif found is not None and found_values[1] != found[1]:
        return None  # two evidence listeners of different kinds: the methods decide
    _, limit, operations_tag, values_tag = evidence[1]
    return (
        meter,
        meter_limit,
        signed,
        None if found is None else found[0],
        values,
        None if found_values is None else found_values[0],
        limit,
        operations_tag,
        values_tag,
    )
