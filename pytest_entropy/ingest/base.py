"""What every session reader shares: how to read, which files are sessions, opening them."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable, Mapping

from pytest_entropy.core.plain_record import Record, field
from pytest_entropy.core.typing_lite import cast
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.inflation import DEFAULT_MAX_INFLATED_BYTES, bounded_inflation

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import IO, Any, TypeAlias

SESSION_SUFFIXES = (".jsonl", ".jsonl.gz")
NATIVE_FORMAT = "fabric"
# What a directory walk did with a file it did not list as a session file.
SKIPPED_SURFACE = "surface"
SKIPPED_UNRECOGNIZED = "unrecognized"
SKIPPED_COMPANION = "companion"
SKIPPED_SPECIAL = "special"  # a session-named entry that is no regular file (see below)


class ReadOptions(Record, frozen=True):
    """How to read session files; travels (pickled) to worker processes.

    ``session_format`` is ``auto``, ``fabric`` (the native trace-envelope JSONL) or the name
    of a registered foreign reader. ``surface`` lets foreign readers classify failure
    stages by replaying recorded arguments against the declared schemas. ``ref_prefix``
    goes before every foreign tool name (empty: the format's own default, ``pi.`` for Pi
    sessions); ``redact`` drops secret-like values from the audits a reader writes.
    ``storage_options`` are the fsspec storage options every URL is opened with (endpoint,
    keys, ...), on the client and on every worker; they may hold credentials, so they are
    left out of the ``repr`` (and so of every log line and task description that shows it).
    ``max_inflated_bytes`` caps what one compressed file may inflate to (``ingest.inflation``).
    ``metric_version`` is the generation the scanner reads as (2, the reference; 3, the
    upstream's current one: see ``SessionScanner``).
    """

    session_format: str = "auto"
    surface: dict[str, Any] | None = None
    ref_prefix: str = ""
    redact: bool = False
    storage_options: Mapping[str, Any] | None = field(default=None, repr=False)
    max_inflated_bytes: int = DEFAULT_MAX_INFLATED_BYTES
    metric_version: int = 2


# A foreign reader turns one file into native session lines (model_change lines and
# fabric_exec trace lines with audits), so everything downstream - the guard, the meter,
# `convert` - treats every format alike. A format module names its reader in its FORMAT.
SessionReader: TypeAlias = "Callable[[Path, ReadOptions, ScanDiagnostics], Iterable[bytes]]"
# A surface reader turns a parsed tool list (and its source, for messages) into a snapshot.
SurfaceReader: TypeAlias = "Callable[[Any, str], dict[str, Any]]"
# A detector tells from a file's path and first 64 KiB whether it is in its format.
SessionDetector: TypeAlias = "Callable[[Path, bytes], bool]"
# A directory rule lists the session files a directory means, in reading order.
DirectoryRule: TypeAlias = "Callable[[Path], list[Path]]"


class SessionFormat(Record, frozen=True):
    """One foreign session format: everything the registry needs to know about it.

    ``detector`` decides ``--format auto`` (``None``: the format is read only when named);
    ``directory_files`` lists what a directory means when the format is named (``None``:
    the native rule, ``*.jsonl`` and ``*.jsonl.gz`` by name). Each format module defines
    one of these as ``FORMAT``; ``ingest/registry.py`` lists them in detection order.
    """

    name: str
    reader: SessionReader
    detector: SessionDetector | None = None
    directory_files: DirectoryRule | None = None
    # The files its reader reads beside a session file (BFCL's score file), which a
    # directory walk then counts as companions, not as unrecognised.
    companions: Callable[[Path], list[Path]] | None = None


class SurfaceFormat(Record, frozen=True):
    """One surface (tool list) format: its ``--surface-format`` name, its reader and the
    ref prefix its tools get when none is given (Pi's are ``pi.<tool>``)."""

    name: str
    reader: SurfaceReader
    ref_prefix: str = ""


def is_session_name(name: str) -> bool:
    return name.endswith(SESSION_SUFFIXES)


def is_listed_file(entry: os.DirEntry[str] | str | os.PathLike[str]) -> bool:
    """Whether a directory listing keeps this entry as a file: a regular file (through
    links), or a link that loops (``a.jsonl -> b.jsonl -> a.jsonl``). A loop is kept so its
    read fails and is counted as an unreadable file, instead of failing the whole listing
    (``DirEntry.is_file`` raises) or vanishing (``Path.is_file`` says False)."""
    try:
        if isinstance(entry, os.DirEntry):
            return entry.is_file()
        return stat.S_ISREG(os.stat(entry).st_mode)
    except OSError as error:
        return error.errno == errno.ELOOP


def special_file_problem(path: str | os.PathLike[str]) -> str:
    """Why a directory listing passed over a session-named entry that is no regular file:
    a FIFO, socket or device is never opened from a walk (a FIFO without a writer would
    read as empty, or wait), and a link to nothing cannot be read."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        if error.errno == errno.ENOENT and os.path.islink(path):
            return "a symbolic link to nothing"
        return error.strerror or type(error).__name__
    kind = (
        "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "not a regular file"
    )
    return f"{kind} inside a directory is not read (name it alone to read it)"


def open_without_waiting(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open a file for binary reading without waiting for a FIFO's writer.

    A plain ``open`` of a FIFO blocks until a writer comes, which may be never. Here a FIFO
    is opened non-blocking and then switched back: a pipe with a writer (``<(...)``) reads
    as usual, one without reads as empty, so nothing hangs on a stray FIFO.
    """
    try:
        fifo = stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        fifo = False  # the open below names the problem
    if not fifo or not hasattr(os, "O_NONBLOCK"):
        return open(path, "rb")
    import fcntl

    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        # Reads block again from here on; with no writer connected they return EOF.
        flags = fcntl.fcntl(descriptor, fcntl.F_GETFL)
        fcntl.fcntl(descriptor, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
    except BaseException:
        os.close(descriptor)
        raise
    return os.fdopen(descriptor, "rb")


def open_session(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open a session file for binary reading; ``.gz`` files decompress transparently. A
    FIFO never blocks the open (:func:`open_without_waiting`)."""
    raw = open_without_waiting(path)
    if not os.fspath(path).endswith(".gz"):
        return raw
    import gzip  # only for a compressed file: a run over plain files never loads it

    stream = gzip.GzipFile(filename=str(path), mode="rb", fileobj=raw)
    stream.myfileobj = raw  # type: ignore[assignment]  # closed with the stream, as gzip.open does
    return bounded_inflation(cast("IO[bytes]", stream))  # at most --max-inflated-bytes
