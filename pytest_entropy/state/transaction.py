"""All-or-nothing writes of several state files (issue 26, item 1).

One command may change the observation pool and the compiled artifact together; each file
is replaced atomically by a rename, but a crash (or an error) between the two renames left
a new pool beside an old artifact. :func:`write_files` makes the set atomic with an undo log,
run while the caller holds the lock of every file:

1. every new content is staged beside its target (``.<name>.<random>.staged``, fsynced), and
   every target that exists gets a backup: a hard link to its current inode (a copy where the
   file system has no hard links), ``.<name>.<random>.backup``;
2. a journal naming each (staged, target, backup) is written atomically beside the first
   target (``.entropy-commit.<random>.journal``);
3. the staged files are renamed over their targets, in order;
4. the journal is removed - the commit point - and then the backups.

The recovery rule: a journal on disk means its transaction never reached its commit point,
so it is rolled back: each target that still is the file the transaction renamed in (the
staged file's device and inode, in the journal) gets its backup back (the old bytes, the
old inode) or, when it did not exist before, is removed; a target never renamed, or
replaced by another writer since, is left alone; and the leftovers go. An error in step 3
runs the same roll-back at once; a killed writer's journal is rolled back by the next
command that takes those locks (:func:`recover`), before it reads anything under them.
Either way the files hold all the old bytes or all the new ones. A reader that takes no
lock can see the files between two renames, as it always could.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pytest_entropy.state.files import (
    describe_os_error,
    fsync_directory,
    read_regular_bytes,
    stage_file,
)

__all__ = ["JOURNAL_PREFIX", "recover", "write_files"]

JOURNAL_PREFIX: Final = ".entropy-commit."
_JOURNAL_SUFFIX: Final = ".journal"
_STAGED: Final = ".staged"
_BACKUP: Final = ".backup"


def _backup(target: Path) -> Path | None:
    """A second name for ``target``'s current bytes, or ``None`` when there is no target."""
    backup = target.with_name(f".{target.name}.{os.urandom(8).hex()}{_BACKUP}")
    try:
        os.link(target, backup, follow_symlinks=False)
        return backup
    except FileNotFoundError:
        return None
    except OSError:  # no hard links here: a copy
        pass
    try:
        data = read_regular_bytes(target)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise describe_os_error(error, target, "back up") from None
    staged = stage_file(target, data, suffix=_BACKUP)
    return staged


@dataclass(frozen=True, slots=True)
class Move:
    """One file of a transaction: its staged new bytes (and that file's identity, which the
    target takes when it is renamed in), its target and the backup of its old bytes."""

    staged: Path
    target: Path
    backup: Path | None
    identity: tuple[int, int]  # (st_dev, st_ino) of the staged file

    def to_json(self) -> list[Any]:
        backup = None if self.backup is None else str(self.backup)
        return [str(self.staged), str(self.target), backup, list(self.identity)]

    @classmethod
    def from_json(cls, row: Any) -> Move:
        staged, target, backup, (device, inode) = row
        return cls(
            Path(staged), Path(target), None if backup is None else Path(backup), (device, inode)
        )


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    return info.st_dev, info.st_ino


def _roll_back(moves: Sequence[Move]) -> None:
    """Put every target back as it was (the recovery rule), then remove the leftovers.

    Only a target that still is the file this transaction renamed in (the staged file's
    identity) is restored: one that was never renamed, or that another writer replaced
    since (the reference, after a kill), is left as it is."""
    for move in moves:
        if _identity(move.target) == move.identity:
            if move.backup is not None and os.path.lexists(move.backup):
                os.replace(move.backup, move.target)  # the old bytes, inode and mtime
            else:
                os.unlink(move.target)  # it did not exist before
        for leftover in (move.backup, move.staged):
            if leftover is not None and os.path.lexists(leftover):
                os.unlink(leftover)
    for directory in {move.target.parent for move in moves}:
        fsync_directory(directory)


def _journal_text(moves: Sequence[Move]) -> bytes:
    rows = [move.to_json() for move in moves]
    return json.dumps({"version": 1, "moves": rows}).encode("utf-8")


def write_files(items: Sequence[tuple[Path, bytes]]) -> None:
    """Replace every ``(path, bytes)`` of ``items`` together: afterwards all hold the new
    bytes, or - after an error here, or a crash rolled back by :func:`recover` - all hold
    what they held before. The caller holds the lock of every path."""
    moves: list[Move] = []
    journal: Path | None = None
    current = Path(items[0][0])  # the file being written, for the message
    try:
        for path, data in items:
            target = current = Path(path)
            staged = stage_file(target, data, suffix=_STAGED)
            identity = _identity(staged)
            moves.append(Move(staged, target, None, identity or (-1, -1)))
            moves[-1] = Move(staged, target, _backup(target), moves[-1].identity)
        for directory in {move.target.parent for move in moves}:
            fsync_directory(directory)
        first = current = moves[0].target
        journal_staged = stage_file(first, _journal_text(moves), suffix=_STAGED)
        journal = first.with_name(f"{JOURNAL_PREFIX}{os.urandom(8).hex()}{_JOURNAL_SUFFIX}")
        os.replace(journal_staged, journal)
        fsync_directory(first.parent)
        for move in moves:
            current = move.target
            os.replace(move.staged, move.target)
        for directory in {move.target.parent for move in moves}:
            fsync_directory(directory)
    except BaseException as error:
        _roll_back(moves)
        if journal is not None:
            journal.unlink(missing_ok=True)
            fsync_directory(journal.parent)
        if isinstance(error, OSError):
            raise describe_os_error(error, current, "write") from None
        raise
    journal.unlink()  # the commit point
    fsync_directory(journal.parent)
    for move in moves:
        if move.backup is not None:
            move.backup.unlink(missing_ok=True)


def _moves_of(journal: Path) -> list[Move] | None:
    try:
        document: Any = json.loads(read_regular_bytes(journal))
        return [Move.from_json(row) for row in document["moves"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def recover(held: Iterable[Path]) -> None:
    """Roll back every unfinished transaction over files in ``held`` (whose locks the caller
    holds), and remove what finished or failed ones left beside them."""
    targets = {os.path.abspath(path) for path in held}
    referenced: set[str] = set()
    for directory in sorted({os.path.dirname(path) for path in targets}):
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            if not (name.startswith(JOURNAL_PREFIX) and name.endswith(_JOURNAL_SUFFIX)):
                continue
            journal = Path(directory, name)
            moves = _moves_of(journal)
            if moves is None:  # written by a rename, so never half a journal: not ours
                continue
            if not {os.path.abspath(move.target) for move in moves} <= targets:
                # Another lock guards part of it: that command's next run rolls it back.
                for move in moves:
                    referenced.update(
                        os.path.abspath(p) for p in (move.staged, move.backup) if p is not None
                    )
                continue
            _roll_back(moves)
            journal.unlink(missing_ok=True)
            fsync_directory(journal.parent)
    for target in targets:  # leftovers of transactions that finished or rolled back
        directory, base = os.path.split(target)
        prefix = f".{base}."
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            if name.startswith(prefix) and name.endswith((_STAGED, _BACKUP)):
                leftover = os.path.join(directory, name)
                if leftover not in referenced:
                    try:
                        os.unlink(leftover)
                    except OSError:
                        continue
