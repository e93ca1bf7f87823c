"""Reading one session source: a local file or an fsspec URL (spec §4.2, §9.3).

:func:`scan_source` is the one way in. Every source is scanned alone with its own model
cursor, and reads stream line by line, so a file is never held in memory whole. Where the
bytes come from decides only how the stream is opened: a local file directly, a URL in the
native format straight from storage, and a URL in any other format (or ``auto``) through a
worker-local copy, so format detection and foreign readers decide exactly as they do for
a local file. Whatever fails while it is read contributes nothing and is counted as
unreadable, against the name the user gave.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from types import ModuleType

from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.plain_record import Record
from pytest_entropy.core.records import AuditCall, Trace, ValueObservation
from pytest_entropy.ingest.base import NATIVE_FORMAT, ReadOptions, open_session
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.inflation import (
    DEFAULT_MAX_INFLATED_BYTES,
    InflatedSizeError,
    inflation_limit,
)
from pytest_entropy.ingest.native import SessionEvidence, SessionScanner
from pytest_entropy.ingest.native_scan import NativeTraceReader
from pytest_entropy.ingest.native_tallies import NativeTallies
from pytest_entropy.ingest.paths import as_path, normal_path
from pytest_entropy.ingest.registry import resolve_format, session_reader
from pytest_entropy.sources.urls import _local_copy, is_url, open_url, redact_storage_secrets

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any

Source = str | os.PathLike[str]
# What reads one file's lines: the plain scanner, or the Rust core's for the meter alone.
Scanner = SessionScanner | NativeTraceReader


class ModelCursor(Record):
    """The model a scan starts from, updated to the model it ended with. Every source
    starts fresh by default; certification's corpus mode (spec §12.1) carries one cursor
    across its files."""

    model: str | None = None


def _unreadable(
    diagnostics: ScanDiagnostics,
    name: str,
    error: BaseException,
    options: ReadOptions | None = None,
) -> bool:
    # A storage backend's message may repeat a credential given in the storage options.
    shown = redact_storage_secrets(str(error), options.storage_options if options else None)
    diagnostics.unreadable(name, shown)
    return False


def _scan(
    scanner: Scanner,
    read: Callable[[Scanner], None],
    options: ReadOptions | None = None,
) -> bool:
    """Count one file and ``read`` it into ``scanner``; False when it could not be read."""
    scanner.diagnostics.files += 1
    limit = options.max_inflated_bytes if options is not None else DEFAULT_MAX_INFLATED_BYTES
    try:
        with inflation_limit(limit):  # every compressed stream the read opens
            read(scanner)
    except InflatedSizeError as error:
        scanner.diagnostics.oversized_file(scanner.name, str(error))
        return False
    except (OSError, EOFError) as error:
        return _unreadable(scanner.diagnostics, scanner.name, error, options)
    return True


def _read_path(path: str | os.PathLike[str], options: ReadOptions) -> Callable[[Scanner], None]:
    def read(scanner: Scanner) -> None:
        session_format = resolve_format(path, options)
        if session_format == NATIVE_FORMAT:
            with open_session(path) as stream:
                scanner.scan_stream(stream)
        else:
            reader = session_reader(session_format)  # a reader is promised a pathlib.Path
            scanner.feed_lines(reader(as_path(path), options, scanner.diagnostics))

    return read


def _read_url(url: str, options: ReadOptions) -> Callable[[Scanner], None]:
    def read(scanner: Scanner) -> None:
        with open_url(url, options.storage_options) as stream:
            scanner.scan_stream(stream)

    return read


def scan_source(
    source: Source,
    on_trace: Callable[[Trace], None] | None = None,
    *,
    diagnostics: ScanDiagnostics,
    meter: MeterState | None = None,
    on_audit: Callable[[AuditCall], None] | None = None,
    on_value: Callable[[ValueObservation], None] | None = None,
    options: ReadOptions | None = None,
    cursor: ModelCursor | None = None,
    on_value_fields: Callable[[str, str, Any], None] | None = None,
    mentions: tuple[bytes, ...] | None = None,
    on_values: Callable[[tuple[Any, ...]], None] | None = None,
    on_signed: Callable[[Sequence[Any], str, str | None], None] | None = None,
    native: ModuleType | None = None,
    tallies: NativeTallies | None = None,
) -> bool:
    """Scan one local path or URL; False when it could not be read.

    Traces go to ``on_trace`` and ``meter``; audits are harvested (and counted in the
    diagnostics) only when ``on_audit`` or ``on_value`` is given. The model cursor starts
    fresh unless ``cursor`` is given, which then holds the model the scan ended with.
    ``on_value_fields(ref, key, value)`` hears each value observation in place of
    ``on_value`` (no record is built for it). With ``mentions``, trace lines that cannot
    mention one of those quoted strings are skipped unread (see ``SessionScanner``).
    ``on_signed`` hears each trace's guarded operations in place of ``on_trace``, and
    ``on_values`` each line's values as one flat tuple in place of ``on_value`` and
    ``on_value_fields`` (the same). ``native`` (the Rust core) reads the file instead, for
    ``meter`` and what ``tallies`` gathers (no listener then): the caller
    (``run/corpus.py``) decides.
    """
    read_options = options or ReadOptions()
    scanner: Scanner
    if native is not None:
        listeners = (on_trace, on_audit, on_value, on_value_fields, on_values, on_signed)
        if any(listener is not None for listener in listeners):
            raise ValueError("the native core's listeners are its tallies")
        scanner = NativeTraceReader(
            native,
            meter=meter,
            diagnostics=diagnostics,
            name=os.fspath(source),
            current_model=cursor.model if cursor is not None else None,
            mentions=mentions,
            tallies=tallies,
            metric_version=read_options.metric_version,
        )
    else:
        scanner = SessionScanner(
            on_trace,
            meter=meter,
            on_audit=on_audit,
            on_value=on_value,
            on_value_fields=on_value_fields,
            mentions=mentions,
            on_values=on_values,
            on_signed=on_signed,
            diagnostics=diagnostics,
            name=os.fspath(source),
            current_model=cursor.model if cursor is not None else None,
            metric_version=read_options.metric_version,
        )
    try:
        return _scan_source(scanner, read_options)
    finally:
        if cursor is not None:
            cursor.model = scanner.current_model


def _scan_source(scanner: Scanner, options: ReadOptions) -> bool:
    name, diagnostics = scanner.name, scanner.diagnostics
    if not is_url(name):
        return _scan(scanner, _read_path(normal_path(name), options), options)
    if options.session_format == NATIVE_FORMAT:
        return _scan(scanner, _read_url(name, options), options)
    # Scanned as a local copy, into diagnostics of its own: what foreign readers report
    # against the copy's path is then renamed to the URL.
    own = scanner.diagnostics = ScanDiagnostics()
    try:
        with _local_copy(name, options.storage_options) as copy:
            readable = _scan(scanner, _read_path(copy, options), options)
    except (OSError, EOFError) as error:  # the copy itself failed
        diagnostics.files += 1
        return _unreadable(diagnostics, name, error, options)
    finally:
        scanner.diagnostics = diagnostics
    own.samples = [sample.replace(str(copy), name) for sample in own.samples]
    own.unreadable_names = [item.replace(str(copy), name) for item in own.unreadable_names]
    own.unrecognized_names = [item.replace(str(copy), name) for item in own.unrecognized_names]
    diagnostics.merge(own)
    return readable


def meter_source(
    source: Source,
    *,
    diagnostics: ScanDiagnostics | None = None,
    retain_terms: bool = True,
    into: MeterState | None = None,
    options: ReadOptions | None = None,
) -> tuple[MeterState | None, ScanDiagnostics]:
    """Measure one path or URL into a fresh state (or ``into``); ``None`` when unreadable."""
    diagnostics = diagnostics if diagnostics is not None else ScanDiagnostics()
    state = into if into is not None else MeterState(retain_terms=retain_terms)
    readable = scan_source(source, diagnostics=diagnostics, meter=state, options=options)
    return (state if readable else None), diagnostics


def read_file_evidence(
    source: Source,
    *,
    diagnostics: ScanDiagnostics | None = None,
    options: ReadOptions | None = None,
) -> SessionEvidence | None:
    """The session evidence of one path or URL (traces, observations, audit calls), or
    ``None`` when it could not be read."""
    diagnostics = diagnostics if diagnostics is not None else ScanDiagnostics()
    evidence = SessionEvidence()
    readable = scan_source(
        source,
        evidence.traces.append,
        diagnostics=diagnostics,
        on_audit=evidence.audit_calls.append,
        on_value=evidence.value_observations.append,
        options=options,
    )
    return evidence if readable else None
