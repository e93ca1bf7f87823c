"""The native format: session JSONL with ``FabricExecutionTraceV1`` envelopes (spec §1.1-§1.5).

:class:`SessionScanner` consumes raw lines and produces the session evidence: meter traces
stamped with the current model, audit calls and value observations. It is the single place
that decides what a line means; every skipped line is counted in :class:`ScanDiagnostics`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

from pytest_entropy.core.jscompat import js_own_keys
from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.plain_record import Record, field
from pytest_entropy.core.proposals import ProposalEvidence
from pytest_entropy.core.records import ENTROPY_METRIC_VERSION_V3 as METRIC_VERSION_V3
from pytest_entropy.core.records import (
    AuditCall,
    Operation,
    Trace,
    ValueObservation,
    check_metric_version,
)
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.guard import TRACE_KIND, SignedOperation, guard_signed
from pytest_entropy.ingest.jsonparse import JSONParseError, parse_json_bytes, parse_json_text
from pytest_entropy.ingest.lines import DEFAULT_LINE_CAP, OVERSIZED, LineRead, iter_line_batches

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import IO, Any, Final

_TRACE_MARK: Final = TRACE_KIND.encode()
_MODEL_CHANGE_MARK: Final = b'"type":"model_change"'
_ASSISTANT_MARK: Final = b'"role":"assistant"'


# ------------------------------------------------------------------------ extraction


def model_from_record(record: dict[str, Any]) -> str | None:
    """The model a ``model_change`` record or an assistant message announces (spec §1.1)."""
    if record.get("type") == "model_change":
        provider = record.get("provider")
        model_id = record.get("modelId")
        if type(provider) is str and provider and type(model_id) is str and model_id:
            return provider + "/" + model_id
        # A model_change record never falls back to a message it might also carry.
        return None
    message = record.get("message")
    if type(message) is dict and message.get("role") == "assistant":
        provider = message.get("provider")
        model = message.get("model")
        if type(provider) is str and provider and type(model) is str and model:
            return provider + "/" + model
    return None


def audit_records(
    audits: Any,
    on_call: Callable[[AuditCall], None] | None,
    on_value: Callable[[ValueObservation], None] | None,
    on_value_fields: Callable[[str, str, Any], None] | None = None,
    refs: set[str] | None = None,
) -> tuple[int, int]:
    """Harvest audit calls and value observations (spec §1.4); returns (kept, skipped).

    ``on_value_fields(ref, key, value)``, when given, hears each observation instead of
    ``on_value`` without one being built (the proposals' tallies need only the fields).
    ``refs`` gets the ref of every kept call added (what the audited-refs listener
    keeps), before ``on_call`` hears it."""
    if type(audits) is not list:
        return 0, 0
    kept = skipped = 0
    for record in audits:
        if type(record) is not dict:
            skipped += 1
            continue
        ref = record.get("ref")
        args = record.get("args")
        if type(ref) is not str or not ref or type(args) is not dict:
            skipped += 1
            continue
        kept += 1
        if refs is not None:
            refs.add(ref)
        if on_call is not None:
            on_call(tuple.__new__(AuditCall, (ref, args)))
        if on_value_fields is not None:
            for key in js_own_keys(args):
                value = args[key]
                t = type(value)
                if t is str or t is int or t is float or t is bool:
                    on_value_fields(ref, key, value)
        elif on_value is not None:
            for key in js_own_keys(args):
                value = args[key]
                t = type(value)
                if t is str or t is int or t is float or t is bool:
                    on_value(ValueObservation(ref, key, value))
    return kept, skipped


def harvest_values(
    audits: Any, on_call: Callable[[AuditCall], None] | None, refs: set[str] | None = None
) -> tuple[int, int, tuple[Any, ...] | None]:
    """``audit_records(audits, on_call, ...)`` with every value it would hand to
    ``on_value_fields`` gathered, in order, into one flat tuple ``(ref, key, value, ref, key,
    value, ...)``; None when there is none. Returns (kept, skipped, values)."""
    found: list[Any] = []

    def heard(ref: str, key: str, value: Any) -> None:
        found.extend((ref, key, value))

    kept, skipped = audit_records(audits, on_call, None, heard, refs)
    return kept, skipped, tuple(found) if found else None


def tally_values(evidence: ProposalEvidence, values: tuple[Any, ...]) -> None:
    """``evidence.add_value`` for every (ref, key, value) triple of a :func:`harvest_values`
    tuple, in order."""
    add_value = evidence.add_value
    for at in range(0, len(values), 3):
        add_value(values[at], values[at + 1], values[at + 2])


def value_tallier(evidence: ProposalEvidence) -> Callable[[tuple[Any, ...]], None]:
    """:func:`tally_values` for ``evidence``: a scanner's ``on_values``."""
    return functools.partial(tally_values, evidence)


class ScanRecords(Record):
    """One scan's ordered outputs (spec §1.1): traces, value observations, audit calls."""

    traces: list[Trace] = field(default_factory=list)
    value_observations: list[ValueObservation] = field(default_factory=list)
    audit_calls: list[AuditCall] = field(default_factory=list)


# The first name of ScanRecords (kept: tests and users import it).
SessionEvidence = ScanRecords


def _may_mention(raw: bytes, mentions: tuple[bytes, ...]) -> bool:
    """Whether a line may hold one of the quoted strings ``mentions``. A line with no
    backslash writes every string literally between quotes, so it holds none of them unless
    one occurs in its bytes; a line with an escape is always read."""
    if b"\\" in raw:
        return True
    for mention in mentions:  # noqa: SIM110 (the loop is faster)
        if mention in raw:
            return True
    return False


class SessionScanner:
    """Line-by-line session scanner with its own model cursor (spec §1.1).

    ``on_trace`` receives every guarded trace as a :class:`Trace`; ``meter`` accumulates it
    directly with the signatures the guard computed. Audits are harvested
    only when ``on_audit`` or ``on_value`` is given (measurement needs neither, so it does
    not pay for them). ``mentions`` (quoted UTF-8 strings, such as ``b'"ref"'``) lets
    :meth:`scan_stream` skip, unread, every trace line that cannot contain one of them: for
    a reader that only cares about calls of a few refs (the compile's replay).
    ``accelerate`` is accepted and ignored: there is one plain path (issue 28; the Rust
    core, ``ingest/native_scan.py``, is the other implementation).
    ``on_signed(signed, task_key, model)``, when given, hears each guarded trace in place
    of ``on_trace``: its operations as the guard signed them (``(ref, args, outcome,
    failure stage, signature)``), no :class:`Trace` built.
    ``on_values``, when given, hears each line's values at once, as one flat
    :func:`harvest_values` tuple, in place of ``on_value`` and ``on_value_fields``: a
    :func:`value_tallier` then tallies them in one call.

    ``metric_version=3`` reads as metric v3 does (``ingest/model_lines.py``).
    """

    __slots__ = (
        "_model_line_v3",
        "_want_audits",
        "current_model",
        "diagnostics",
        "line_number",
        "mentions",
        "meter",
        "metric_version",
        "name",
        "on_audit",
        "on_signed",
        "on_trace",
        "on_value",
        "on_value_fields",
        "on_values",
    )

    def __init__(
        self,
        on_trace: Callable[[Trace], None] | None = None,
        *,
        meter: MeterState | None = None,
        on_audit: Callable[[AuditCall], None] | None = None,
        on_value: Callable[[ValueObservation], None] | None = None,
        diagnostics: ScanDiagnostics | None = None,
        name: str = "<session>",
        current_model: str | None = None,
        accelerate: bool = True,
        on_value_fields: Callable[[str, str, Any], None] | None = None,
        mentions: tuple[bytes, ...] | None = None,
        on_values: Callable[[tuple[Any, ...]], None] | None = None,
        on_signed: Callable[[list[SignedOperation], str, str | None], None] | None = None,
        metric_version: int = 2,
    ) -> None:
        self.metric_version = check_metric_version(metric_version)
        # v3's model-line test, loaded by a v3 scanner only (v2 runs never import it).
        self._model_line_v3: Callable[[bytes], bool] | None = None
        if self.metric_version == METRIC_VERSION_V3:
            from pytest_entropy.ingest.model_lines import is_model_line_v3

            self._model_line_v3 = is_model_line_v3
        self.on_trace = on_trace
        self.on_signed = on_signed
        self.mentions = mentions
        self.meter = meter
        self.on_audit = on_audit
        self.on_value = on_value
        self.on_value_fields = on_value_fields
        self.on_values = on_values
        self._want_audits = (
            on_audit is not None
            or on_value is not None
            or on_value_fields is not None
            or on_values is not None
        )
        self.diagnostics = diagnostics if diagnostics is not None else ScanDiagnostics()
        self.name = name
        self.current_model = current_model
        self.line_number = 0

    def feed_lines(self, lines: Iterable[bytes | str]) -> None:
        for line in lines:
            self.feed(line)

    def scan_stream(
        self,
        stream: IO[bytes],
        *,
        line_cap: int = DEFAULT_LINE_CAP,
        info: LineRead | None = None,
    ) -> None:
        """Scan a binary stream to its end: :meth:`feed` for every line, in a tight loop."""
        diagnostics = self.diagnostics
        trace_mark, change_mark, assistant_mark = _TRACE_MARK, _MODEL_CHANGE_MARK, _ASSISTANT_MARK
        mentions = self.mentions
        select = None
        if mentions is not None:  # the mention scanner loads when a run asks for it
            from pytest_entropy.ingest.mentions import mention_lines

            select = mention_lines(mentions, _may_mention)
        v3_model_line = self._model_line_v3
        number = self.line_number
        counted = empty = ignored = model_lines = trace_lines = 0
        try:
            for batch in iter_line_batches(stream, line_cap=line_cap, info=info):
                counted += len(batch)
                wanted = None if select is None else select(batch)
                first = number
                for raw in batch:
                    number += 1
                    if trace_mark in raw:
                        trace_lines += 1
                        self.line_number = number
                        if wanted is not None and number - first - 1 not in wanted:
                            continue
                        self._trace_line(raw, None)
                    elif not raw:
                        if raw is OVERSIZED:
                            diagnostics.oversized_lines += 1
                            diagnostics.note(f"{self.name}:{number}", "line longer than the cap")
                        else:
                            empty += 1
                    elif (
                        (change_mark in raw or assistant_mark in raw)
                        if v3_model_line is None
                        else v3_model_line(raw)
                    ):
                        model_lines += 1
                        self.line_number = number
                        self._model_line(raw, None)
                    else:
                        ignored += 1
        finally:
            self.line_number = number
            diagnostics.lines += counted
            diagnostics.empty_lines += empty
            diagnostics.ignored_lines += ignored
            diagnostics.model_lines += model_lines
            diagnostics.trace_lines += trace_lines

    def feed(self, line: bytes | str) -> None:
        """Process one line (without its trailing ``\\n``)."""
        self.line_number += 1
        diagnostics = self.diagnostics
        diagnostics.lines += 1
        if line is OVERSIZED:
            diagnostics.oversized_lines += 1
            diagnostics.note(f"{self.name}:{self.line_number}", "line longer than the cap")
            return
        text: str | None = None
        if type(line) is bytes:
            raw = line
        elif isinstance(line, str):
            try:
                raw = line.encode("utf-8")
            except UnicodeEncodeError:
                # In-memory text can hold lone surrogates, which no UTF-8 file can; parse the
                # text itself so they survive as JavaScript would keep them.
                raw = line.encode("utf-8", "surrogatepass")
                text = line
        else:
            raw = bytes(line)
        if not raw:
            diagnostics.empty_lines += 1
            return
        if _TRACE_MARK in raw:
            diagnostics.trace_lines += 1
            self._trace_line(raw, text)
        elif (
            _MODEL_CHANGE_MARK in raw or _ASSISTANT_MARK in raw
            if self._model_line_v3 is None
            else self._model_line_v3(raw)
        ):
            diagnostics.model_lines += 1
            self._model_line(raw, text)
        else:
            diagnostics.ignored_lines += 1

    def _model_line(self, raw: bytes, text: str | None) -> None:
        record = self._parse(raw, text)
        if record is not None:
            model = model_from_record(record[0])
            if model is not None:
                self.current_model = model

    def _parse(self, raw: bytes, text: str | None) -> tuple[dict[str, Any], bool] | None:
        diagnostics = self.diagnostics
        try:
            if text is None:
                value, fast = parse_json_bytes(raw)
            else:
                value, fast = parse_json_text(text), False
        except JSONParseError as error:
            diagnostics.malformed_lines += 1
            diagnostics.note(f"{self.name}:{self.line_number}", f"malformed JSON ({error})")
            return None
        if not fast:
            diagnostics.fallback_parsed_lines += 1
        if type(value) is not dict:
            diagnostics.non_object_lines += 1
            diagnostics.note(f"{self.name}:{self.line_number}", "line is not a JSON object")
            return None
        return value, fast

    def _trace_line(self, raw: bytes, text: str | None) -> None:
        parsed = self._parse(raw, text)
        if parsed is None:
            return
        record, fast = parsed
        diagnostics = self.diagnostics
        v3 = self.metric_version == METRIC_VERSION_V3
        if v3:
            # v3 moves the cursor on every parsed line, a trace line included.
            model = model_from_record(record)
            if model is not None:
                self.current_model = model
        details = record.get("details")
        if type(details) is not dict:
            message = record.get("message")
            details = message.get("details") if type(message) is dict else None
            if type(details) is not dict:
                diagnostics.lines_without_details += 1
                return
        guarded = False
        if "trace" in details:
            signed, reason = guard_signed(
                details["trace"], len(raw) if fast else None, metric_version=self.metric_version
            )
            if reason:
                diagnostics.reject(reason, f"{self.name}:{self.line_number}")
            else:
                guarded = True
                phases = details["trace"]["phases"]
                self._emit(signed, phases[0] if phases else "(none)")
        else:
            diagnostics.lines_without_trace += 1
        # v2 harvests a line's audits whatever its trace; v3 only those of a guarded trace.
        if self._want_audits and (guarded or not v3):
            self._harvest(details.get("audits"))

    def _emit(self, signed: list[SignedOperation], task_key: str) -> None:
        self.diagnostics.traces += 1
        if self.meter is not None:
            self.meter.add_signed(signed, task_key, self.current_model)
        if self.on_signed is not None:
            self.on_signed(signed, task_key, self.current_model)
        elif self.on_trace is not None:
            operations = tuple(tuple.__new__(Operation, op[:4]) for op in signed)
            self.on_trace(tuple.__new__(Trace, (operations, task_key, self.current_model)))

    def _harvest(self, audits: Any) -> None:
        if self.on_values is not None:
            kept, skipped, values = harvest_values(audits, self.on_audit)
            if values is not None:
                self.on_values(values)
        else:
            kept, skipped = audit_records(
                audits, self.on_audit, self.on_value, self.on_value_fields
            )
        self.diagnostics.audit_calls += kept
        self.diagnostics.skipped_audits += skipped


def scan_lines(
    lines: Iterable[bytes | str],
    *,
    current_model: str | None = None,
    diagnostics: ScanDiagnostics | None = None,
    name: str = "<session>",
    metric_version: int = 2,
) -> ScanRecords:
    """One scan over ``lines``: the scan records (traces, observations, audit calls)."""
    evidence = ScanRecords()
    scanner = SessionScanner(
        evidence.traces.append,
        on_audit=evidence.audit_calls.append,
        on_value=evidence.value_observations.append,
        diagnostics=diagnostics,
        name=name,
        current_model=current_model,
        metric_version=metric_version,
    )
    scanner.feed_lines(lines)
    return evidence
