"""Native session lines from foreign tool calls: the one writer every foreign reader shares.

A foreign reader collects :class:`ForeignCall` records into :class:`ForeignTrace` drafts;
:class:`NativeWriter` turns each draft into the lines a Pi agent with the fabric extension
would have written (spec §1.1): a ``model_change`` line whenever the model changes, then one
``fabric_exec`` tool-result line whose ``details`` carry a V1 trace envelope and the audits.
Because the native scanner then reads those lines, a converted file and a directly measured
file pass the same guard, the same bounds and the same meter.

What goes where (``docs/formats.md``):

* trace ``args`` hold the *shape* of the recorded arguments: the same keys to the depth the
  shape signature reads, values blanked to a typed placeholder (``""``, ``0``, ``false``,
  ``null``, ``[]``, ``{}``). The meter reads nothing else from them, and a blanked tree
  always passes the guard's depth and number rules;
* audits hold the verbatim arguments (or, with ``redact``, the redacted ones), so value
  observations, replay and proposals see real values.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from pytest_entropy.core.canonical import js_stringify
from pytest_entropy.core.redact import is_secret_key
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.guard import FAILURE_STAGES, OUTCOMES, TRACE_KIND, TRACE_SIZE_BOUND

if TYPE_CHECKING:
    from pytest_entropy.ingest.base import ReadOptions

__all__ = [
    "MAX_AUDIT_BYTES",
    "MAX_TRACE_BYTES",
    "REDACTED",
    "ForeignCall",
    "ForeignTrace",
    "NativeWriter",
    "blank_args",
    "is_secret_key",
    "redact_value",
    "split_model",
]

# A trace line is cut into consecutive traces (same task key, same model) before its trace
# text would pass this many bytes, leaving room below the guard's 512 KiB bound for the
# envelope; or before its audits would pass MAX_AUDIT_BYTES, far below the scanner's
# 64 MiB line cap. One call that alone passes a bound still gets its own line: the guard
# then refuses that trace and the scanner counts it, and its audit is still harvested.
MAX_TRACE_BYTES: Final = TRACE_SIZE_BOUND - 4096
MAX_AUDIT_BYTES: Final = 32 << 20

REDACTED: Final = "[REDACTED]"

# The shape signature expands objects at depths 1 and 2 and prints ``obj`` at depth 3.
_SHAPE_DEPTH: Final = 3


@dataclass(slots=True, eq=False)
class ForeignCall:
    """One tool call as a foreign log recorded it.

    ``args`` are the verbatim arguments (a dict when they decoded to a JSON object);
    ``outcome`` starts as ``aborted`` (no result seen) until a result says otherwise;
    ``stage`` is a failure stage the log itself types (a JSON-RPC error code, a benchmark
    status code), never one read from prose.
    """

    name: str
    args: Any
    outcome: str = "aborted"
    stage: str | None = None
    call_id: str | None = None
    answered: bool = False


@dataclass(slots=True)
class ForeignTrace:
    """The calls of one trace, with its task key and the model that made them."""

    task_key: str
    model: str | None = None
    calls: list[ForeignCall] = field(default_factory=list)


def split_model(model: str) -> tuple[str, str] | None:
    """``"provider/model"`` -> ``(provider, model)`` at the first ``/``; both non-empty."""
    provider, slash, model_id = model.partition("/")
    if not slash or not provider or not model_id:
        return None
    return provider, model_id


def blank_args(args: dict[str, Any]) -> dict[str, Any]:
    """The argument shape: same keys to depth 3, every value blanked to its type.

    ``shape_signature(blank_args(a)) == shape_signature(a)`` for every JSON object ``a``.
    """
    return {key: _blank(value, 1) for key, value in args.items()}


def _blank(value: Any, depth: int) -> Any:
    t = type(value)
    if t is str:
        return ""
    if t is bool:
        return False
    if t is int or t is float:
        return 0
    if t is list:
        return []
    if t is dict:
        if depth >= _SHAPE_DEPTH:
            return {}
        return {key: _blank(item, depth + 1) for key, item in value.items()}
    return None


# ------------------------------------------------------------------------- redaction

_BASE64_MIN: Final = 128
_BASE64: Final = re.compile(r"(?:data:[^,]{0,200};base64,)?[A-Za-z0-9+/_-]+={0,2}\Z")


def _base64_like(text: str) -> bool:
    return len(text) >= _BASE64_MIN and _BASE64.match(text) is not None


def redact_value(value: Any) -> tuple[Any, int]:
    """``(copy with secrets dropped, how many values were replaced)``.

    Values under secret-like keys (:func:`is_secret_key`) and strings of at least 128
    characters that look like base64 (optionally a ``data:...;base64,`` URL) become
    ``"[REDACTED]"``; everything else is copied unchanged.
    """
    t = type(value)
    if t is str:
        return (REDACTED, 1) if _base64_like(value) else (value, 0)
    if t is dict:
        out: dict[str, Any] = {}
        total = 0
        for key, item in value.items():
            if is_secret_key(key) and item is not None:
                out[key] = REDACTED
                total += 1
            else:
                out[key], count = redact_value(item)
                total += count
        return out, total
    if t is list:
        items = []
        total = 0
        for item in value:
            copy, count = redact_value(item)
            items.append(copy)
            total += count
        return items, total
    return value, 0


# ----------------------------------------------------------------------------- writer


class NativeWriter:
    """Writes one file's foreign traces as native session lines (bytes, no newline).

    ``default_prefix`` is the format's own ref prefix (``pi.`` for Pi sessions), used when
    the options name none. With a surface, a failed call without a typed stage is
    classified by replaying its arguments: unknown ref -> ``resolve``, arguments the schema
    refuses -> ``validate``, otherwise ``invoke``. Without one it carries no stage.
    """

    __slots__ = ("_model", "_schemas", "diagnostics", "prefix", "redact")

    def __init__(
        self, options: ReadOptions, diagnostics: ScanDiagnostics, *, default_prefix: str = ""
    ) -> None:
        self.prefix = options.ref_prefix or default_prefix
        self.redact = options.redact
        self.diagnostics = diagnostics
        self._model: str | None = None
        self._schemas: dict[str, Any] | None = None
        if options.surface is not None:
            schemas: dict[str, Any] = {}
            for action in options.surface.get("actions", ()):
                if type(action) is dict and type(action.get("ref")) is str:
                    schemas[action["ref"]] = action.get("inputSchema")  # later entries win
            self._schemas = schemas

    def ref(self, name: str) -> str:
        """The ref of a foreign tool name."""
        return self.prefix + name

    def declares(self, ref: str) -> bool:
        """Whether the surface declares ``ref`` (true when there is no surface to ask)."""
        return self._schemas is None or ref in self._schemas

    def stage(self, ref: str, call: ForeignCall) -> str | None:
        """The failure stage of a failed call (spec §1.2 stages), or ``None``."""
        if call.outcome != "failed":
            return None
        if call.stage is not None:
            return call.stage
        if self._schemas is None:
            return None
        if ref not in self._schemas:
            return "resolve"
        from pytest_entropy.core.validation import (
            accepts,  # jsonschema loads only when a surface is used
        )

        return "invoke" if accepts(self._schemas[ref], call.args) else "validate"

    def lines(self, trace: ForeignTrace) -> Iterator[bytes]:
        """The native lines of one trace: a ``model_change`` line if needed, then the trace."""
        if trace.model is not None and trace.model != self._model:
            parts = split_model(trace.model)
            if parts is not None:
                self._model = trace.model
                yield js_stringify(
                    {"type": "model_change", "provider": parts[0], "modelId": parts[1]}
                ).encode("utf-8")
        self.diagnostics.foreign_calls += len(trace.calls)
        pieces = [self._pieces(sequence, call) for sequence, call in enumerate(trace.calls)]
        start = 0
        while True:
            end = self._cut(pieces, start)
            yield self._line(trace.task_key, pieces[start:end])
            if end >= len(pieces):
                return
            self.diagnostics.split_traces += 1
            start = end

    @staticmethod
    def _cut(pieces: list[tuple[bytes, bytes, str, int]], start: int) -> int:
        """Where the trace that starts at ``start`` ends: as many calls as both bounds allow,
        at least one."""
        trace_bytes = audit_bytes = 0
        end = start
        while end < len(pieces):
            operation, audit, _, _ = pieces[end]
            trace_bytes += len(operation) + 1
            audit_bytes += len(audit) + 1
            if end > start and (trace_bytes > MAX_TRACE_BYTES or audit_bytes > MAX_AUDIT_BYTES):
                break
            end += 1
        return end

    def _pieces(self, sequence: int, call: ForeignCall) -> tuple[bytes, bytes, str, int]:
        """``(operation JSON, audit JSON, outcome, redacted values)`` of one call."""
        if call.outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {call.outcome!r}")
        ref = self.ref(call.name)
        decoded = type(call.args) is dict
        operation: dict[str, Any] = {"type": "call", "sequence": sequence, "ref": ref}
        provider, dot, action = ref.partition(".")
        if dot and provider and action:
            operation["provider"] = provider
            operation["action"] = action
        operation["args"] = blank_args(call.args) if decoded else {}
        operation["outcome"] = call.outcome
        stage = self.stage(ref, call)
        if stage is not None:
            if stage not in FAILURE_STAGES:
                raise ValueError(f"unknown failure stage {stage!r}")
            operation["failureStage"] = stage
        audit: dict[str, Any] = {
            "ref": ref,
            "tool": call.name,
            "success": call.outcome == "succeeded",
        }
        redacted = 0
        value = call.args
        if self.redact:
            value, redacted = redact_value(value)
        # Arguments that are not a JSON object (an undecodable string, say) are kept as
        # rawArgs: the audit harvest skips them (and counts them), nothing invents values.
        audit["args" if decoded else "rawArgs"] = value
        return (
            js_stringify(operation).encode("utf-8"),
            js_stringify(audit).encode("utf-8"),
            call.outcome,
            redacted,
        )

    @staticmethod
    def _line(task_key: str, pieces: list[tuple[bytes, bytes, str, int]]) -> bytes:
        outcomes = {outcome for _, _, outcome, _ in pieces}
        envelope_outcome = "succeeded"
        for candidate in ("failed", "aborted", "timed_out"):
            if candidate in outcomes:
                envelope_outcome = candidate
                break
        redacted = sum(count for _, _, _, count in pieces)
        phases = _phases_bytes(task_key)
        return b"".join(
            (
                b'{"type":"message","message":{"role":"toolResult","toolName":"fabric_exec",'
                b'"details":{"trace":',
                _head_bytes(envelope_outcome)[:-1],
                b',"phases":',
                phases,
                b',"operations":[',
                b",".join(operation for operation, _, _, _ in pieces),
                b'],"counts":',
                _counts_bytes(redacted),
                b'},"audits":[',
                b",".join(audit for _, audit, _, _ in pieces),
                b'],"phases":',
                phases,
                b"}}}",
            )
        )


# The envelope's parts repeat from trace to trace (a recorder such as the MCP proxy writes a
# line per call): each is serialised once per distinct value.


@functools.lru_cache(maxsize=256)
def _phases_bytes(task_key: str) -> bytes:
    return js_stringify([task_key]).encode("utf-8")


@functools.lru_cache(maxsize=8)
def _head_bytes(outcome: str) -> bytes:
    return js_stringify({"kind": TRACE_KIND, "version": 1, "outcome": outcome}).encode("utf-8")


@functools.lru_cache(maxsize=64)
def _counts_bytes(redacted: int) -> bytes:
    counts = {
        "droppedValues": 0,
        "truncatedValues": 0,
        "redactedValues": redacted,
        "droppedOperations": 0,
    }
    return js_stringify(counts).encode("utf-8")
