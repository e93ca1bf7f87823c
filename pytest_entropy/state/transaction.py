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
so it is rolled back: each backup is renamed over its target (the old bytes, the old inode),
a target that did not exist before and was already renamed in is removed, and the leftovers
go. An error in step 3 runs the same roll-back at once; a killed writer's journal is rolled
back by the next command that takes those locks (:func:`recover`), before it reads anything
under them. Either way the files hold all the old bytes or all the new ones. A reader that
takes no lock can see the files between two renames, as it always could.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterable, Sequence
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
    backup = target.with_name(f".{target.name}.{secrets.token_hex(8)}{_BACKUP}")
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


def _roll_back(moves: Sequence[tuple[Path, Path, Path | None]]) -> None:
    """Put every target back as it was (the recovery rule), then remove the leftovers."""
    for staged, target, backup in moves:
        if backup is not None:
            if os.path.lexists(backup):
                os.replace(backup, target)
            if os.path.lexists(backup):  # it was the target's own inode: rename did nothing
                os.unlink(backup)
        elif not os.path.lexists(staged) and os.path.lexists(target):
            os.unlink(target)  # it did not exist before: the renamed-in file goes
        if os.path.lexists(staged):
            os.unlink(staged)
    for directory in {target.parent for _, target, _ in moves}:
        fsync_directory(directory)


def _journal_text(moves: Sequence[tuple[Path, Path, Path | None]]) -> bytes:
    rows = [
        [str(staged), str(target), None if b is None else str(b)] for staged, target, b in moves
    ]
    return json.dumps({"version": 1, "moves": rows}).encode("utf-8")


def write_files(items: Sequence[tuple[Path, bytes]]) -> None:
    """Replace every ``(path, bytes)`` of ``items`` together: afterwards all hold the new
    bytes, or - after an error here, or a crash rolled back by :func:`recover` - all hold
    what they held before. The caller holds the lock of every path."""
    moves: list[tuple[Path, Path, Path | None]] = []
    journal: Path | None = None
    current = Path(items[0][0])  # the file being written, for the message
    try:
        for path, data in items:
            target = current = Path(path)
            staged = stage_file(target, data, suffix=_STAGED)
            moves.append((staged, target, None))
            moves[-1] = (staged, target, _backup(target))
        for directory in {target.parent for _, target, _ in moves}:
            fsync_directory(directory)
        first = current = moves[0][1]
        journal_staged = stage_file(first, _journal_text(moves), suffix=_STAGED)
        journal = first.with_name(f"{JOURNAL_PREFIX}{secrets.token_hex(8)}{_JOURNAL_SUFFIX}")
        os.replace(journal_staged, journal)
        fsync_directory(first.parent)
        for staged, target, _ in moves:
            current = target
            os.replace(staged, target)
        for directory in {target.parent for _, target, _ in moves}:
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
    for _, _, backup in moves:
        if backup is not None:
            backup.unlink(missing_ok=True)


def _moves_of(journal: Path) -> list[tuple[Path, Path, Path | None]] | None:
    try:
        document: Any = json.loads(read_regular_bytes(journal))
        return [
            (Path(staged), Path(target), None if backup is None else Path(backup))
            for staged, target, backup in document["moves"]
        ]
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
            if not {os.path.abspath(target) for _, target, _ in moves} <= targets:
                # Another lock guards part of it: that command's next run rolls it back.
                referenced.update(os.path.abspath(p) for m in moves for p in m if p is not None)
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
