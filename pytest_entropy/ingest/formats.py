"""Registration of every foreign format: session readers, detectors, directory rules, surfaces.

:func:`register` runs once, on first use (``sessions`` and ``surfaces`` call it lazily), so
``import pytest_entropy`` never pays for the readers. ``docs/formats.md`` documents each
format; the detectors below decide ``--format auto`` from a file's first 64 KiB.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from ..core.jscompat import code_unit_key
from .fabric import TRACE_KIND
from .foreign import head_records, open_foreign

__all__ = ["SESSION_FORMAT_NAMES", "register"]

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


def register() -> None:
    """Add every foreign reader, detector and directory rule to the registries."""
    from .. import sessions, surfaces
    from . import (
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
    sessions.SESSION_READERS.update(readers)
    sessions.SESSION_DETECTORS.extend(
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
    sessions.SESSION_DIRECTORY_RULES.update(
        {
            "auto": _with_subagents,
            "claude-code": _with_subagents,
            "bfcl": _bfcl_results,
            "tau-bench": _json_documents,
            "toolbench": _json_tree,
            "openhands": _openhands_files,
        }
    )
    tool_lists.register(surfaces.SURFACE_READERS, surfaces.SURFACE_DEFAULT_PREFIXES)
