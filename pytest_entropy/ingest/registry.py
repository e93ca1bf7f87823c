"""The one registry of session and surface formats: readers, detectors, directory rules.

Nothing imports this module at plugin load (the readers are imported with it), so
``import pytest_entropy`` never pays for them. ``docs/formats.md`` documents each
format; the detectors below decide ``--format auto`` from a file's first 64 KiB.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.ingest import (
    anthropic,
    bfcl,
    claude_code,
    mcp_jsonrpc,
    openai_chat,
    openhands,
    pi,
    tau_bench,
    tool_lists,
    toolbench,
)
from pytest_entropy.ingest.base import (
    NATIVE_FORMAT,
    ReadOptions,
    SessionReader,
    SurfaceReader,
    is_session_name,
    open_session,
)
from pytest_entropy.ingest.foreign import head_records, open_foreign
from pytest_entropy.ingest.guard import TRACE_KIND

SESSION_READERS: dict[str, SessionReader] = {}
# Surface readers by name; the native snapshot is always there.
SURFACE_READERS: dict[str, SurfaceReader] = {"snapshot": tool_lists.read_snapshot}
# The ref prefix a format gets when none is given (Pi's tools are ``pi.<tool>``).
SURFACE_DEFAULT_PREFIXES: dict[str, str] = {}
# Content sniffers for `auto`: (name, predicate over the file's first bytes), in order.
SESSION_DETECTORS: list[tuple[str, Callable[[Path, bytes], bool]]] = []
# Which files a directory means for a format named explicitly: directory -> files in order.
# Formats without a rule use the native one (`*.jsonl`, `*.jsonl.gz`).
SESSION_DIRECTORY_RULES: dict[str, Callable[[Path], list[Path]]] = {}


def session_formats() -> list[str]:
    """Every name ``--format`` accepts, ``auto`` and the native ``fabric`` first."""
    return ["auto", NATIVE_FORMAT, *sorted(SESSION_READERS)]


def resolve_format(path: Path, options: ReadOptions) -> str:
    """The format of one file: the explicit choice, or what its first bytes look like."""
    chosen = options.session_format
    if chosen != "auto":
        if chosen != NATIVE_FORMAT and chosen not in SESSION_READERS:
            known = ", ".join(sorted(["auto", NATIVE_FORMAT, *SESSION_READERS]))
            raise EntropyInputError(f"unknown session format {chosen!r} (known: {known})")
        return chosen
    if not SESSION_DETECTORS:
        return NATIVE_FORMAT
    try:
        with open_session(path) as stream:
            head = stream.read(64 << 10)
    except (OSError, EOFError):
        return NATIVE_FORMAT
    for name, detect in SESSION_DETECTORS:
        if detect(path, head):
            return name
    return NATIVE_FORMAT


def native_directory_files(path: Path) -> list[Path]:
    """The native rule: a directory's ``*.jsonl`` and ``*.jsonl.gz`` files, by name."""
    names = [
        entry.name for entry in os.scandir(path) if is_session_name(entry.name) and entry.is_file()
    ]
    return [path / name for name in sorted(names, key=code_unit_key)]


def directory_files(path: Path, options: ReadOptions | None = None) -> list[Path]:
    """The session files a directory means for the chosen format (see ``docs/formats.md``)."""
    chosen = options.session_format if options is not None else "auto"
    rule = SESSION_DIRECTORY_RULES.get(chosen, native_directory_files)
    try:
        return rule(path)
    except OSError as error:
        raise EntropyInputError(
            f"cannot list the directory: {error.strerror}", source=str(path)
        ) from None


_FABRIC_MARK: Final = TRACE_KIND.encode()
_SCAN_CHUNK: Final = 1 << 20

SESSION_FORMAT_NAMES: Final = (
    "pi",
    "claude-code",
    "openai",
    "anthropic",
    "mcp",
    "bfcl",
    "tau-bench",
    "openhands",
    "toolbench",
)


def _file_contains(path: Path, needle: bytes) -> bool:
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


def _records(head: bytes) -> list[dict[str, Any]]:
    return [value for value in head_records(head) if type(value) is dict]


def _has(pattern: bytes) -> Callable[[bytes], bool]:
    compiled = re.compile(pattern)
    return lambda head: compiled.search(head) is not None


_jsonrpc = _has(rb'"jsonrpc"\s*:\s*"2\.0"')
_openai_calls = _has(rb'"tool_calls"\s*:|"function_call"\s*:|"role"\s*:\s*"tool"')
_anthropic_blocks = _has(rb'"type"\s*:\s*"tool_use"|"type"\s*:\s*"tool_result"')


def _detect_pi(path: Path, head: bytes) -> bool:
    """A Pi session header first and a ``toolCall`` somewhere, but no fabric trace anywhere
    (a fabric session is read natively, exactly as before this reader existed)."""
    if _FABRIC_MARK in head:
        return False
    records = _records(head)
    if not records or records[0].get("type") != "session":
        return False
    return _file_contains(path, b'"toolCall"') and not _file_contains(path, _FABRIC_MARK)


_CLAUDE_SESSION = re.compile(rb'"sessionId"\s*:\s*"')
_CLAUDE_EVENT = re.compile(rb'"type"\s*:\s*"(?:user|assistant|progress|system|summary)"')


def _detect_claude_code(path: Path, head: bytes) -> bool:
    """Events with ``sessionId``, ``uuid`` and a Claude Code event type (found in the raw
    head, so one huge first event cannot hide them)."""
    return (
        _FABRIC_MARK not in head
        and _CLAUDE_SESSION.search(head) is not None
        and re.search(rb'"uuid"\s*:', head) is not None
        and _CLAUDE_EVENT.search(head) is not None
    )


_BFCL_ENTRY: Final = re.compile(rb'\A\s*\{\s*"id"\s*:\s*"[^"\n]*"\s*,\s*"result"\s*:')


def _detect_bfcl(path: Path, head: bytes) -> bool:
    """A result entry first: ``{"id": "<test id>", "result": ...`` (BFCL writes it so)."""
    return _BFCL_ENTRY.match(head) is not None


def _document_start(head: bytes) -> bytes:
    return head.lstrip()[:1]


def _detect_tau_bench(path: Path, head: bytes) -> bool:
    return (
        _document_start(head) == b"["
        and re.search(rb'"task_id"\s*:', head) is not None
        and re.search(rb'"traj"\s*:', head) is not None
    )


_EVENT_SOURCE = re.compile(rb'"source"\s*:\s*"(?:agent|user|environment)"')


def _detect_openhands(path: Path, head: bytes) -> bool:
    if _document_start(head) == b"[":
        return (
            _EVENT_SOURCE.search(head) is not None
            and re.search(rb'"(action|observation)"\s*:', head) is not None
        )
    # Instances are single lines often longer than the head: look for a history array of
    # events in the raw bytes.
    return (
        _document_start(head) == b"{"
        and re.search(rb'"history"\s*:\s*\[\s*\{', head) is not None
        and _EVENT_SOURCE.search(head) is not None
        and re.search(rb'"(action|observation)"\s*:', head) is not None
    )


_TREE_NODE = re.compile(rb'"node_type"\s*:\s*"(?:Action|Action Input|Thought)"')


def _detect_toolbench(path: Path, head: bytes) -> bool:
    """One JSON object holding DFSDT tree nodes (``Action``/``Action Input``/``Thought``)."""
    return _document_start(head) == b"{" and _TREE_NODE.search(head) is not None


def _detect_mcp(path: Path, head: bytes) -> bool:
    return _FABRIC_MARK not in head and _jsonrpc(head) and b"tools/call" in head


_CONVERSATION_KEYS: Final = ("role", "messages", "choices", "output", "request", "response")


def _looks_like_messages(head: bytes) -> bool:
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


def _detect_anthropic(path: Path, head: bytes) -> bool:
    return _FABRIC_MARK not in head and _anthropic_blocks(head) and _looks_like_messages(head)


def _detect_openai(path: Path, head: bytes) -> bool:
    return _FABRIC_MARK not in head and _openai_calls(head) and _looks_like_messages(head)


# ---------------------------------------------------------------- directory rules


def _sorted_files(root: Path, keep: Callable[[str], bool], *, recursive: bool) -> list[Path]:
    """Files under ``root`` whose name passes ``keep``, by relative path in code-unit order."""
    found: list[tuple[str, Path]] = []
    if recursive:
        for directory, subdirectories, names in os.walk(root):
            subdirectories.sort()
            base = Path(directory)
            for name in names:
                if keep(name) and (base / name).is_file():
                    relative = (base / name).relative_to(root).as_posix()
                    found.append((relative, base / name))
    else:
        for entry in os.scandir(root):
            if keep(entry.name) and entry.is_file():
                found.append((entry.name, root / entry.name))
    found.sort(key=lambda item: code_unit_key(item[0]))
    return [path for _, path in found]


def _jsonl(name: str) -> bool:
    return name.endswith((".jsonl", ".jsonl.gz"))


def _json(name: str) -> bool:
    return name.endswith((".json", ".json.gz"))


def _with_subagents(root: Path) -> list[Path]:
    """``*.jsonl`` beside each session's ``<session>/subagents/*.jsonl`` (Claude Code)."""
    files = [(path.name, path) for path in _sorted_files(root, _jsonl, recursive=False)]
    for entry in os.scandir(root):
        subagents = Path(entry.path) / "subagents"
        if entry.is_dir() and subagents.is_dir():
            for path in _sorted_files(subagents, _jsonl, recursive=False):
                files.append((f"{entry.name}/subagents/{path.name}", path))
    files.sort(key=lambda item: code_unit_key(item[0]))
    return [path for _, path in files]


def _bfcl_results(root: Path) -> list[Path]:
    return _sorted_files(root, lambda name: name.endswith("_result.json"), recursive=True)


def _json_documents(root: Path) -> list[Path]:
    return _sorted_files(root, _json, recursive=False)


def _json_tree(root: Path) -> list[Path]:
    return _sorted_files(root, _json, recursive=True)


def _openhands_files(root: Path) -> list[Path]:
    return _sorted_files(root, lambda name: _json(name) or _jsonl(name), recursive=False)


# ------------------------------------------------------------------------- register


def _register() -> None:
    """Add every foreign reader, detector and directory rule to the registries."""
    readers: dict[str, Any] = {
        "pi": pi.read_pi_session,
        "claude-code": claude_code.read_claude_code,
        "openai": openai_chat.read_openai_chat,
        "anthropic": anthropic.read_anthropic_messages,
        "mcp": mcp_jsonrpc.read_mcp_log,
        "bfcl": bfcl.read_bfcl_results,
        "tau-bench": tau_bench.read_tau_bench,
        "openhands": openhands.read_openhands,
        "toolbench": toolbench.read_toolbench,
    }
    SESSION_READERS.update(readers)
    SESSION_DETECTORS.extend(
        [
            ("pi", _detect_pi),
            ("claude-code", _detect_claude_code),
            ("bfcl", _detect_bfcl),
            ("tau-bench", _detect_tau_bench),
            ("openhands", _detect_openhands),
            ("toolbench", _detect_toolbench),
            ("mcp", _detect_mcp),
            ("anthropic", _detect_anthropic),
            ("openai", _detect_openai),
        ]
    )
    SESSION_DIRECTORY_RULES.update(
        {
            "auto": _with_subagents,
            "claude-code": _with_subagents,
            "bfcl": _bfcl_results,
            "tau-bench": _json_documents,
            "toolbench": _json_tree,
            "openhands": _openhands_files,
        }
    )
    tool_lists.register(SURFACE_READERS, SURFACE_DEFAULT_PREFIXES)


_register()


def surface_formats() -> list[str]:
    """Every name ``--surface-format`` accepts."""
    return ["auto", *sorted(SURFACE_READERS)]
