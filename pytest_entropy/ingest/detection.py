"""What the session format modules share to detect their files and list their directories.

A format's detector sees a file's path and first 64 KiB (``--format auto``); its directory
rule says which files a directory means when the format is named. Both are small
predicates over these helpers, so each format module stays about its own format.
"""

from __future__ import annotations

import os

from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.core.patterns import LazyPattern
from pytest_entropy.ingest.base import is_listed_file, is_session_name, open_session
from pytest_entropy.ingest.guard import TRACE_KIND
from pytest_entropy.ingest.paths import join_path, normal_path, path_like

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Final

    from pytest_entropy.ingest.paths import PathT

__all__ = [
    "FABRIC_MARK",
    "document_start",
    "file_contains",
    "has_pattern",
    "head_objects",
    "is_json_name",
    "is_jsonl_name",
    "is_walked_name",
    "looks_like_messages",
    "native_directory_files",
    "sorted_files",
]

# A native (fabric) trace line holds this; a file that has one is read natively, so every
# foreign detector that could also match a fabric file refuses it.
FABRIC_MARK: Final = TRACE_KIND.encode()
_SCAN_CHUNK: Final = 1 << 20
_CONVERSATION_KEYS: Final = ("role", "messages", "choices", "output", "request", "response")


# --------------------------------------------------------------------------- detection


def file_contains(path: str | os.PathLike[str], needle: bytes) -> bool:
    """Whether the whole file holds ``needle`` (streamed; chunks overlap by its length)."""
    tail = b""
    with open_session(path) as stream:
        while True:
            chunk = stream.read(_SCAN_CHUNK)
            if not chunk:
                return False
            if needle in tail + chunk[: len(needle)] or needle in chunk:
                return True
            tail = chunk[-len(needle) :]


def head_objects(head: bytes) -> list[dict[str, Any]]:
    """The JSON objects among the first records the head holds."""
    from pytest_entropy.ingest.foreign import head_records  # a detector got this far

    return [value for value in head_records(head) if type(value) is dict]


def has_pattern(pattern: bytes) -> Callable[[bytes], bool]:
    """A predicate: whether ``pattern`` (compiled once, at the first head it is asked
    about) occurs in a head."""
    compiled = LazyPattern(pattern)
    return lambda head: compiled.search(head) is not None


# The blanks ``bytes.strip()`` removes, which are also what ``\s`` matches in a bytes pattern.
BLANKS: Final = b" \t\n\r\x0b\x0c"


def document_start(head: bytes) -> bytes:
    """The first non-blank byte (``[`` for an array document, ``{`` for an object)."""
    first = head[:1]
    if first and first not in BLANKS:  # nearly every head: nothing to strip, no copy made
        return first
    return head.lstrip()[:1]


def blanks_end(head: bytes, at: int = 0) -> int:
    """The position of the first non-blank byte of ``head`` at or after ``at`` (its length
    when there is none)."""
    while at < len(head) and head[at] in BLANKS:
        at += 1
    return at


def looks_like_messages(head: bytes) -> bool:
    """The first record is a message or a conversation (when it can be read from the head;
    a first record longer than the head is given the benefit of the doubt)."""
    from pytest_entropy.ingest.foreign import head_records  # a detector got this far

    records = head_records(head, limit=1)
    if not records:
        return True
    first = records[0]
    if type(first) is list:
        first = first[0] if first else None
    if type(first) is not dict:
        return False
    return any(key in first for key in _CONVERSATION_KEYS) or first.get("type") in (
        "message",
        "function_call",
        "function_call_output",
    )


# ---------------------------------------------------------------------- directory rules


def native_directory_files(path: PathT, special: list[PathT] | None = None) -> list[PathT]:
    """The native rule: a directory's ``*.jsonl`` and ``*.jsonl.gz`` files, by name (as
    the kind of path given: str for a str, else :class:`pathlib.Path`). Entries of such a
    name that are neither a regular file nor a directory (a FIFO, a dangling link) go to
    ``special`` when given."""
    names = []
    for entry in os.scandir(path):
        if not is_session_name(entry.name):
            continue
        if is_listed_file(entry):
            names.append(entry.name)
        elif special is not None and not os.path.isdir(entry.path):
            special.append(path_like(path, join_path(path, entry.name)))
    if special:
        special.sort(key=lambda item: code_unit_key(os.fspath(item)))
    return [path_like(path, join_path(path, name)) for name in sorted(names, key=code_unit_key)]


def sorted_files(
    root: PathT,
    keep: Callable[[str], bool],
    *,
    recursive: bool,
    special: list[PathT] | None = None,
) -> list[PathT]:
    """Files under ``root`` whose name passes ``keep``, by relative path in code-unit order
    (as the kind of path given: str for a str, else :class:`pathlib.Path`); entries that
    pass ``keep`` but are neither a regular file nor a directory go to ``special``, in the
    same order, when given."""
    top = normal_path(root)
    found: list[tuple[str, str]] = []
    passed: list[tuple[str, str]] = []
    if recursive:
        for directory, subdirectories, names in os.walk(top):
            subdirectories.sort()
            for name in names:
                full = join_path(directory, name)
                if not keep(name):
                    continue
                relative = os.path.relpath(full, top).replace(os.sep, "/")
                if is_listed_file(full):
                    found.append((relative, full))
                elif not os.path.isdir(full):
                    passed.append((relative, full))
    else:
        for entry in os.scandir(top):
            if not keep(entry.name):
                continue
            if is_listed_file(entry):
                found.append((entry.name, join_path(top, entry.name)))
            elif not os.path.isdir(entry.path):
                passed.append((entry.name, join_path(top, entry.name)))
    found.sort(key=lambda item: code_unit_key(item[0]))
    if special is not None:
        passed.sort(key=lambda item: code_unit_key(item[0]))
        special.extend(path_like(root, path) for _, path in passed)
    return [path_like(root, path) for _, path in found]


def is_jsonl_name(name: str) -> bool:
    """A JSON Lines file name (``.jsonl``, or gzipped)."""
    return name.endswith((".jsonl", ".jsonl.gz"))


def is_json_name(name: str) -> bool:
    """A JSON document file name (``.json``, or gzipped)."""
    return name.endswith((".json", ".json.gz"))


def is_walked_name(name: str) -> bool:
    """A file a directory walk under ``--format auto`` considers: ``.json``, ``.jsonl``,
    ``.gz`` or ``.eval`` (Inspect's zipped logs); whatever a session reader then claims is
    read."""
    return name.endswith((".json", ".jsonl", ".gz", ".eval"))
