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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import IO, Any, cast

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.ingest.base import is_session_name

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
                if entry.get("type") == "file" and is_session_name(_basename(entry["name"]))
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
