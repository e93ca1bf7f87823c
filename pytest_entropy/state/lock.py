"""The reference's state lock: a directory created exclusively, holding an owner record.

The record is the reference's, byte for byte in its layout: ``<token>\\n<pid>\\n<created epoch
ms>\\n`` (mode 0600) in ``<name>.lock/owner`` (mode 0700). Our token is random hex followed by
``@<host>``: the reference only ever compares tokens for equality, so it reads our record
exactly as its own, and we learn which machine holds a lock.

Whether a lock is stale is decided from that record (docs/decisions.md, "Locks are broken as
soon as their owner is provably gone"):

* the owner is on another host: its liveness cannot be checked from here, so the lock is never
  broken automatically (the timeout message says how to clear it);
* the owner's pid is not running, or it runs a process that started after the lock was
  created (the pid was reused): the lock is stale and broken at once, whatever its age;
* no readable record (also a plain file at the lock path): the reference's rule, stale once
  the lock path is older than 30 s.

Up to 50 attempts 5 ms apart, as the reference; the lock is removed afterwards only if it
still carries our token. A timeout names the lock path, its owner and how to clear it.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pytest_entropy.state.files import (
    StoreError,
    describe_os_error,
    file_type_name,
    read_regular_bytes,
)

__all__ = [
    "LOCK_ATTEMPTS",
    "LOCK_RETRY_SECONDS",
    "LOCK_STALE_MS",
    "LockOwner",
    "StoreLockTimeout",
    "describe_lock",
    "process_start_epoch",
    "read_owner",
    "state_lock",
]

LOCK_ATTEMPTS: Final = 50
LOCK_RETRY_SECONDS: Final = 0.005
LOCK_STALE_MS: Final = 30_000
# /proc gives a start time to the clock tick, and the boot time to the second: a process
# counts as started after the lock only when it is later by more than this.
START_TOLERANCE_SECONDS: Final = 1.0
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)


class StoreLockTimeout(StoreError):
    """Another process held the lock for the whole wait."""


def _host_name() -> str:
    import socket  # only where a lock is taken

    name = re.sub(r"[^A-Za-z0-9._-]", "", socket.gethostname())[:64]
    return name or "unknown-host"


@dataclass(frozen=True, slots=True)
class LockOwner:
    """An owner record: token, pid, creation time, and the host when our token names one."""

    token: str
    pid: int
    created_ms: float

    @property
    def host(self) -> str | None:
        _, separator, host = self.token.rpartition("@")
        return host if separator and host else None


def read_owner(lock_path: Path) -> LockOwner | None:
    """The owner record of a lock, or ``None`` when there is no readable one."""
    try:
        if os.path.islink(lock_path):
            return None
        text = read_regular_bytes(lock_path / "owner").decode("utf-8")
        token, pid, created = text.split("\n")[:3]
        return LockOwner(token, int(pid), float(created))
    except (OSError, ValueError, UnicodeDecodeError):
        return None


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


def _boot_epoch() -> float | None:
    try:
        with open("/proc/stat", "rb") as handle:
            for line in handle:
                if line.startswith(b"btime "):
                    return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def process_start_epoch(pid: int) -> float | None:
    """When process ``pid`` started (epoch seconds), where the platform says (Linux /proc)."""
    try:
        raw = read_regular_bytes(Path(f"/proc/{pid}/stat"))
        # The command name (field 2) is in parentheses and may hold spaces or ")".
        fields = raw[raw.rindex(b")") + 2 :].split()
        ticks = int(fields[19])  # field 22 overall: start time in clock ticks after boot
        hertz = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    boot = _boot_epoch()
    if boot is None or hertz <= 0:
        return None
    return boot + ticks / hertz


def _now_ms() -> float:
    return time.time() * 1000


def _liveness(owner: LockOwner) -> str:
    """``alive``, ``gone``, ``reused`` (the pid now runs a younger process) or ``remote``."""
    host = owner.host
    if host is not None and host != _host_name():
        return "remote"
    if not _pid_alive(owner.pid):
        return "gone"
    started = process_start_epoch(owner.pid)
    if started is not None and started > owner.created_ms / 1000 + START_TOLERANCE_SECONDS:
        return "reused"
    return "alive"


def _stale(lock_path: Path) -> bool:
    owner = read_owner(lock_path)
    if owner is not None:
        return _liveness(owner) in ("gone", "reused")
    try:
        return _now_ms() - os.lstat(lock_path).st_mtime * 1000 > LOCK_STALE_MS
    except FileNotFoundError:
        return False


def describe_lock(lock_path: Path) -> str:
    """Who holds ``lock_path``, in words, for the timeout message."""
    owner = read_owner(lock_path)
    if owner is None:
        try:
            info = os.lstat(lock_path)
        except OSError:
            return "its holder released it just now"
        age = max(0.0, time.time() - info.st_mtime)
        what = ""
        if stat.S_ISREG(info.st_mode):
            what = " (a plain file)"
        elif not stat.S_ISDIR(info.st_mode):
            what = f" ({file_type_name(info.st_mode)})"
        return (
            f"it has no readable owner record{what}, last changed {age:.1f} s ago;"
            f" it is broken once {LOCK_STALE_MS // 1000} s old"
        )
    age = max(0.0, (_now_ms() - owner.created_ms) / 1000)
    state = {
        "alive": "running",
        "gone": "no longer running",
        "reused": "its pid now belongs to a younger process",
        "remote": "cannot be checked from this host",
    }[_liveness(owner)]
    where = f"host {owner.host}" if owner.host is not None else "this host"
    return f"held by pid {owner.pid} on {where} ({state}), taken {age:.1f} s ago"


def _remove_tree(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
        return
    for child in path.iterdir():
        _remove_tree(child)
    path.rmdir()


def _break_stale(lock_path: Path) -> None:
    """Claim a stale lock by renaming it aside, re-check it, then remove it."""
    aside = lock_path.with_name(f"{lock_path.name}.stale-{os.urandom(8).hex()}")
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


def _timeout(lock_path: Path, message: str) -> StoreLockTimeout:
    return StoreLockTimeout(
        f"{message}: {lock_path} is {describe_lock(lock_path)}; if no entropy command is"
        f" running against this state directory, remove it (rm -r '{lock_path}') and retry"
    )


@contextmanager
def state_lock(
    directory: Path, lockname: str, timeout_message: str, *, attempts: int = LOCK_ATTEMPTS
) -> Iterator[str]:
    """Hold the reference-compatible lock ``directory/lockname``; yields our token."""
    lock_path = Path(directory) / lockname
    token = f"{os.urandom(16).hex()}@{_host_name()}"
    for _ in range(attempts):
        try:
            os.mkdir(lock_path, 0o700)
        except FileExistsError:
            if _stale(lock_path):
                _break_stale(lock_path)
            else:
                time.sleep(LOCK_RETRY_SECONDS)
            continue
        except OSError as error:
            raise describe_os_error(error, lock_path, "take the lock") from None
        try:
            record = f"{token}\n{os.getpid()}\n{int(_now_ms())}\n".encode()
            descriptor = os.open(
                lock_path / "owner", os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600
            )
            try:
                os.write(descriptor, record)
            finally:
                os.close(descriptor)
        except OSError as error:
            _remove_tree(lock_path)
            raise describe_os_error(error, lock_path, "take the lock") from None
        break
    else:
        raise _timeout(lock_path, timeout_message)
    try:
        yield token
    finally:
        owner = read_owner(lock_path)
        if owner is not None and owner.token == token:
            _remove_tree(lock_path)
