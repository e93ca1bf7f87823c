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
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import ModuleType

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.core.patterns import LazyPattern
from pytest_entropy.core.typing_lite import cast
from pytest_entropy.ingest.base import is_session_name
from pytest_entropy.ingest.inflation import bounded_inflation
from pytest_entropy.ingest.paths import as_path

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import IO, Any, TypeAlias

EXTRA_HINT = 'pip install "pytest-entropy[dask]"'

# A URL is a scheme followed by "://", optionally behind fsspec's chained "proto::" prefixes
# (``simplecache::s3://...``). Windows drive paths (``C:\\...``) never match.
_URL = LazyPattern(r"^[A-Za-z][A-Za-z0-9+.\-]*(::[A-Za-z][A-Za-z0-9+.\-]*)*://")
_GLOB_CHARACTERS = ("*", "?", "[")
_COPY_CHUNK = 1 << 20


def is_url(source: str | os.PathLike[str]) -> bool:
    """True for ``scheme://...`` sources (read through fsspec), False for local paths."""
    # A name without "://" is no URL: a local run never compiles the pattern.
    return isinstance(source, str) and "://" in source and _URL.match(source) is not None


def _fsspec() -> ModuleType:
    try:
        import fsspec
    except ImportError:
        raise EntropyInputError(f"session URLs need fsspec: {EXTRA_HINT}") from None
    return cast("ModuleType", fsspec)


StorageOptions: TypeAlias = "Mapping[str, Any] | None"

# Storage options whose values are not secret and help in a message when shown. Every other
# string value (keys, secrets, tokens, passwords, whatever a backend calls them) is masked.
_PUBLIC_OPTIONS = frozenset(
    {"endpoint_url", "region_name", "region", "signature_version", "project", "account_name"}
)
_MASK = "***"


def _secret_values(options: Any, key: str = "") -> Iterator[str]:
    if isinstance(options, Mapping):
        for name, value in options.items():
            yield from _secret_values(value, str(name))
    elif isinstance(options, list | tuple):
        for value in options:
            yield from _secret_values(value, key)
    elif isinstance(options, str) and len(options) >= 4 and key not in _PUBLIC_OPTIONS:
        yield options


def redact_storage_secrets(text: str, storage_options: StorageOptions) -> str:
    """``text`` with every secret-looking value of ``storage_options`` masked: the one
    place an error message from a storage backend passes before it is shown or stored."""
    # Longest first, so a secret that contains another is masked whole.
    for secret in sorted(set(_secret_values(storage_options)), key=len, reverse=True):
        text = text.replace(secret, _MASK)
    return text


def _storage_problem(what: str, error: BaseException, options: StorageOptions) -> str:
    detail = redact_storage_secrets(str(error), options) or "no detail given"
    return f"{what}: {type(error).__name__}: {detail}"


def _filesystem(url: str, storage_options: StorageOptions = None) -> tuple[Any, str]:
    fsspec = _fsspec()
    try:
        return cast("tuple[Any, str]", fsspec.core.url_to_fs(url, **dict(storage_options or {})))
    except (ValueError, ImportError) as error:
        # An unknown protocol, or one whose backend package is not installed (s3fs, gcsfs).
        problem = _storage_problem("cannot open the URL", error, storage_options)
        raise EntropyInputError(problem, source=url) from None
    except Exception as error:
        # A backend that rejects the storage options themselves (an unknown keyword, a
        # malformed value): the user's input, shown without its secrets.
        problem = _storage_problem(
            "cannot open the URL with these storage options", error, storage_options
        )
        raise EntropyInputError(problem, source=url) from None


def _basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def expand_url(url: str, storage_options: StorageOptions = None) -> list[str]:
    """The session files a URL names, as URLs, in the order they are measured.

    A file is itself; a directory means its ``*.jsonl`` and ``*.jsonl.gz`` files, names in
    UTF-16 code-unit order (as for local directories); a glob (``*``, ``?``, ``[``) means
    every file it matches, in code-unit order of the full path. Nothing matching is an input
    error, and so is a listing the storage refuses (no such bucket, denied credentials).
    """
    fs, path = _filesystem(url, storage_options)
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
    except EntropyInputError:
        raise
    except Exception as error:
        # OSError from most backends; botocore's credential errors and the like are not
        # OSErrors, but are just as much the user's input (a bucket, a key) and not a bug.
        problem = _storage_problem("cannot list the URL", error, storage_options)
        raise EntropyInputError(problem, source=url) from None
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


def url_stamp(url: str, storage_options: StorageOptions = None) -> tuple[Any, ...] | None:
    """What identifies this version of a URL's content: its size and the first version
    field the filesystem reports (ETag, generation, modification time...); ``None`` when it
    cannot be looked up."""
    fs, path = _filesystem(url, storage_options)
    try:
        # Object stores answer info() from the listing cached by expand_url; a stamp must
        # ask the storage itself, or a change between the compile's two reads goes unseen.
        fs.invalidate_cache(path)
        info = fs.info(path)
    except Exception:
        return None
    version = next((str(info[name]) for name in _VERSION_FIELDS if info.get(name) is not None), "")
    return (info.get("size"), version)


def _open(
    fs: Any, path: str, url: str, storage_options: StorageOptions, compression: str | None
) -> IO[bytes]:
    try:
        return cast("IO[bytes]", fs.open(path, "rb", compression=compression))
    except OSError as error:
        # A file that cannot be read is counted as unreadable by the caller; its message
        # must not carry a secret into the diagnostics.
        shown = redact_storage_secrets(str(error), storage_options)
        if shown != str(error):
            raise OSError(shown) from None
        raise
    except Exception as error:
        # Missing or refused credentials (botocore's NoCredentialsError is no OSError):
        # every file would fail alike, so the run stops with the URL named, as exit 2.
        problem = _storage_problem("cannot read the URL", error, storage_options)
        if "Credentials" in type(error).__name__:
            # The classic cluster mistake: the client's environment has the keys, the
            # workers' has not. Storage options travel with every task.
            problem += " (on a cluster, give every worker the settings: --storage-options)"
        raise EntropyInputError(problem, source=url) from None


def open_url(url: str, storage_options: StorageOptions = None) -> IO[bytes]:
    """Open a URL for binary streaming reads; ``.gz`` names decompress transparently, at
    most to the inflation cap in force (``ingest.inflation``)."""
    fs, path = _filesystem(url, storage_options)
    if not path.endswith(".gz"):
        return _open(fs, path, url, storage_options, None)
    return bounded_inflation(_open(fs, path, url, storage_options, "gzip"))


@contextmanager
def _local_copy(url: str, storage_options: StorageOptions = None) -> Iterator[Path]:
    """A worker-local temporary copy of a remote file, under the same name.

    Copied in 1 MiB chunks, so memory stays bounded; it is removed afterwards.
    """
    import shutil
    import tempfile  # only for a remote file (issue 32: a local run never loads them)

    fs, path = _filesystem(url, storage_options)
    directory = tempfile.mkdtemp(prefix="pytest-entropy-")
    try:
        target = as_path(directory) / _basename(path)
        with _open(fs, path, url, storage_options, None) as source, open(target, "wb") as sink:
            shutil.copyfileobj(source, sink, _COPY_CHUNK)
        yield target
    finally:
        shutil.rmtree(directory, ignore_errors=True)
