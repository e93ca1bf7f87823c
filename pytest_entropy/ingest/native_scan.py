"""One session file read by the Rust core (``pytest_entropy._core.TraceScanner``).

:class:`NativeTraceReader` stands where :class:`~pytest_entropy.ingest.native.SessionScanner`
stands when the only thing listening to a file is the meter (``run/corpus.py`` decides):
the file's bytes go to the core chunk by chunk (a gzip stream is decompressed by the reader
that opened it), the core runs the line loop, the trace guard, the signatures and the
meter's accumulation in its own data, and at the end hands back plain data, which becomes
the same :class:`~pytest_entropy.core.meter.MeterState` and
:class:`~pytest_entropy.ingest.diagnostics.ScanDiagnostics` the plain scanner fills. Both
merge into the caller's as the plain scanner's would have grown (``MeterState.merge`` and
``ScanDiagnostics.merge`` equal one pass). When the tallies ask for it
(``NativeTallies.native_meter``), the meter state stays in the core instead, as a
``NativeMeter`` the corpus merges in the core and exports once.

The core does not reproduce the Python reader's error messages: the note of a malformed
line gets its text here, from the plain reader, while the core keeps the line (only the
first ten notes of a file are ever kept).
"""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType

from pytest_entropy.core.meter import MeterState
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.jsonparse import JSONParseError, parse_json_bytes
from pytest_entropy.ingest.lines import CHUNK_SIZE, DEFAULT_LINE_CAP, LineRead
from pytest_entropy.ingest.native import SessionScanner
from pytest_entropy.ingest.native_tallies import NativeTallies

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import IO, Any

__all__ = ["NativeTraceReader", "diagnostics_from_plain"]


def diagnostics_from_plain(
    name: str, counters: dict[str, int], reasons: list[tuple[str, int]], notes: list[Any]
) -> ScanDiagnostics:
    """The diagnostics of one native scan of ``name`` (``TraceScanner.result``'s parts)."""
    found = ScanDiagnostics()
    for field, value in counters.items():
        setattr(found, field, value)
    found.rejection_reasons = dict(reasons)
    found.samples = [f"{name}:{line}: {problem}" for line, problem in notes]
    return found


def _malformed_note(name: str, line: int, raw: bytes) -> str:
    try:
        parse_json_bytes(raw)
    except JSONParseError as error:
        return f"malformed JSON ({error})"
    raise RuntimeError(
        f"{name}:{line}: the native core refused a line the plain reader accepts (a bug)"
    )


class NativeTraceReader:
    """A :class:`SessionScanner` for the meter alone, run by the Rust core ``native``.

    ``meter`` (when given) receives the file's state, ``diagnostics`` its counts; the model
    cursor starts at ``current_model`` and holds the file's last model afterwards. A file
    of another session format (``feed_lines``) is read by the plain scanner.
    """

    __slots__ = (
        "_native",
        "current_model",
        "diagnostics",
        "mentions",
        "meter",
        "metric_version",
        "name",
        "tallies",
    )

    def __init__(
        self,
        native: ModuleType,
        *,
        meter: MeterState | None = None,
        diagnostics: ScanDiagnostics | None = None,
        name: str = "<session>",
        current_model: str | None = None,
        mentions: tuple[bytes, ...] | None = None,
        tallies: NativeTallies | None = None,
        metric_version: int = 2,
    ) -> None:
        self._native = native
        self.metric_version = metric_version
        self.tallies = tallies
        self.meter = meter
        self.diagnostics = diagnostics if diagnostics is not None else ScanDiagnostics()
        self.name = name
        self.current_model = current_model
        self.mentions = mentions

    def feed_lines(self, lines: Iterable[bytes | str]) -> None:
        """Lines a foreign session reader produced: the plain scanner reads them."""
        scanner = SessionScanner(
            meter=self.meter,
            diagnostics=self.diagnostics,
            name=self.name,
            current_model=self.current_model,
            metric_version=self.metric_version,
            **(self.tallies.listeners() if self.tallies is not None else {}),
        )
        scanner.feed_lines(lines)
        self.current_model = scanner.current_model

    def scan_stream(
        self,
        stream: IO[bytes],
        *,
        line_cap: int = DEFAULT_LINE_CAP,
        info: LineRead | None = None,
        chunk_size: int = CHUNK_SIZE,
    ) -> None:
        """Scan a binary stream to its end, ``chunk_size`` bytes at a time. When reading
        fails midway, what the lines read so far contributed is kept (as the plain scanner
        keeps it) and the error propagates."""
        model = self.current_model
        scanner = self._native.TraceScanner(
            None if model is None else model.encode("utf-8", "surrogatepass"),
            None if self.mentions is None else list(self.mentions),
            line_cap,
            self.metric_version,
        )
        if self.tallies is not None:
            self.tallies.ask(scanner, self._native)
        total = 0
        last = b"\n"
        try:
            while chunk := stream.read(chunk_size):
                total += len(chunk)
                last = chunk[-1:]
                scanner.feed(chunk)
                self._resolve(scanner)
            scanner.finish()
            self._resolve(scanner)
            if info is not None:
                info.bytes_read = total
                info.terminated = last == b"\n"
        finally:
            self._take(scanner)

    def _resolve(self, scanner: Any) -> None:
        pending = scanner.malformed_notes()
        if pending:
            for at, raw in pending:
                scanner.resolve_note(at, _malformed_note(self.name, at, raw))

    def _take(self, scanner: Any) -> None:
        # The meter stays in the core when the tallies keep it there (``native_meter``).
        in_core = self.tallies is not None and self.tallies.native_meter
        # ... and is not exported at all when no one reads it (pool, propose).
        model, counters, reasons, notes, meter = scanner.result(
            self.meter is not None and not in_core
        )
        self.current_model = model
        self.diagnostics.merge(diagnostics_from_plain(self.name, counters, reasons, notes))
        if in_core:
            assert self.tallies is not None
            self.tallies.keep_meter_of(scanner)
        elif self.meter is not None:
            self.meter.merge_plain(meter)
        if self.tallies is not None:
            self.tallies.take(scanner, self.diagnostics)
