"""Session files on disk: discovery, windows and per-file scans (spec §4.2, §9.3).

Every file is scanned alone with its own model cursor. Reads stream line by line; a file is
never held in memory whole.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.records import AuditCall, Trace, ValueObservation
from pytest_entropy.ingest.base import NATIVE_FORMAT, ReadOptions, open_session
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.native import SessionEvidence, SessionScanner
from pytest_entropy.ingest.registry import resolve_format, session_reader
from pytest_entropy.sources.urls import _local_copy, is_url, open_url


def scan_file(
    path: Path,
    on_trace: Callable[[Trace], None] | None,
    *,
    diagnostics: ScanDiagnostics,
    evidence: SessionEvidence | None = None,
    meter: MeterState | None = None,
    name: str | None = None,
    options: ReadOptions | None = None,
    on_audit: Callable[[AuditCall], None] | None = None,
    on_value: Callable[[ValueObservation], None] | None = None,
) -> bool:
    """Scan one file with a fresh model cursor; returns False when it could not be read.

    Audit calls and value observations go to ``evidence`` when given, else to ``on_audit``
    and ``on_value``.
    """
    options = options or ReadOptions()
    if evidence is not None:
        on_audit = evidence.audit_calls.append
        on_value = evidence.value_observations.append
    scanner = SessionScanner(
        on_trace,
        meter=meter,
        on_audit=on_audit,
        on_value=on_value,
        diagnostics=diagnostics,
        name=name or str(path),
    )
    diagnostics.files += 1
    session_format = resolve_format(path, options)
    try:
        if session_format == NATIVE_FORMAT:
            with open_session(path) as stream:
                scanner.scan_stream(stream)
        else:
            scanner.feed_lines(session_reader(session_format)(path, options, diagnostics))
    except (OSError, EOFError) as error:
        diagnostics.unreadable_files += 1
        diagnostics.note(str(path), f"unreadable: {error}")
        return False
    return True


def meter_file(
    path: Path,
    *,
    diagnostics: ScanDiagnostics | None = None,
    retain_terms: bool = True,
    into: MeterState | None = None,
    options: ReadOptions | None = None,
) -> tuple[MeterState | None, ScanDiagnostics]:
    """Measure one file into a fresh state (or ``into``); ``None`` when unreadable."""
    diagnostics = diagnostics if diagnostics is not None else ScanDiagnostics()
    state = into if into is not None else MeterState(retain_terms=retain_terms)
    readable = scan_file(path, None, diagnostics=diagnostics, meter=state, options=options)
    return (state if readable else None), diagnostics


def read_file_evidence(
    path: Path,
    *,
    diagnostics: ScanDiagnostics | None = None,
    options: ReadOptions | None = None,
) -> SessionEvidence | None:
    """The session evidence of one file (traces, observations, audit calls), or ``None``."""
    diagnostics = diagnostics if diagnostics is not None else ScanDiagnostics()
    evidence = SessionEvidence()
    if not scan_file(
        path, evidence.traces.append, diagnostics=diagnostics, evidence=evidence, options=options
    ):
        return None
    return evidence


def scan_url(
    url: str,
    on_trace: Callable[[Trace], None] | None,
    *,
    diagnostics: ScanDiagnostics,
    meter: MeterState | None = None,
    on_audit: Callable[[AuditCall], None] | None = None,
    on_value: Callable[[ValueObservation], None] | None = None,
    options: ReadOptions | None = None,
) -> bool:
    """Scan one URL with a fresh model cursor; False when it could not be read.

    The counterpart of :func:`~pytest_entropy.sessions.scan_file`, with the same
    diagnostics. With the native format named explicitly (``fabric``) the file streams
    straight from storage into the scanner. Otherwise (``auto`` or a foreign format) it is
    copied to a local temporary file first and scanned exactly as a local file: format
    detection and foreign readers may need the whole file by path, and this way they decide
    exactly as they do locally. Problems are reported against the URL, never the copy.
    """
    options = options or ReadOptions()
    if options.session_format != NATIVE_FORMAT:
        try:
            with _local_copy(url) as copy:
                own = ScanDiagnostics()
                readable = scan_file(
                    copy,
                    on_trace,
                    diagnostics=own,
                    meter=meter,
                    name=url,
                    options=options,
                    on_audit=on_audit,
                    on_value=on_value,
                )
        except (OSError, EOFError) as error:  # the copy itself failed
            diagnostics.files += 1
            diagnostics.unreadable_files += 1
            diagnostics.note(url, f"unreadable: {error}")
            return False
        own.samples = [sample.replace(str(copy), url) for sample in own.samples]
        diagnostics.merge(own)
        return readable
    scanner = SessionScanner(
        on_trace,
        meter=meter,
        on_audit=on_audit,
        on_value=on_value,
        diagnostics=diagnostics,
        name=url,
    )
    diagnostics.files += 1
    try:
        with open_url(url) as stream:
            scanner.scan_stream(stream)
    except (OSError, EOFError) as error:
        diagnostics.unreadable_files += 1
        diagnostics.note(url, f"unreadable: {error}")
        return False
    return True


def scan_source(
    source: str,
    on_trace: Callable[[Trace], None] | None,
    *,
    diagnostics: ScanDiagnostics,
    meter: MeterState | None = None,
    on_audit: Callable[[AuditCall], None] | None = None,
    on_value: Callable[[ValueObservation], None] | None = None,
    options: ReadOptions | None = None,
) -> bool:
    """Scan a local path or a URL (see :func:`scan_url` and ``sessions.scan_file``)."""
    if is_url(source):
        return scan_url(
            source,
            on_trace,
            diagnostics=diagnostics,
            meter=meter,
            on_audit=on_audit,
            on_value=on_value,
            options=options,
        )
    return scan_file(
        Path(source),
        on_trace,
        diagnostics=diagnostics,
        meter=meter,
        options=options,
        on_audit=on_audit,
        on_value=on_value,
    )


def meter_url(
    url: str,
    *,
    retain_terms: bool = True,
    options: ReadOptions | None = None,
) -> tuple[MeterState | None, ScanDiagnostics]:
    """Measure one URL into a fresh state; ``None`` when it could not be read (the
    counterpart of :func:`~pytest_entropy.sessions.meter_file`)."""
    diagnostics = ScanDiagnostics()
    state = MeterState(retain_terms=retain_terms)
    readable = scan_url(url, None, diagnostics=diagnostics, meter=state, options=options)
    return (state if readable else None), diagnostics
