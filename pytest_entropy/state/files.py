"""The file operations under the state store: bounded reads, atomic writes, plain errors.

Every operation here finishes in bounded time whatever sits at the path: a FIFO, socket or
device is refused before it is opened (``lstat`` first, then ``O_NONBLOCK`` in case it was
swapped in between), so no read waits for a writer that never comes. Operating-system
failures that a user can cause and fix - a read-only directory, a file where a directory
should be - become :class:`StoreError` naming the path and the problem (exit 2), never a
traceback.
"""

from __future__ import annotations

import errno
import os
import stat

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.ingest.paths import as_path

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Final

__all__ = [
    "StoreDamagedError",
    "StoreError",
    "describe_os_error",
    "ensure_directory",
    "ensure_state_directory",
    "existing_differs",
    "file_type_name",
    "fsync_directory",
    "os_error_reason",
    "read_regular_bytes",
    "stage_file",
    "write_file_atomic",
]

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)


class StoreError(EntropyInputError):
    """A state file could not be read or written (a usage or input problem: exit 2)."""


class StoreDamagedError(StoreError):
    """The file on disk is damaged; it blocks writes and is left exactly as it is."""


def file_type_name(mode: int) -> str:
    """What kind of file a mode describes, in words: ``"a FIFO"``, ``"a directory"``, ..."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _not_regular(path: Path, mode: int) -> OSError:
    return OSError(errno.EINVAL, f"not a regular file: {path} is {file_type_name(mode)}")


def read_regular_bytes(path: Path) -> bytes:
    """Read a regular file; refuse (``OSError``) a symlink, FIFO, device or directory.

    ``FileNotFoundError`` propagates unchanged, so callers can tell "no file" apart.
    """
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise OSError(errno.ELOOP, "refusing to follow a symbolic link")
    if not stat.S_ISREG(info.st_mode):
        raise _not_regular(path, info.st_mode)
    # O_NONBLOCK: if a FIFO replaced the file since the lstat, opening it must not wait.
    descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    try:
        opened = os.fstat(descriptor)
        if not stat.S_ISREG(opened.st_mode):
            raise _not_regular(path, opened.st_mode)
        chunks = []
        while True:
            chunk = os.read(descriptor, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(descriptor)


def _blocking_component(path: Path) -> Path | None:
    """The first existing component of ``path`` that is not a directory, if any."""
    current = as_path(path.anchor if path.is_absolute() else ".")
    for part in path.parts[1:] if path.is_absolute() else path.parts:
        current = current / part
        try:
            info = os.stat(current)
        except OSError:
            return None
        if not stat.S_ISDIR(info.st_mode):
            return current
    return None


def os_error_reason(error: OSError, path: Path, *, writing: bool = True) -> str:
    """Why an operation on ``path`` failed, in words (names a file blocking a directory)."""
    reason = error.strerror or str(error)
    permission = isinstance(error, PermissionError) or error.errno in (errno.EROFS, errno.EACCES)
    if writing and permission:
        return f"{reason} (the directory is read-only or belongs to someone else)"
    if isinstance(error, (FileExistsError, NotADirectoryError)) or error.errno == errno.ENOTDIR:
        blocker = _blocking_component(as_path(path))
        if blocker is not None:
            return f"{blocker} is a file, not a directory"
    return reason


def describe_os_error(error: OSError, path: Path, action: str) -> StoreError:
    """A :class:`StoreError` saying which path failed, doing what, and why, in words."""
    return StoreError(f"{path}: cannot {action}: {os_error_reason(error, path)}")


def ensure_directory(directory: Path) -> None:
    """Create a state directory (mode 0700) and its parents as needed."""
    directory = as_path(directory)
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        raise describe_os_error(error, directory, "create the state directory") from None


GITIGNORE: Final = ".gitignore"
GITIGNORE_TEXT: Final = (
    "# Created by pytest-entropy: the observation pool keeps verbatim argument values.\n*\n"
)


def ensure_state_directory(directory: Path) -> bool:
    """Create a state directory (mode 0700) with a ``.gitignore`` holding ``*``, as
    ``.pytest_cache`` does, so its files are never committed by accident; returns whether
    it was created. An existing directory is left as it is (no ``.gitignore`` added)."""
    directory = as_path(directory)
    if directory.is_dir():
        return False
    ensure_directory(directory.parent)
    try:
        directory.mkdir(mode=0o700)
    except FileExistsError:
        return False  # another writer made it first, and wrote its .gitignore
    except OSError as error:
        raise describe_os_error(error, directory, "create the state directory") from None
    write_file_atomic(directory / GITIGNORE, GITIGNORE_TEXT, mode=0o644)
    return True


def _fsync_directory(directory: Path) -> None:
    if os.name == "nt":  # pragma: no cover - directories cannot be opened on Windows
        return
    descriptor = os.open(directory, os.O_RDONLY | _CLOEXEC)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def existing_differs(path: Path, data: bytes) -> bool:
    """Whether ``path`` must be written: refuses anything at it but a regular file."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError as error:
        raise describe_os_error(error, path, "write") from None
    if stat.S_ISLNK(info.st_mode):
        raise StoreError(f"{path}: refusing to write through a symbolic link")
    if stat.S_ISDIR(info.st_mode):
        raise StoreError(f"{path}: is a directory")
    if not stat.S_ISREG(info.st_mode):
        raise StoreError(f"{path}: refusing to replace {file_type_name(info.st_mode)}")
    try:
        return read_regular_bytes(path) != data
    except OSError:
        return True  # unreadable but regular: replacing it is what the caller asked for


def stage_file(path: Path, data: bytes, *, suffix: str = ".tmp", mode: int = 0o600) -> Path:
    """A new file beside ``path`` holding ``data``, fsynced (``.<name>.<random><suffix>``).

    Created exclusively, never through a symbolic link; removed again when writing fails.
    """

    path = as_path(path)
    ensure_directory(path.parent)
    temporary = path.with_name(f".{path.name}.{os.urandom(8).hex()}{suffix}")
    try:
        descriptor = os.open(
            temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, mode
        )
    except OSError as error:
        raise describe_os_error(error, path, "write") from None
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(descriptor, view)
                view = view[written:]
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise describe_os_error(error, path, "write") from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return temporary


def fsync_directory(directory: Path) -> None:
    """Make the renames in ``directory`` durable."""
    _fsync_directory(directory)


def write_file_atomic(path: Path, text: str | bytes, *, mode: int = 0o600) -> bool:
    """Write ``text`` (a ``str`` written as UTF-8, or the bytes themselves) to ``path``
    atomically; returns False when the bytes were identical.

    Refuses anything at ``path`` that is not a regular file (a symlink is not followed, a
    directory, FIFO or device is not replaced). The temporary file is created exclusively
    beside the target, fsynced, renamed over it, and the directory fsynced.
    """
    path = as_path(path)
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    if not existing_differs(path, data):
        return False
    temporary = stage_file(path, data, mode=mode)
    try:
        os.replace(temporary, path)
        _fsync_directory(path.parent)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise describe_os_error(error, path, "write") from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return True
