"""Session files on disk: discovery, windows and per-file scans (spec §4.2, §9.3).

Every file is scanned alone with its own model cursor. Reads stream line by line; a file is
never held in memory whole.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Collection, Sequence

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.core.plain_record import Record, field
from pytest_entropy.core.typing_lite import cast
from pytest_entropy.ingest.base import (
    NATIVE_FORMAT,
    ReadOptions,
    is_listed_file,
    is_session_name,
    open_session,
)
from pytest_entropy.ingest.paths import as_path, normal_path
from pytest_entropy.ingest.registry import directory_files, directory_listing
from pytest_entropy.sources.urls import expand_url, is_url

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from pathlib import Path

DEFAULT_WINDOW = 8
# What a stat of a named path may fail with for a path that is simply not there (as
# pathlib's exists() and is_dir() read them); any other failure is reported as such.
_MISSING = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})


class SessionListing(Record):
    """The session sources a run reads, in order, and the files its directory walks passed
    over (``(path, why)``: a surface or repair file, or unrecognised), which the read
    counts without reading them."""

    files: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def expand_session_paths(
    paths: Sequence[str | os.PathLike[str]], options: ReadOptions | None = None
) -> list[Path]:
    """Files as given; a directory means its ``*.jsonl`` (and ``*.jsonl.gz``) files, by name.

    Names sort in UTF-16 code-unit order. A foreign ``options.session_format`` may mean
    other files (``docs/formats.md``); ``auto`` adds Claude Code's
    ``<session>/subagents/*.jsonl``, and walks a directory without ``*.jsonl`` for the
    files a session reader claims (:func:`session_listing` also says what it passed over).
    A missing or unreadable path is an input error; an unreadable file inside a directory
    is counted when it is read (``--strict``: an error).
    """
    return [as_path(name) for name in session_listing(paths, options).files]


_STDIN = "/dev/stdin"


def session_listing(
    paths: Sequence[str | os.PathLike[str]],
    options: ReadOptions | None = None,
    exclude: Collection[str | os.PathLike[str]] = (),
) -> SessionListing:
    """Local paths expanded as :func:`expand_session_paths` says, with what the directory
    walks passed over; ``exclude`` names files that are surfaces or repair tables (the
    run's ``--surface`` and ``--repairs``), never session files of a walk."""
    excluded = frozenset(os.path.abspath(item) for item in exclude)
    listing = SessionListing()
    for raw in paths:
        path = normal_path(raw)  # the text pathlib would give, without importing it
        if path == "-":  # standard input, as a pipe (the pipe rules of docs/formats.md)
            path = _STDIN
        try:
            mode: int | None = os.stat(path).st_mode
        except OSError as error:
            if error.errno not in _MISSING:
                reason = error.strerror or type(error).__name__
                raise EntropyInputError(f"cannot read: {reason}", source=path) from None
            mode = None
        except ValueError:  # a NUL in the name
            mode = None
        if mode is not None and stat.S_ISDIR(mode):
            found = directory_listing(path, options, excluded)
            listing.files.extend(os.fspath(item) for item in found.files)
            listing.skipped.extend((os.fspath(item), why) for item, why in found.skipped)
        elif mode is not None:
            _check_readable(path)
            listing.files.append(path)
        else:
            raise EntropyInputError("no such file or directory", source=path)
    return listing


def _check_readable(path: str) -> None:
    """Fail now, naming the file, if a session file the user named cannot be read: left to
    the scan, it would only be counted, and the run would pass on nothing."""
    try:
        if stat.S_ISFIFO(os.stat(path).st_mode):
            # Not opened: a writer waiting in its open would be connected, and left writing
            # into a pipe no one reads once this closed it again (SIGPIPE), the read that
            # follows finding it empty. Whether it may be read is asked without opening it.
            if not os.access(path, os.R_OK):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
            return
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            regular = stat.S_ISREG(os.fstat(descriptor).st_mode)
        finally:
            os.close(descriptor)
        if regular:  # a pipe (``<(...)``) must not lose the byte a test read would take
            with open_session(path) as stream:
                stream.read(1)
    except (OSError, EOFError) as error:
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
        message = f"cannot read the session file: {reason}"
        raise EntropyInputError(message, source=str(path)) from None


# -------------------------------------------------------------------------- windows


class SessionFile(Record, frozen=True):
    path: Path
    mtime_ms: float


def _stamp(path: Path) -> SessionFile:
    try:
        return SessionFile(path, os.stat(path).st_mtime_ns / 1e6)
    except OSError:
        return SessionFile(path, 0.0)


def _newest_first(files: list[SessionFile]) -> list[SessionFile]:
    files.sort(key=lambda item: code_unit_key(str(item.path)))
    files.sort(key=lambda item: -item.mtime_ms)
    return files


def _session_files_in(directory: Path) -> list[SessionFile]:
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    out = []
    for entry in entries:
        try:
            if is_session_name(entry.name) and is_listed_file(entry):
                out.append(_stamp(as_path(entry.path)))
        except OSError:
            continue
    return out


def directory_session_files(
    directory: Path, limit: int = DEFAULT_WINDOW, options: ReadOptions | None = None
) -> list[SessionFile]:
    """The newest ``limit`` session files of one directory, newest first.

    Without ``options`` (or with the native format) these are the files directly inside it;
    a foreign format lists what a directory means for it.
    """
    if options is None or options.session_format == NATIVE_FORMAT:
        files = _session_files_in(directory)
    else:
        try:
            files = [_stamp(as_path(path)) for path in directory_files(directory, options)]
        except EntropyInputError:
            files = []
    return _newest_first(files)[: max(1, limit)]


def expand_session_sources(
    sources: Sequence[str | os.PathLike[str]], options: ReadOptions | None = None
) -> list[str]:
    """Local paths and URLs expanded in the order given, as strings a worker can open.

    Local paths expand as :func:`~pytest_entropy.sources.locate.expand_session_paths` does (with
    ``options``, a foreign format's directory rule); URLs as :func:`expand_url` (always the
    native rule).
    """
    return session_source_listing(sources, options).files


def session_source_listing(
    sources: Sequence[str | os.PathLike[str]],
    options: ReadOptions | None = None,
    exclude: Collection[str | os.PathLike[str]] = (),
) -> SessionListing:
    """:func:`expand_session_sources` with what the directory walks passed over."""
    listing = SessionListing()
    for source in sources:
        if is_url(source):
            storage = options.storage_options if options is not None else None
            listing.files.extend(expand_url(cast("str", source), storage))
        else:
            found = session_listing([source], options, exclude)
            listing.files.extend(found.files)
            listing.skipped.extend(found.skipped)
    return listing
