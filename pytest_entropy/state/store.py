"""State files on disk: the compiled artifact and the observation pool (spec §1.8-§1.9).

The lock is the reference's, so this tool and the reference can share a state directory:
a directory created exclusively (``mkdir``, mode 0700) holding a file ``owner`` with
``<token>\\n<pid>\\n<created epoch ms>\\n`` (mode 0600). Up to 50 attempts 5 ms apart; an
existing lock is broken only when its owner record is older than 30 s *and* its process is
gone (or, with no readable owner record, when the lock path itself is older than 30 s). The
lock is removed afterwards only if it still carries our token.

Writes are atomic: a temporary file created exclusively in the target directory (never
following a symlink), fsync, rename, fsync of the directory; identical bytes are not
rewritten. A damaged file is reported with the exact message and never overwritten.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pytest_entropy.core.artifact import parse_compiled_surface_artifact
from pytest_entropy.core.canonical import file_text
from pytest_entropy.core.errors import EntropyError
from pytest_entropy.core.pool import parse_observation_pool
from pytest_entropy.ingest.jsonparse import JSONParseError, parse_json_bytes

__all__ = [
    "COMPILED",
    "POOL",
    "LoadResult",
    "SaveResult",
    "StoreDamagedError",
    "StoreError",
    "StoreKind",
    "StoreLockTimeout",
    "agent_state_dir",
    "default_state_dir",
    "load",
    "load_path",
    "lock_name",
    "save",
    "save_path",
    "state_lock",
    "update_path",
    "write_file_atomic",
]

LOCK_ATTEMPTS: Final = 50
LOCK_RETRY_SECONDS: Final = 0.005
LOCK_STALE_MS: Final = 30_000
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)


class StoreError(EntropyError):
    """A state file could not be read or written."""


class StoreDamagedError(StoreError):
    """The file on disk is damaged; it blocks writes and is left exactly as it is."""


class StoreLockTimeout(StoreError):
    """Another process held the lock for the whole wait."""


@dataclass(frozen=True, slots=True)
class StoreKind:
    """One kind of state file: its default name, message label, lock message and parser."""

    filename: str
    label: str
    timeout_message: str
    parser: Callable[[Any], dict[str, Any] | None]


COMPILED: Final = StoreKind(
    "compiled.json",
    "compiled surface",
    "Timed out waiting for the compiled entropy surface lock",
    parse_compiled_surface_artifact,
)
POOL: Final = StoreKind(
    "observation-pool.json",
    "observation pool",
    "Timed out waiting for the observation pool lock",
    parse_observation_pool,
)


@dataclass(frozen=True, slots=True)
class LoadResult:
    """``{}`` (no file), ``{file}`` or ``{error}`` (spec §1.8)."""

    file: dict[str, Any] | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.file is not None:
            out["file"] = self.file
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(frozen=True, slots=True)
class SaveResult:
    file: dict[str, Any]
    written: bool


def default_state_dir(cwd: str | os.PathLike[str] | None = None) -> Path:
    """``.entropy/`` under the current (or given) directory."""
    return Path(cwd if cwd is not None else os.getcwd()) / ".entropy"


def agent_state_dir(agent_dir: str | os.PathLike[str]) -> Path:
    """Where a Pi agent directory keeps its entropy state."""
    return Path(agent_dir) / "fabric" / "entropy"


# ------------------------------------------------------------------------- reading


def _read_bytes(path: Path) -> bytes:
    """Read a regular file without following a symlink at ``path``."""
    descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        chunks = []
        while True:
            chunk = os.read(descriptor, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(descriptor)


def load_path(path: Path, kind: StoreKind) -> LoadResult:
    """Load and validate one state file (no lock: a reader sees old or new bytes)."""
    try:
        if path.is_symlink():
            raise OSError(errno.ELOOP, "refusing to follow a symbolic link")
        raw = _read_bytes(path)
    except FileNotFoundError:
        return LoadResult()
    except OSError as error:
        message = error.strerror or str(error)
        return LoadResult(error=f"{kind.label} is unreadable: {message[:200]}")
    try:
        value, _ = parse_json_bytes(raw)
    except JSONParseError:
        return LoadResult(error=f"{kind.label} is malformed JSON")
    parsed = kind.parser(value)
    if parsed is None:
        return LoadResult(error=f"{kind.label} is invalid")
    return LoadResult(file=parsed)


def load(state_dir: Path, kind: StoreKind) -> LoadResult:
    """Load ``compiled.json`` or ``observation-pool.json`` from a state directory."""
    return load_path(Path(state_dir) / kind.filename, kind)


# -------------------------------------------------------------------------- locking


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if os.name == "nt":  # pragma: no cover - exercised on Windows only
        import ctypes

        handle = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)  # type: ignore[attr-defined]
        if not handle:
            return False
        ctypes.windll.kernel32.CloseHandle(handle)  # type: ignore[attr-defined]
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _owner(lock_path: Path) -> tuple[str, int, float] | None:
    try:
        if lock_path.is_symlink():
            return None
        text = _read_bytes(lock_path / "owner").decode("utf-8")
        token, pid, created = text.split("\n")[:3]
        return token, int(pid), float(created)
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def _now_ms() -> float:
    return time.time() * 1000


def _stale(lock_path: Path) -> bool:
    owner = _owner(lock_path)
    if owner is not None:
        _, pid, created = owner
        return _now_ms() - created > LOCK_STALE_MS and not _pid_alive(pid)
    try:
        return _now_ms() - os.lstat(lock_path).st_mtime * 1000 > LOCK_STALE_MS
    except FileNotFoundError:
        return False


def _remove_tree(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
        return
    for child in path.iterdir():
        _remove_tree(child)
    path.rmdir()


def _break_stale(lock_path: Path) -> None:
    """Claim a stale lock by renaming it aside, re-check it, then remove it."""
    aside = lock_path.with_name(f"{lock_path.name}.stale-{secrets.token_hex(8)}")
    try:
        os.rename(lock_path, aside)
    except OSError:
        return  # someone else claimed or released it first
    if _stale(aside):
        _remove_tree(aside)
        return
    try:  # it came back to life between the check and the claim: put it back
        os.rename(aside, lock_path)
    except OSError:
        _remove_tree(aside)


@contextmanager
def state_lock(
    directory: Path, lockname: str, timeout_message: str, *, attempts: int = LOCK_ATTEMPTS
) -> Iterator[str]:
    """Hold the reference-compatible lock ``directory/lockname``; yields our token."""
    lock_path = directory / lockname
    token = secrets.token_hex(16)
    for _ in range(attempts):
        try:
            os.mkdir(lock_path, 0o700)
        except FileExistsError:
            if _stale(lock_path):
                _break_stale(lock_path)
            else:
                time.sleep(LOCK_RETRY_SECONDS)
            continue
        try:
            record = f"{token}\n{os.getpid()}\n{int(_now_ms())}\n".encode()
            descriptor = os.open(
                lock_path / "owner", os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600
            )
            try:
                os.write(descriptor, record)
            finally:
                os.close(descriptor)
        except OSError:
            _remove_tree(lock_path)
            raise
        break
    else:
        raise StoreLockTimeout(timeout_message)
    try:
        yield token
    finally:
        owner = _owner(lock_path)
        if owner is not None and owner[0] == token:
            _remove_tree(lock_path)


# -------------------------------------------------------------------------- writing


def _fsync_directory(directory: Path) -> None:
    if os.name == "nt":  # pragma: no cover - directories cannot be opened on Windows
        return
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def ensure_directory(directory: Path) -> None:
    """Create a state directory (mode 0700) and its parents as needed."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)


def write_file_atomic(path: Path, text: str, *, mode: int = 0o600) -> bool:
    """Write ``text`` to ``path`` atomically; returns False when the bytes were identical.

    Refuses a directory or a symlink at ``path`` (it is neither clobbered nor followed).
    The temporary file is created exclusively beside the target.
    """
    path = Path(path)
    data = text.encode("utf-8")
    if path.is_symlink():
        raise StoreError(f"{path}: refusing to write through a symbolic link")
    if path.is_dir():
        raise StoreError(f"{path}: is a directory")
    try:
        if _read_bytes(path) == data:
            return False
    except FileNotFoundError:
        pass
    except OSError:
        pass
    ensure_directory(path.parent)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(descriptor, view)
                view = view[written:]
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)
    return True


def lock_name(path: Path) -> str:
    """The lock beside a state file: ``compiled.json`` -> ``compiled.lock``."""
    return Path(path).stem + ".lock"


def _sweep_temporaries(path: Path) -> None:
    """Remove temporary files a killed writer left beside ``path``.

    Every writer of a state file holds its lock while its temporary file exists, so a
    temporary found while we hold the lock belongs to a writer that died mid-save.
    """
    prefix = f".{path.name}."
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(prefix) and entry.name.endswith(".tmp"):
            try:
                if entry.is_file(follow_symlinks=False):
                    os.unlink(entry.path)
            except OSError:
                continue


def update_path(
    path: Path,
    kind: StoreKind,
    change: Callable[[dict[str, Any] | None], dict[str, Any]],
) -> SaveResult:
    """Read, change and write one state file under its lock (no lost updates).

    ``change`` receives the current file (``None`` when there is none). Damage on disk is
    raised (spec §1.8) and the file is left exactly as it was.
    """
    path = Path(path)
    ensure_directory(path.parent)
    with state_lock(path.parent, lock_name(path), kind.timeout_message):
        _sweep_temporaries(path)
        current = load_path(path, kind)
        if current.error is not None:
            raise StoreDamagedError(current.error)
        value = change(current.file)
        written = write_file_atomic(path, file_text(value))
    return SaveResult(value, written)


def save_path(path: Path, kind: StoreKind, value: dict[str, Any]) -> SaveResult:
    """Save under the lock (spec §1.8): damage on disk is raised, never overwritten."""
    return update_path(path, kind, lambda _current: value)


def save(state_dir: Path, kind: StoreKind, value: dict[str, Any]) -> SaveResult:
    """Save ``compiled.json`` or ``observation-pool.json`` into a state directory."""
    return save_path(Path(state_dir) / kind.filename, kind, value)
