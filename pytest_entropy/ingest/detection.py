"""What the session format modules share to detect their files and list their directories.

A format's detector sees a file's path and first 64 KiB (``--format auto``); its directory
rule says which files a directory means when the format is named. Both are small
predicates over these helpers, so each format module stays about its own format.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.core.patterns import LazyPattern
from pytest_entropy.ingest.base import is_listed_file, is_session_name
from pytest_entropy.ingest.foreign import head_records, open_foreign
from pytest_entropy.ingest.guard import TRACE_KIND

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, Final

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


def file_contains(path: Path, needle: bytes) -> bool:
    """Whether the whole file holds ``needle`` (streamed; chunks overlap by its length)."""
    tail = b""
    with open_foreign(path) as stream:
        while True:
            chunk = stream.read(_SCAN_CHUNK)
            if not chunk:
                return False
            if needle in tail + chunk[: len(needle)] or needle in chunk:
                return True
            tail = chunk[-len(needle) :]


def head_objects(head: bytes) -> list[dict[str, Any]]:
    """The JSON objects among the first records the head holds."""
    return [value for value in head_records(head) if type(value) is dict]


def has_pattern(pattern: bytes) -> Callable[[bytes], bool]:
    """A predicate: whether ``pattern`` (compiled once, at the first head it is asked
    about) occurs in a head."""
    compiled = LazyPattern(pattern)
    return lambda head: compiled.search(head) is not None


def document_start(head: bytes) -> bytes:
    """The first non-blank byte (``[`` for an array document, ``{`` for an object)."""
    return head.lstrip()[:1]


def looks_like_messages(head: bytes) -> bool:
    """The first record is a message or a conversation (when it can be read from the head;
    a first record longer than the head is given the benefit of the doubt)."""
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


def native_directory_files(path: Path) -> list[Path]:
    """The native rule: a directory's ``*.jsonl`` and ``*.jsonl.gz`` files, by name."""
    names = [
        entry.name
        for entry in os.scandir(path)
        if is_session_name(entry.name) and is_listed_file(entry)
    ]
    return [path / name for name in sorted(names, key=code_unit_key)]


def sorted_files(root: Path, keep: Callable[[str], bool], *, recursive: bool) -> list[Path]:
    """Files under ``root`` whose name passes ``keep``, by relative path in code-unit order."""
    found: list[tuple[str, Path]] = []
    if recursive:
        for directory, subdirectories, names in os.walk(root):
            subdirectories.sort()
            base = Path(directory)
            for name in names:
                if keep(name) and is_listed_file(base / name):
                    relative = (base / name).relative_to(root).as_posix()
                    found.append((relative, base / name))
    else:
        for entry in os.scandir(root):
            if keep(entry.name) and is_listed_file(entry):
                found.append((entry.name, root / entry.name))
    found.sort(key=lambda item: code_unit_key(item[0]))
    return [path for _, path in found]


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
