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

from .ingest.fabric import ScanDiagnostics, SessionEvidence, SessionScanner
from .ingest.lines import LineRead
from .sessions import NATIVE_FORMAT, ReadOptions, read_file_evidence, resolve_format

__all__ = ["DEFAULT_CACHE_FILES", "EvidenceCache", "FileRead"]

DEFAULT_CACHE_FILES = 16
_MTIME_TOLERANCE_NS = 1  # |mtime difference| <= 1e-6 ms


@dataclass(slots=True)
class _Entry:
    device: int
    inode: int
    size: int
    mtime_ns: int
    cursor: str | None
    evidence: SessionEvidence
    diagnostics: ScanDiagnostics


@dataclass(slots=True)
class FileRead:
    """What one read of one file did (for tests and the benchmark)."""

    evidence: SessionEvidence | None
    mode: str  # "reused", "appended", "rescanned", "unreadable"
    bytes_scanned: int = 0
    cached: bool = False
    diagnostics: ScanDiagnostics = field(default_factory=ScanDiagnostics)


def _copy(evidence: SessionEvidence) -> SessionEvidence:
    return SessionEvidence(
        list(evidence.traces), list(evidence.value_observations), list(evidence.audit_calls)
    )


class EvidenceCache:
    """The bounded, metadata-keyed evidence cache shared by the loop and ``status``."""

    def __init__(self, capacity: int = DEFAULT_CACHE_FILES) -> None:
        self.capacity = max(1, capacity)
        self._entries: OrderedDict[str, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def read(self, path: Path, options: ReadOptions | None = None) -> FileRead:
        """The current evidence of ``path`` (``evidence`` is ``None`` when unreadable)."""
        options = options or ReadOptions()
        key = os.path.abspath(path)
        try:
            info = os.stat(path)
        except OSError:
            self._entries.pop(key, None)
            return FileRead(None, "unreadable")
        if path.name.endswith(".gz") or resolve_format(path, options) != NATIVE_FORMAT:
            self._entries.pop(key, None)
            diagnostics = ScanDiagnostics()
            evidence = read_file_evidence(path, diagnostics=diagnostics, options=options)
            return FileRead(evidence, "rescanned", info.st_size, False, diagnostics)
        entry = self._entries.get(key)
        if entry is not None:
            same_file = entry.device == info.st_dev and entry.inode == info.st_ino
            if (
                same_file
                and entry.size == info.st_size
                and abs(entry.mtime_ns - info.st_mtime_ns) <= _MTIME_TOLERANCE_NS
            ):
                self._entries.move_to_end(key)
                return FileRead(_copy(entry.evidence), "reused", 0, True, entry.diagnostics)
            if same_file and info.st_size > entry.size:
                return self._scan(key, path, entry, info.st_size)
        self._entries.pop(key, None)
        return self._scan(key, path, None, info.st_size)

    def _scan(self, key: str, path: Path, base: _Entry | None, size_hint: int) -> FileRead:
        start = base.size if base is not None else 0
        evidence = _copy(base.evidence) if base is not None else SessionEvidence()
        diagnostics = ScanDiagnostics()
        if base is not None:
            diagnostics.merge(base.diagnostics)
        scanner = SessionScanner(
            evidence.traces.append,
            on_audit=evidence.audit_calls.append,
            on_value=evidence.value_observations.append,
            diagnostics=diagnostics,
            name=str(path),
            current_model=base.cursor if base is not None else None,
        )
        info_read = LineRead()
        try:
            with open(path, "rb") as stream:
                opened = os.fstat(stream.fileno())
                stream.seek(start)
                scanner.scan_stream(stream, info=info_read)
        except OSError:
            self._entries.pop(key, None)
            return FileRead(None, "unreadable")
        if base is None:
            diagnostics.files += 1
        end = start + info_read.bytes_read
        mode = "appended" if base is not None else "rescanned"
        # Cache only a read that ended on a line boundary (R13) and whose file did not
        # change identity while it was read.
        if info_read.terminated:
            if base is not None and (opened.st_dev, opened.st_ino) != (base.device, base.inode):
                return FileRead(evidence, mode, info_read.bytes_read, False, diagnostics)
            self._entries[key] = _Entry(
                opened.st_dev,
                opened.st_ino,
                end,
                opened.st_mtime_ns if end == opened.st_size else -1,
                scanner.current_model,
                _copy(evidence),
                diagnostics,
            )
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
            return FileRead(evidence, mode, info_read.bytes_read, True, diagnostics)
        if base is None:
            self._entries.pop(key, None)
        return FileRead(evidence, mode, info_read.bytes_read, False, diagnostics)
