"""Empty corpora: a read that yielded no operations fails (exit 2) unless the user allows
it, with a message naming what was read; files a read passed over are a warning line.

The corpus pipeline (:mod:`~pytest_entropy.run.corpus`) counts; this module decides what an
empty or partly unreadable read means for every command and the plugin's gate.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.run.file_verdicts import NO_KNOWN_FORMAT, NOT_CLAIMED

__all__ = [
    "EmptyCorpusError",
    "check_not_empty",
    "empty_corpus_message",
    "skipped_files_warning",
]


class EmptyCorpusError(EntropyInputError):
    """The corpus yielded no operations: nothing to measure, so nothing may pass (exit 2
    unless ``--allow-empty``)."""


def _names(names: Sequence[str], total: int, limit: int = 3) -> str:
    shown = ", ".join(names[:limit])
    more = total - min(len(names), limit)
    return shown + (f" and {more} more" if more > 0 else "")


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" + ("" if number == 1 else "s")


def _first_problem(diagnostics: ScanDiagnostics, kind: str, names: Sequence[str]) -> str:
    """The problem the first sample about one of ``names`` gives after ``kind``
    (``"unreadable: "``, or ``""`` for any), or ``""``: the samples are ``file: problem``."""
    for name in names:
        for sample in diagnostics.samples:
            if sample.startswith(f"{name}: {kind}"):
                return sample[len(name) + 2 + len(kind) :]
    return ""


def empty_corpus_message(
    diagnostics: ScanDiagnostics, session_format: str = "auto", flags: str = "--"
) -> str:
    """Why a read that yielded no operations is empty, naming what was read; ``flags`` is
    how the options it names are spelt (``--entropy-`` in pytest).

    For example ``read 214 files, 2,138 lines, 0 traces: no file matched a session format;
    try --format FORMAT (...)``.
    """
    parts = [
        f"read {_count(diagnostics.files, 'file')}, {_count(diagnostics.lines, 'line')},"
        f" {_count(diagnostics.traces, 'trace')}"
    ]
    if diagnostics.files == 0 and not diagnostics.unrecognized_files:
        reason = (
            "no session files found (a directory means its *.jsonl files; under"
            f" {flags}format auto"
            " a directory without them is searched for the .json, .jsonl and .gz files a"
            " session reader recognises)"
        )
    elif diagnostics.files and diagnostics.unreadable_files == diagnostics.files:
        reason = "no file could be read: " + _names(
            diagnostics.unreadable_names, diagnostics.unreadable_files
        )
        problem = _first_problem(diagnostics, "unreadable: ", diagnostics.unreadable_names)
        if problem:
            reason += f" (the first: {problem})"
    elif diagnostics.rejected_traces:
        reason = f"all {diagnostics.rejected_traces:,} traces failed the guard"
    elif diagnostics.skipped_lines:
        # Lines of the format were there, but damaged: not a question of --format.
        reason = (
            f"no usable trace: {_count(diagnostics.skipped_lines, 'line')} that looked like"
            " session records could not be used"
        )
        if diagnostics.samples:
            reason += f" (the first: {diagnostics.samples[0]})"
    elif session_format == "auto":
        from pytest_entropy.ingest.registry import session_formats

        reason = (
            f"no file matched a session format; try {flags}format FORMAT (one of"
            f" {', '.join(session_formats()[1:])}; see docs/formats.md)"
        )
    else:
        reason = (
            f"nothing in them is a {flags}format {session_format} session; try {flags}format auto"
        )
    parts.append(reason)
    extra = []
    if diagnostics.unrecognized_files:
        unrecognised = f"{diagnostics.unrecognized_files:,} unrecognised: " + _names(
            diagnostics.unrecognized_names, diagnostics.unrecognized_files
        )
        if diagnostics.unrecognized_files == 1:
            problem = _first_problem(diagnostics, "", diagnostics.unrecognized_names)
            # A walk's "no reader recognised it" says what the reason above says.
            if problem and problem != NOT_CLAIMED:
                unrecognised += ": " + problem.removeprefix(NO_KNOWN_FORMAT + ": ")
        extra.append(unrecognised)
    if diagnostics.surface_files:
        extra.append(f"{_count(diagnostics.surface_files, 'surface or repair file')} skipped")
    message = ": ".join(parts)
    if extra:
        message += " (" + "; ".join(extra) + ")"
    return message + f"; {flags}allow-empty accepts an empty corpus"


def check_not_empty(
    diagnostics: ScanDiagnostics,
    *,
    allow_empty: bool = False,
    session_format: str = "auto",
    flags: str = "--",
) -> None:
    """Raise :class:`EmptyCorpusError` when the read yielded no operations (a trace or an
    audit call), unless ``allow_empty``."""
    if not allow_empty and not diagnostics.operations_found:
        raise EmptyCorpusError(empty_corpus_message(diagnostics, session_format, flags))


def skipped_files_warning(diagnostics: ScanDiagnostics, flags: str = "--") -> str | None:
    """``warning: ...`` naming the unreadable and unrecognised files a read passed over, or
    ``None`` when there were none."""
    parts = []
    if diagnostics.unreadable_files:
        parts.append(
            f"{diagnostics.unreadable_files:,} unreadable ("
            + _names(diagnostics.unreadable_names, diagnostics.unreadable_files)
            + ")"
        )
    if diagnostics.unrecognized_files:
        parts.append(
            f"{diagnostics.unrecognized_files:,} unrecognised ("
            + _names(diagnostics.unrecognized_names, diagnostics.unrecognized_files)
            + ")"
        )
    if not parts:
        return None
    return (
        "warning: session files passed over: "
        + "; ".join(parts)
        + f" (diagnostics name them; {flags}strict makes this an error)"
    )
