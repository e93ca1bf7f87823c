"""Incremental reading of live session files (spec §9.3 R9-R13).

A bounded cache (16 files, least recently used) keyed by path remembers, per file, its
device, inode, size, modification time, the model cursor at the end of the read and the
evidence read so far. On the next read:

* same device and inode, same size and mtime: the cached evidence is reused unread;
* same device and inode, larger: only the appended bytes are scanned, the model cursor
  carries forward, and the new evidence is appended;
* a new inode or device, a smaller size, or the same size with a new mtime (rewritten in
  place): the file is rescanned from its first byte with a fresh cursor;
* a read that ends without ``\\n`` is used for this read but never cached, so a half-written
  line is not committed; the next read starts again from the last cached state.

The result always equals a full rescan (a property test appends random chunks, split lines
included, and compares). Files in foreign formats and ``.gz`` files are always rescanned.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from pytest_entropy.ingest.base import NATIVE_FORMAT, ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.lines import LineRead
from pytest_entropy.ingest.native import ScanRecords, SessionScanner
from pytest_entropy.ingest.registry import resolve_format
from pytest_entropy.sources.scan import read_file_evidence

__all__ = ["DEFAULT_CACHE_FILES", "EvidenceCache", "FileRead", "ScanRecordCache"]

DEFAULT_CACHE_FILES = 16
_MTIME_TOLERANCE_NS = 1  # |mtime difference| <= 1e-6 ms


@dataclass(slots=True)
class _Entry:
    device: int
    inode: int
    size: int
    mtime_ns: int
    cursor: str | None
    evidence: ScanRecords
    diagnostics: ScanDiagnostics


@dataclass(slots=True)
class FileRead:
    """What one read of one file did (for tests and the benchmark)."""

    evidence: ScanRecords | None
    mode: str  # "reused", "appended", "rescanned", "unreadable"
    bytes_scanned: int = 0
    cached: bool = False
    diagnostics: ScanDiagnostics = field(default_factory=ScanDiagnostics)


def _copy(evidence: ScanRecords) -> ScanRecords:
    return ScanRecords(
        list(evidence.traces), list(evidence.value_observations), list(evidence.audit_calls)
    )


class ScanRecordCache:
    """The bounded, metadata-keyed evidence cache the compile loop reads its window
    through (``read_corpus(..., cache=...)``)."""

    def __init__(self, capacity: int = DEFAULT_CACHE_FILES) -> None:
        self.capacity = max(1, capacity)
        self._entries: OrderedDict[str, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def read(self, path: Path, options: ReadOptions | None = None) -> FileRead:
        """The current evidence of ``path`` (``evidence`` is ``None`` when unreadable).

        The returned evidence shares its lists with the cache (they only ever grow by
        appending): read it, do not modify it. Copying would make every read cost time in
        proportion to the whole file.
        """
        options = options or ReadOptions()
        key = os.path.abspath(path)
        try:
            info = os.stat(path)
        except OSError:
            self._entries.pop(key, None)
            return FileRead(None, "unreadable")
        entry = self._entries.get(key)
        if entry is not None:
            same_file = entry.device == info.st_dev and entry.inode == info.st_ino
            if (
                same_file
                and entry.size == info.st_size
                and abs(entry.mtime_ns - info.st_mtime_ns) <= _MTIME_TOLERANCE_NS
            ):
                self._entries.move_to_end(key)
                return FileRead(entry.evidence, "reused", 0, True, entry.diagnostics)
            if same_file and info.st_size > entry.size:
                return self._scan(key, path, entry)
            del self._entries[key]
        if path.name.endswith(".gz") or resolve_format(path, options) != NATIVE_FORMAT:
            diagnostics = ScanDiagnostics()
            evidence = read_file_evidence(path, diagnostics=diagnostics, options=options)
            return FileRead(evidence, "rescanned", info.st_size, False, diagnostics)
        return self._scan(key, path, None)

    def _scan(self, key: str, path: Path, base: _Entry | None) -> FileRead:
        """Scan from the cached size (or byte 0) to the end of the file."""
        start = base.size if base is not None else 0
        fresh = ScanRecords()
        diagnostics = ScanDiagnostics()
        scanner = SessionScanner(
            fresh.traces.append,
            on_audit=fresh.audit_calls.append,
            on_value=fresh.value_observations.append,
            diagnostics=diagnostics,
            name=str(path),
            current_model=base.cursor if base is not None else None,
        )
        line_read = LineRead()
        try:
            with open(path, "rb") as stream:
                opened = os.fstat(stream.fileno())
                stream.seek(start)
                scanner.scan_stream(stream, info=line_read)
        except OSError:
            self._entries.pop(key, None)
            return FileRead(None, "unreadable")
        mode = "appended" if base is not None else "rescanned"
        end = start + line_read.bytes_read
        same_identity = base is None or (opened.st_dev, opened.st_ino) == (
            base.device,
            base.inode,
        )
        if base is None:
            diagnostics.files += 1
        if not (line_read.terminated and same_identity):
            # A half-written last line (R13), or the file changed under us: use this read,
            # commit nothing. The next read starts again from the last committed state.
            evidence = _copy(base.evidence) if base is not None else ScanRecords()
            evidence.traces.extend(fresh.traces)
            evidence.value_observations.extend(fresh.value_observations)
            evidence.audit_calls.extend(fresh.audit_calls)
            total = ScanDiagnostics()
            if base is not None:
                total.merge(base.diagnostics)
            total.merge(diagnostics)
            return FileRead(evidence, mode, line_read.bytes_read, False, total)
        if base is None:
            base = _Entry(
                opened.st_dev, opened.st_ino, 0, 0, None, ScanRecords(), ScanDiagnostics()
            )
        base.evidence.traces.extend(fresh.traces)
        base.evidence.value_observations.extend(fresh.value_observations)
        base.evidence.audit_calls.extend(fresh.audit_calls)
        base.diagnostics.merge(diagnostics)
        base.size = end
        # The mtime identifies this state only if nothing was appended after our fstat.
        base.mtime_ns = opened.st_mtime_ns if end == opened.st_size else -1
        base.cursor = scanner.current_model
        self._entries[key] = base
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
        return FileRead(base.evidence, mode, line_read.bytes_read, True, base.diagnostics)


# The first name of ScanRecordCache (the watch loop and users import it).
EvidenceCache = ScanRecordCache
