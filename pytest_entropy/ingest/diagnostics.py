"""The native format: session JSONL with ``FabricExecutionTraceV1`` envelopes (spec §1.1-§1.5).

:class:`SessionScanner` consumes raw lines and produces the session evidence: meter traces
stamped with the current model, audit calls and value observations. It is the single place
that decides what a line means; every skipped line is counted in :class:`ScanDiagnostics`.
"""

from __future__ import annotations

from pytest_entropy.core.plain_record import Record, field, field_names

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, Final

# ------------------------------------------------------------------------- diagnostics


class ScanDiagnostics(Record):
    """Counts of everything a scan saw; skipped lines are counted here, never lost.

    ``samples`` keeps the first few problems as ``file:line: problem`` for humans.
    """

    files: int = 0
    unreadable_files: int = 0
    # Of the unreadable files, those a compressed stream inflated beyond --max-inflated-bytes.
    oversized_files: int = 0
    lines: int = 0
    empty_lines: int = 0
    ignored_lines: int = 0
    model_lines: int = 0
    trace_lines: int = 0
    oversized_lines: int = 0
    malformed_lines: int = 0
    non_object_lines: int = 0
    lines_without_details: int = 0
    lines_without_trace: int = 0
    fallback_parsed_lines: int = 0
    traces: int = 0
    rejected_traces: int = 0
    rejection_reasons: dict[str, int] = field(default_factory=dict)
    audit_calls: int = 0
    skipped_audits: int = 0
    # Foreign formats (docs/formats.md): what the readers saw before native lines existed.
    foreign_records: int = 0
    foreign_calls: int = 0
    concatenated_lines: int = 0
    unknown_records: int = 0
    unmatched_results: int = 0
    unanswered_calls: int = 0
    duplicate_records: int = 0
    # Messages a conversation's own rewind took back (Gemini CLI's ``$rewindTo``).
    rewound_records: int = 0
    undecodable_arguments: int = 0
    unstructured_outputs: int = 0
    unscored_entries: int = 0
    unrecognized_files: int = 0
    split_traces: int = 0
    # Directory walks (``--format auto`` over a directory without ``*.jsonl``): files
    # recognised as surfaces or repair tables (or named by --surface / --repairs) are
    # skipped and counted here, never as unrecognised.
    surface_files: int = 0
    # ... and the files a reader reads beside its session files (BFCL's score files).
    companion_files: int = 0
    samples: list[str] = field(default_factory=list)
    # Which files were unreadable or unrecognised (the first NAME_LIMIT of each).
    unreadable_names: list[str] = field(default_factory=list)
    unrecognized_names: list[str] = field(default_factory=list)
    # The files that held a malformed line (a truncated write, say): certification's
    # corpus-health names them. Not part of ``to_json`` (its keys are fixed).
    damaged_names: list[str] = field(default_factory=list)

    SAMPLE_LIMIT = 10
    NAME_LIMIT = 100

    def note(self, where: str, problem: str) -> None:
        if len(self.samples) < self.SAMPLE_LIMIT:
            self.samples.append(f"{where}: {problem}")

    def unreadable(self, name: str, problem: str) -> None:
        """Count one file that could not be read, naming it."""
        self.unreadable_files += 1
        _add_name(self.unreadable_names, name)
        self.note(name, f"unreadable: {problem}")

    def oversized_file(self, name: str, problem: str) -> None:
        """Count one compressed file that inflated beyond the cap: oversized, and so
        unreadable (it contributes nothing), naming it."""
        self.oversized_files += 1
        self.unreadable(name, problem)

    def unrecognized(self, name: str, problem: str) -> None:
        """Count one file no session reader recognised, naming it."""
        self.unrecognized_files += 1
        _add_name(self.unrecognized_names, name)
        self.note(name, problem)

    @property
    def operations_found(self) -> bool:
        """Whether the read yielded anything to work on: a trace or an audit call."""
        return bool(self.traces or self.audit_calls)

    def reject(self, reason: str, where: str) -> None:
        self.rejected_traces += 1
        self.rejection_reasons[reason] = self.rejection_reasons.get(reason, 0) + 1
        self.note(where, f"trace skipped: {reason}")

    def merge(self, other: ScanDiagnostics) -> ScanDiagnostics:
        """Add ``other``'s counts (the slice that follows); returns ``self``."""
        for name in _COUNTER_FIELDS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for reason, count in other.rejection_reasons.items():
            self.rejection_reasons[reason] = self.rejection_reasons.get(reason, 0) + count
        room = self.SAMPLE_LIMIT - len(self.samples)
        if room > 0:
            self.samples.extend(other.samples[:room])
        for name in other.unreadable_names:
            _add_name(self.unreadable_names, name)
        for name in other.unrecognized_names:
            _add_name(self.unrecognized_names, name)
        for name in other.damaged_names:
            _add_name(self.damaged_names, name)
        return self

    def held_no_record(self) -> bool:
        """Whether a file (one file's own diagnostics) had lines and none of them was a
        trace, audit or foreign record (model lines alone make no session: another format's
        messages name their model too)."""
        return self.lines > self.empty_lines and not (
            self.trace_lines or self.foreign_records or self.audit_calls
        )

    def yielded_nothing(self) -> bool:
        """:meth:`held_no_record`, and no model line either: it may be of no known format
        at all."""
        return self.held_no_record() and not self.model_lines

    @property
    def skipped_lines(self) -> int:
        """Lines that looked relevant but could not be used."""
        return (
            self.oversized_lines
            + self.malformed_lines
            + self.non_object_lines
            + self.lines_without_details
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "unreadableFiles": self.unreadable_files,
            "oversizedFiles": self.oversized_files,
            "lines": self.lines,
            "emptyLines": self.empty_lines,
            "ignoredLines": self.ignored_lines,
            "modelLines": self.model_lines,
            "traceLines": self.trace_lines,
            "oversizedLines": self.oversized_lines,
            "malformedLines": self.malformed_lines,
            "nonObjectLines": self.non_object_lines,
            "linesWithoutDetails": self.lines_without_details,
            "linesWithoutTrace": self.lines_without_trace,
            "fallbackParsedLines": self.fallback_parsed_lines,
            "traces": self.traces,
            "rejectedTraces": self.rejected_traces,
            "rejectionReasons": dict(sorted(self.rejection_reasons.items())),
            "auditCalls": self.audit_calls,
            "skippedAudits": self.skipped_audits,
            "foreignRecords": self.foreign_records,
            "foreignCalls": self.foreign_calls,
            "concatenatedLines": self.concatenated_lines,
            "unknownRecords": self.unknown_records,
            "unmatchedResults": self.unmatched_results,
            "unansweredCalls": self.unanswered_calls,
            "duplicateRecords": self.duplicate_records,
            "rewoundRecords": self.rewound_records,
            "undecodableArguments": self.undecodable_arguments,
            "unstructuredOutputs": self.unstructured_outputs,
            "unscoredEntries": self.unscored_entries,
            "unrecognizedFiles": self.unrecognized_files,
            "splitTraces": self.split_traces,
            "surfaceFiles": self.surface_files,
            "companionFiles": self.companion_files,
            "unreadableNames": list(self.unreadable_names),
            "unrecognizedNames": list(self.unrecognized_names),
            "samples": list(self.samples),
        }


def _add_name(names: list[str], name: str) -> None:
    if len(names) < ScanDiagnostics.NAME_LIMIT:
        names.append(name)


_COUNTER_FIELDS: Final = tuple(
    name
    for name in field_names(ScanDiagnostics)
    if name
    not in (
        "rejection_reasons",
        "samples",
        "unreadable_names",
        "unrecognized_names",
        "damaged_names",
    )
)
