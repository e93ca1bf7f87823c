"""State files on disk: the compiled artifact and the observation pool (spec §1.8-§1.9).

The lock is the reference's (:mod:`pytest_entropy.state.lock`), so this tool and the reference
can share a state directory. Writes are atomic (:mod:`pytest_entropy.state.files`); identical
bytes are not rewritten; a damaged file is reported with the exact message and never
overwritten. Every document is checked with the loader that will read it before it is
written, so the store never writes a file it would then reject.

Read-modify-write without lost updates: :func:`update_path` changes one file under its lock.
A command that computes for a long time from state files (``compile --write``, a ``watch``
tick) takes a :class:`Snapshot` of each, computes without holding a lock, then
:func:`commit`\\ s: under the locks it writes only if every snapshotted file still holds the
bytes it read, and otherwise reports a conflict so the caller computes again from the new
state (:func:`update_many` is that loop). A commit of several files is all or nothing
(:mod:`pytest_entropy.state.transaction`): a crash or an error between two of its renames
leaves every file as it was.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

from pytest_entropy.core.artifact import parse_compiled_surface_artifact
from pytest_entropy.core.canonical import file_bytes
from pytest_entropy.core.pool import parse_observation_pool
from pytest_entropy.core.v3.artifact import (
    parse_compiled_surface_artifact as parse_compiled_surface_artifact_v3,
)
from pytest_entropy.ingest.jsonparse import JSONParseError, parse_json_bytes
from pytest_entropy.state.files import (
    StoreDamagedError,
    StoreError,
    ensure_directory,
    ensure_state_directory,
    existing_differs,
    os_error_reason,
    read_regular_bytes,
    write_file_atomic,
)
from pytest_entropy.state.lock import StoreLockTimeout, state_lock
from pytest_entropy.state.transaction import recover, write_files

__all__ = [
    "COMPILED",
    "COMPILED_V3",
    "POOL",
    "LoadResult",
    "SaveResult",
    "Snapshot",
    "StoreConflictError",
    "StoreDamagedError",
    "StoreError",
    "StoreKind",
    "StoreLockTimeout",
    "Write",
    "commit",
    "document_bytes",
    "document_text",
    "ensure_directory",
    "ensure_state_directory",
    "load",
    "load_path",
    "lock_name",
    "save",
    "save_path",
    "snapshot",
    "state_lock",
    "update_many",
    "update_path",
    "write_document",
    "write_file_atomic",
]

# How often a computation is redone because the state changed under it before a conflict is
# reported: each redo follows another writer's successful commit, so this bounds a burst of
# concurrent writers, not the number of writers overall.
COMMIT_ATTEMPTS: Final = 16

T = TypeVar("T")


class StoreConflictError(StoreError):
    """The state files kept changing while a computation ran; nothing was written."""


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
# The same file under metric v3: version-2 artifacts, and version-1 ones as migration data.
COMPILED_V3: Final = StoreKind(
    COMPILED.filename, COMPILED.label, COMPILED.timeout_message, parse_compiled_surface_artifact_v3
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


# ------------------------------------------------------------------------- reading


def _parse(raw: bytes, kind: StoreKind) -> LoadResult:
    try:
        value, _ = parse_json_bytes(raw)
    except JSONParseError:
        return LoadResult(error=f"{kind.label} is malformed JSON")
    parsed = kind.parser(value)
    if parsed is None:
        return LoadResult(error=f"{kind.label} is invalid")
    return LoadResult(file=parsed)


def _load_raw(path: Path, kind: StoreKind) -> tuple[bytes | None, LoadResult]:
    try:
        raw = read_regular_bytes(path)
    except FileNotFoundError:
        return None, LoadResult()
    except OSError as error:
        message = os_error_reason(error, path, writing=False)
        return None, LoadResult(error=f"{kind.label} is unreadable: {message[:200]}")
    return raw, _parse(raw, kind)


def load_path(path: Path, kind: StoreKind) -> LoadResult:
    """Load and validate one state file (no lock: a reader sees old or new bytes)."""
    return _load_raw(Path(path), kind)[1]


def load(state_dir: Path, kind: StoreKind) -> LoadResult:
    """Load ``compiled.json`` or ``observation-pool.json`` from a state directory."""
    return load_path(Path(state_dir) / kind.filename, kind)


# -------------------------------------------------------------------------- writing


def _non_finite_at(value: Any) -> str | None:
    """Where ``value`` holds a number JSON cannot spell (it would be written as null)."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if type(item) is float and not math.isfinite(item):
            return where or "the top level"
        if type(item) is dict:
            stack.extend((f"{where}.{key}" if where else str(key), v) for key, v in item.items())
        elif type(item) is list:
            stack.extend((f"{where}[{index}]", v) for index, v in enumerate(item))
    return None


def _repeated_plan_ref(value: Any) -> str | None:
    """A ref that two normal-form plans of ``value`` name (a version-2 artifact holds one
    plan per ref; a surface that declares a ref twice derives two)."""
    plans = value.get("normalizations") if type(value) is dict else None
    seen: set[str] = set()
    for plan in plans if type(plans) is list else ():
        ref = plan.get("ref") if type(plan) is dict else None
        if type(ref) is str:
            if ref in seen:
                return ref
            seen.add(ref)
    return None


def _article(label: str) -> str:
    return "an" if label[:1] in "aeiou" else "a"


def document_text(path: Path, kind: StoreKind, value: dict[str, Any]) -> str:
    """The file text of ``value``, once the loader that reads ``path`` accepts it
    (:func:`document_bytes` decoded)."""
    return document_bytes(path, kind, value).decode("utf-8")


def document_bytes(path: Path, kind: StoreKind, value: dict[str, Any]) -> bytes:
    """The file's bytes for ``value`` (UTF-8), once the loader that reads ``path`` accepts
    them. They stay bytes from the writer to the disk: a text that holds one astral
    character would be four bytes a character as a ``str``.

    Raises :class:`StoreError` (nothing is written) when the loader would reject the text -
    for example a ``gate.beforeScore`` of ``1e400``, which JSON writes as ``null``.
    """
    data = file_bytes(value)
    problem = _parse(data, kind).error
    if problem is not None:
        where = _non_finite_at(value)
        detail = f"; {where} is a number JSON cannot represent" if where is not None else ""
        repeated = _repeated_plan_ref(value)
        if repeated is not None:
            detail += (
                f"; two normal-form plans name {repeated}: the surface declares that ref"
                " more than once"
            )
        raise StoreError(
            f"{path}: refusing to write {_article(kind.label)} {kind.label} its own loader"
            " would reject"
            f" ({problem}{detail}); nothing was written"
        )
    return data


def write_document(path: Path, kind: StoreKind, value: dict[str, Any]) -> bool:
    """Validate (:func:`document_bytes`) and write atomically, without the lock."""
    return write_file_atomic(Path(path), document_bytes(Path(path), kind, value))


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
    *,
    keep: Callable[[dict[str, Any] | None, dict[str, Any]], bool] | None = None,
) -> SaveResult:
    """Read, change and write one state file under its lock (no lost updates).

    ``change`` receives the current file (``None`` when there is none). Damage on disk is
    raised (spec §1.8) and the file is left exactly as it was. When ``keep(current, value)``
    is true nothing is written (the file keeps its bytes and its mtime, or stays absent) and
    the result says ``written=False``.
    """
    path = Path(path)
    ensure_state_directory(path.parent)
    with state_lock(path.parent, lock_name(path), kind.timeout_message):
        _sweep_temporaries(path)
        recover([path])  # a killed multi-file commit is rolled back before anything is read
        current = load_path(path, kind)
        if current.error is not None:
            raise StoreDamagedError(current.error, source=str(path))
        value = change(current.file)
        if keep is not None and keep(current.file, value):
            return SaveResult(value, False)
        written = write_file_atomic(path, document_bytes(path, kind, value))
    return SaveResult(value, written)


def save_path(path: Path, kind: StoreKind, value: dict[str, Any]) -> SaveResult:
    """Save under the lock (spec §1.8): damage on disk is raised, never overwritten."""
    return update_path(path, kind, lambda _current: value)


def save(state_dir: Path, kind: StoreKind, value: dict[str, Any]) -> SaveResult:
    """Save ``compiled.json`` or ``observation-pool.json`` into a state directory."""
    return save_path(Path(state_dir) / kind.filename, kind, value)


# ---------------------------------------------------------- optimistic read-modify-write


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What one state file held when it was read: its bytes (``None``: no file) and value."""

    path: Path
    kind: StoreKind
    raw: bytes | None
    file: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Write:
    """One document to write by :func:`commit`."""

    path: Path
    kind: StoreKind
    value: dict[str, Any]


def snapshot(path: Path, kind: StoreKind) -> Snapshot:
    """Read one state file for a later :func:`commit`.

    Damage raises :class:`StoreDamagedError` with the spec's message as its ``problem`` and
    the path as its ``source``.
    """
    path = Path(path)
    raw, loaded = _load_raw(path, kind)
    if loaded.error is not None:
        raise StoreDamagedError(loaded.error, source=str(path))
    return Snapshot(path, kind, raw, loaded.file)


def commit(snapshots: Sequence[Snapshot], writes: Sequence[Write]) -> list[SaveResult] | None:
    """Write ``writes`` (in order) iff every snapshotted file is unchanged; else ``None``.

    Takes the lock of every file involved, in one fixed order (so two commits never wait on
    each other crosswise), re-reads the snapshotted files under them, and writes nothing
    when any of them changed since its snapshot: the caller computes again from the new
    state. A file written but not snapshotted is saved as :func:`save_path` saves (damage on
    disk is raised, never overwritten). Every document is validated before the first write.
    """
    kinds = {os.path.abspath(item.path): item.kind for item in snapshots}
    kinds.update((os.path.abspath(item.path), item.kind) for item in writes)
    # Everything is validated and encoded before the first byte is written.
    texts = [document_bytes(item.path, item.kind, item.value) for item in writes]
    with ExitStack() as locks:
        for target in sorted(
            kinds, key=lambda name: (os.path.dirname(name), lock_name(Path(name)))
        ):
            path = Path(target)
            ensure_state_directory(path.parent)
            locks.enter_context(
                state_lock(path.parent, lock_name(path), kinds[target].timeout_message)
            )
        recover([Path(target) for target in kinds])  # before the snapshots are compared
        for held in snapshots:
            raw, current = _load_raw(held.path, held.kind)
            if current.error is not None:
                raise StoreDamagedError(current.error, source=str(held.path))
            if raw != held.raw:
                return None
        checked = {os.path.abspath(held.path) for held in snapshots}
        for item in writes:
            if os.path.abspath(item.path) not in checked:
                current = load_path(item.path, item.kind)
                if current.error is not None:
                    raise StoreDamagedError(current.error, source=str(item.path))
        for item in writes:
            _sweep_temporaries(item.path)
        changed = [
            index
            for index, (item, data) in enumerate(zip(writes, texts, strict=True))
            if existing_differs(item.path, data)  # refuses a symlink or directory, first
        ]
        if len(changed) > 1:  # all or nothing across the files (state/transaction.py)
            write_files([(writes[index].path, texts[index]) for index in changed])
        else:
            for index in changed:
                write_file_atomic(writes[index].path, texts[index])
    return [SaveResult(item.value, index in changed) for index, item in enumerate(writes)]


def update_many(
    reads: Sequence[tuple[Path, StoreKind]],
    plan: Callable[[Sequence[Snapshot]], tuple[T, Sequence[Write]]],
    *,
    attempts: int = COMMIT_ATTEMPTS,
    first: Sequence[Snapshot] | None = None,
) -> tuple[T, list[SaveResult]]:
    """Snapshot ``reads``, ``plan`` from them, :func:`commit`; redo while the state changes.

    ``plan`` runs without any lock held and may take long; it returns its result and the
    documents to write. ``first`` are snapshots of ``reads`` the caller already took.
    Raises :class:`StoreConflictError` after ``attempts`` conflicts.
    """
    for attempt in range(attempts):
        if attempt == 0 and first is not None:
            snapshots = list(first)
        else:
            snapshots = [snapshot(path, kind) for path, kind in reads]
        result, writes = plan(snapshots)
        saved = commit(snapshots, writes)
        if saved is not None:
            return result, saved
    names = ", ".join(str(path) for path, _ in reads)
    raise StoreConflictError(
        f"{names}: changed {attempts} times while this command computed from them (other"
        " commands are writing the same state directory); nothing was written, run it again"
    )
