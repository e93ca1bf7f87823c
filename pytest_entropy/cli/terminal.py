"""The terminal: colour, readable numbers and a progress bar, for a person at a TTY only.

Everything here is for interactive use and changes nothing else:

* Colour and number rounding apply only when standard output is a terminal (or
  ``FORCE_COLOR`` asks), never when ``NO_COLOR`` is set, ``--no-color`` is given or
  ``TERM=dumb``, and only to lines the spec does not define: the status line, the notices and
  the certification summary keep their exact text. Output that is not a terminal is
  byte-identical to a run without this module.
* Progress (files, MB/s, ETA; on Dask the workers and the dashboard of a cluster the command
  started) goes to standard error, only when it is a terminal, only after about a second of
  work, and is erased when the read ends. ``--no-progress`` turns it off.

``rich`` draws the bar when the ``rich`` extra is installed (imported only when a bar is
actually shown); without it a plain line is redrawn in place with the same figures.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping

from pytest_entropy.core.patterns import LazyPattern

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, Final, TextIO

__all__ = [
    "PlainProgressLine",
    "StyledStream",
    "TerminalProgress",
    "colour_wanted",
    "human_number",
    "humanize",
    "progress_wanted",
    "style_line",
]

PROGRESS_DELAY: Final = 1.0  # seconds of work before a bar is worth showing

_RESET: Final = "\x1b[0m"
_CODES: Final[Mapping[str, str]] = {
    "bold": "\x1b[1m",
    "dim": "\x1b[2m",
    "red": "\x1b[31m",
    "green": "\x1b[32m",
    "yellow": "\x1b[33m",
    "cyan": "\x1b[36m",
    "bold-red": "\x1b[1;31m",
}
# A line's colour, by how it starts (first match wins).
_LINE_RULES: Final = (
    (LazyPattern(r"^\s*(FAIL|error\b|ERROR\b)"), "bold-red"),
    (LazyPattern(r"^\s*warning\b"), "yellow"),
    (LazyPattern(r"^\s*(note|review)\b"), "cyan"),
    (LazyPattern(r"^\s*(report hash|read \d)"), "dim"),
    (LazyPattern(r"^\s*(entropy score|surface freedom|trial: clean)"), "bold"),
    (LazyPattern(r"^\s*trial: "), "bold-red"),
    (LazyPattern(r"^\s*\+"), "green"),
    (LazyPattern(r"^\s*-(?!\d)"), "red"),
    (LazyPattern(r"^[A-Za-z][\w ()]*( \(\d[^)]*\))?:$"), "bold"),  # a section heading
)
# A decimal with more digits than a person reads (JavaScript prints up to 17).
_LONG_DECIMAL: Final = LazyPattern(r"(?<![\w.])-?\d+\.\d{7,}(?:e[-+]?\d+)?(?![\w.])")


def human_number(value: float, significant: int = 6) -> str:
    """``value`` with at most ``significant`` significant digits, positional, no trailing
    zeros: ``-0.012712000000000001`` reads ``-0.012712``."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    digits = significant - 1 - math.floor(math.log10(abs(value)))
    digits = min(max(digits, 0), 12)
    text = f"{value:.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def humanize(line: str) -> str:
    """``line`` with every long decimal rounded for reading."""
    return _LONG_DECIMAL.sub(lambda match: human_number(float(match.group())), line)


def style_line(line: str) -> str:
    """``line`` rounded for reading and coloured by what it says."""
    line = humanize(line)
    for pattern, style in _LINE_RULES:
        if pattern.search(line):
            return f"{_CODES[style]}{line}{_RESET}"
    return line


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def colour_wanted(stream: Any, no_color: bool = False) -> bool:
    """Whether lines written to ``stream`` get colour (https://no-color.org conventions)."""
    if no_color or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return _isatty(stream)


def progress_wanted(stream: Any, no_progress: bool = False) -> bool:
    """Whether a progress bar is drawn on ``stream`` (standard error)."""
    if no_progress or os.environ.get("TERM") == "dumb":
        return False
    return _isatty(stream)


class StyledStream:
    """A text stream whose ``print_lines`` output is styled; everything else passes through.

    :func:`~pytest_entropy.cli.common.print_lines` styles a line only when its stream has
    ``style_line`` and the line is not the spec's own display.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def style_line(self, line: str) -> str:
        return style_line(line)

    def write(self, text: str) -> int:
        return self._stream.write(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return _isatty(self._stream)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class TerminalProgress:
    """A :class:`~pytest_entropy.run.progress.ProgressSink` drawn with rich on ``stream``."""

    def __init__(self, stream: TextIO, delay: float = PROGRESS_DELAY) -> None:
        self._stream = stream
        self._delay = delay
        self._bar: Any = None
        self._task: Any = None
        self._started = 0.0
        self._files = 0
        self._total_files = 0
        self._bytes = 0
        self._total_bytes: int | None = None
        self._workers = ""
        self._reads = 0

    def begin(self, files: int, total_bytes: int | None) -> None:
        self.end()  # a second read (compile's replay) starts a bar of its own
        self._reads += 1
        self._started = time.monotonic()
        self._files, self._total_files = 0, files
        self._bytes, self._total_bytes = 0, total_bytes

    def cluster(self, workers: int, dashboard: str | None) -> None:
        self._workers = f" · {workers} workers"
        if dashboard:
            self._stream.write(f"dask dashboard: {dashboard}\n")
            self._stream.flush()

    def advance(self, files: int, done_bytes: int) -> None:
        self._files += files
        self._bytes += done_bytes
        if self._bar is None:
            if time.monotonic() - self._started < self._delay or self._files >= self._total_files:
                return
            self._show()
        self._bar.update(
            self._task,
            completed=self._bytes if self._total_bytes else self._files,
            files=f"{self._files}/{self._total_files} files{self._workers}",
        )

    def end(self) -> None:
        if self._bar is not None:
            self._bar.stop()
        self._bar = None
        self._task = None

    def _show(self) -> None:
        what = "reading" if self._reads == 1 else "replaying"
        total = self._total_bytes or self._total_files
        try:
            import rich  # noqa: F401  (the optional extra: a plain line without it)
        except ImportError:
            self._bar = PlainProgressLine(self._stream, what, total, bool(self._total_bytes))
            self._task = None
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        columns: list[Any] = [TextColumn("{task.description}"), BarColumn()]
        if self._total_bytes:
            columns += [DownloadColumn(), TransferSpeedColumn()]
        columns += [TextColumn("{task.fields[files]}"), TimeRemainingColumn()]
        console = Console(file=self._stream, stderr=True)
        self._bar = Progress(*columns, console=console, transient=True)
        self._task = self._bar.add_task(what, total=total, files="")
        self._bar.start()


def _size(count: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if count < 1000 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    return f"{count:.1f} GB"  # pragma: no cover - the loop returns


class PlainProgressLine:
    """The progress bar without rich: one line redrawn in place (a carriage return, at most
    ten times a second), erased when the read ends. It takes rich's ``update``/``stop``
    calls, so :class:`TerminalProgress` drives either."""

    def __init__(self, stream: TextIO, what: str, total: int, in_bytes: bool) -> None:
        self._stream = stream
        self._what = what
        self._total = total
        self._in_bytes = in_bytes
        self._started = time.monotonic()
        self._drawn = 0.0
        self._width = 0

    def update(self, _task: Any, *, completed: int, files: str) -> None:
        now = time.monotonic()
        if now - self._drawn < 0.1 and completed < self._total:
            return
        self._drawn = now
        share = completed / self._total if self._total else 1.0
        parts = [self._what, f"{share:4.0%}"]
        elapsed = max(now - self._started, 1e-9)
        if self._in_bytes:
            parts.append(f"{_size(completed)}/{_size(self._total)} {_size(completed / elapsed)}/s")
        parts.append(files)
        if 0 < share < 1:
            parts.append(f"eta {elapsed * (1 - share) / share:.0f} s")
        line = " ".join(part for part in parts if part)
        self._stream.write("\r" + line.ljust(self._width))
        self._stream.flush()
        self._width = max(self._width, len(line))

    def stop(self) -> None:
        if self._width:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()
