"""One proxy connection's session file: its trace lines, written and flushed as calls end.

A :class:`~pytest_entropy.run.proxy.ProxyConnection` decides what a call was; this writes
it. The file is opened at the first call (a connection that calls nothing leaves no file),
and a failure of the disk is counted on the hub, never raised into the conversation: calls
keep being forwarded whether or not they can be recorded.
"""

from __future__ import annotations

import contextlib
import threading
from typing import IO, TYPE_CHECKING

from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.writer import ForeignTrace, NativeWriter

if TYPE_CHECKING:
    from pytest_entropy.run.proxy_hub import HubState

__all__ = ["SessionRecording"]


class SessionRecording:
    """The session file of connection ``sequence`` of ``hub`` (in its record directory)."""

    def __init__(self, hub: HubState, sequence: int) -> None:
        self.hub = hub
        self.sequence = sequence
        self._writer = NativeWriter(ReadOptions(), ScanDiagnostics())
        self._file: IO[bytes] | None = None
        self._unflushed = 0  # records written to the file's buffer since its last flush
        self._broken = False  # a write to the session file failed: nothing more is recorded
        self._closed = False
        self._lock = threading.Lock()
        # A transport that calls flush() after each batch sets this; alone, each line is
        # flushed as it is written.
        self.batched = False

    def write(self, trace: ForeignTrace) -> None:
        """Append the trace's lines (flushed at once unless :attr:`batched`)."""
        with self._lock:
            if self._closed:
                return
            if self._broken:
                self.hub.lost_records(1, None)
                return
            if self._file is None:
                path = self.hub.session_path(self.sequence)
                if path is None:
                    return
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    self._file = open(path, "ab")  # noqa: SIM115 - kept open for the connection
                except OSError as error:
                    self.hub.lost_records(1, error)  # nothing written: the next call tries again
                    return
            try:
                self._file.write(b"".join(line + b"\n" for line in self._writer.lines(trace)))
            except OSError as error:
                self._unflushed += 1
                self._give_up(error)
                return
            self._unflushed += 1
            if not self.batched:
                self._flush_locked()

    def flush(self) -> None:
        """Put what was written on disk."""
        with self._lock:
            self._flush_locked()

    def close(self) -> None:
        """Flush and close the file; nothing is written after."""
        with self._lock:
            self._flush_locked()
            self._closed = True
            if self._file is not None:
                with contextlib.suppress(OSError):  # flushed above: a failure was counted
                    self._file.close()
                self._file = None

    def _flush_locked(self) -> None:
        if self._file is None or not self._unflushed:
            return
        try:
            self._file.flush()
        except OSError as error:
            self._give_up(error)
            return
        self._unflushed = 0

    def _give_up(self, error: OSError) -> None:
        """A write to the open session file failed: the records its buffer held are lost,
        and so is every later one of this connection (counted), since a line written after
        a torn one would be read as part of it."""
        lost, self._unflushed = self._unflushed, 0
        self.hub.lost_records(lost, error)
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
        self._file = None
        self._broken = True
