"""Session files behind ``fsspec`` URLs: expansion on the client, streaming reads on workers.

A session source is a local path or a URL such as ``s3://bucket/sessions/`` or
``memory://corpus/a.jsonl``. URLs follow the native rules for local paths: a directory (or
object-store prefix) means its ``*.jsonl`` and ``*.jsonl.gz`` files with names in UTF-16
code-unit order, ``.gz`` decompresses transparently, and a file that fails while being read
contributes nothing and is counted as unreadable. Reads stream in 1 MiB chunks, straight into
the scanner for the native format, or into a worker-local temporary copy when the format must
be detected or read by a foreign reader; a file is never held in memory whole.

``fsspec`` is part of the optional ``dask`` extra and is imported only when a URL is used.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import IO, Any, cast

from . import sessions
from .core.errors import EntropyInputError
from .core.jscompat import code_unit_key
from .core.meter import MeterState
from .core.records import AuditCall, Trace, ValueObservation
from .ingest.fabric import ScanDiagnostics, SessionScanner
from .sessions import NATIVE_FORMAT, SESSION_SUFFIXES, ReadOptions, expand_session_paths

__all__ = [
    "EXTRA_HINT",
    "expand_session_sources",
    "expand_url",
    "is_url",
    "meter_url",
    "open_url",
    "scan_source",
    "scan_url",
    "url_stamp",
]

EXTRA_HINT = 'pip install "pytest-entropy[dask]"'

# A URL is a scheme followed by "://", optionally behind fsspec's chained "proto::" prefixes
# (``simplecache::s3://...``). Windows drive paths (``C:\\...``) never match.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*(::[A-Za-z][A-Za-z0-9+.\-]*)*://")
_GLOB_CHARACTERS = ("*", "?", "[")
_COPY_CHUNK = 1 << 20


def is_url(source: str | os.PathLike[str]) -> bool:
    """True for ``scheme://...`` sources (read through fsspec), False for local paths."""
    return isinstance(source, str) and _URL.match(source) is not None


def _fsspec() -> ModuleType:
    try:
        import fsspec
    except ImportError:
        raise EntropyInputError(f"session URLs need fsspec: {EXTRA_HINT}") from None
    return cast(ModuleType, fsspec)


def _filesystem(url: str) -> tuple[Any, str]:
    fsspec = _fsspec()
    try:
        return cast(tuple[Any, str], fsspec.core.url_to_fs(url))
    except (ValueError, ImportError) as error:
        # An unknown protocol, or one whose backend package is not installed (s3fs, gcsfs).
        raise EntropyInputError(f"cannot open the URL: {error}", source=url) from None


def _is_session_name(name: str) -> bool:
    return name.endswith(SESSION_SUFFIXES)


def _basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def expand_url(url: str) -> list[str]:
    """The session files a URL names, as URLs, in the order they are measured.

    A file is itself; a directory means its ``*.jsonl`` and ``*.jsonl.gz`` files, names in
    UTF-16 code-unit order (as for local directories); a glob (``*``, ``?``, ``[``) means
    every file it matches, in code-unit order of the full path. Nothing matching is an input
    error.
    """
    fs, path = _filesystem(url)
    try:
        if any(character in path for character in _GLOB_CHARACTERS):
            matches = [match for match in fs.glob(path) if fs.isfile(match)]
            if not matches:
                raise EntropyInputError("no file matches the pattern", source=url)
            return [fs.unstrip_protocol(match) for match in sorted(matches, key=code_unit_key)]
        if fs.isdir(path):
            names = [
                _basename(entry["name"])
                for entry in fs.ls(path, detail=True)
                if entry.get("type") == "file" and _is_session_name(_basename(entry["name"]))
            ]
            # Children are spelled by appending to the URL as given, which keeps any chained
            # protocol prefix (``simplecache::``) that unstrip_protocol would drop.
            base = url.rstrip("/")
            return [f"{base}/{name}" for name in sorted(names, key=code_unit_key)]
        if fs.isfile(path):
            return [url]
    except OSError as error:
        raise EntropyInputError(f"cannot list the URL: {error}", source=url) from None
    raise EntropyInputError("no such file or directory", source=url)


def expand_session_sources(
    sources: Sequence[str | os.PathLike[str]], options: ReadOptions | None = None
) -> list[str]:
    """Local paths and URLs expanded in the order given, as strings a worker can open.

    Local paths expand as :func:`~pytest_entropy.sessions.expand_session_paths` does (with
    ``options``, a foreign format's directory rule); URLs as :func:`expand_url` (always the
    native rule).
    """
    out: list[str] = []
    for source in sources:
        if is_url(source):
            out.extend(expand_url(cast(str, source)))
        elif options is None:
            out.extend(str(path) for path in expand_session_paths([source]))
        else:
            out.extend(str(path) for path in expand_session_paths([source], options))
    return out


_VERSION_FIELDS = (
    "ETag",
    "etag",
    "generation",
    "mtime",
    "LastModified",
    "last_modified",
    "created",
)


def url_stamp(url: str) -> tuple[Any, ...] | None:
    """What identifies this version of a URL's content: its size and the first version
    field the filesystem reports (ETag, generation, modification time...); ``None`` when it
    cannot be looked up."""
    fs, path = _filesystem(url)
    try:
        info = fs.info(path)
    except (OSError, ValueError):
        return None
    version = next((str(info[name]) for name in _VERSION_FIELDS if info.get(name) is not None), "")
    return (info.get("size"), version)


def open_url(url: str) -> IO[bytes]:
    """Open a URL for binary streaming reads; ``.gz`` names decompress transparently."""
    fs, path = _filesystem(url)
    compression = "gzip" if path.endswith(".gz") else None
    return cast(IO[bytes], fs.open(path, "rb", compression=compression))


@contextmanager
def _local_copy(url: str) -> Iterator[Path]:
    """A worker-local temporary copy of a remote file, under the same name.

    Copied in 1 MiB chunks, so memory stays bounded; it is removed afterwards.
    """
    fs, path = _filesystem(url)
    directory = tempfile.mkdtemp(prefix="pytest-entropy-")
    try:
        target = Path(directory) / _basename(path)
        with fs.open(path, "rb") as source, open(target, "wb") as sink:
            shutil.copyfileobj(source, sink, _COPY_CHUNK)
        yield target
    finally:
        shutil.rmtree(directory, ignore_errors=True)


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
                readable = sessions.scan_file(
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
    return sessions.scan_file(
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
