"""What each foreign session format's detector looks for (``--format auto``).

The detectors live here, apart from their readers, so that telling a file's format loads no
reader: ``ingest/registry.py`` runs them on every file's head and imports the reader module
of the format that claims a file only then (a native corpus loads none). Each reader module
re-exports its detector, and its ``FORMAT`` holds this very function.
"""

from __future__ import annotations

import os

from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.core.patterns import LazyPattern
from pytest_entropy.ingest.detection import (
    FABRIC_MARK,
    blanks_end,
    document_start,
    file_contains,
    has_pattern,
    head_objects,
    is_jsonl_name,
    looks_like_messages,
    sorted_files,
)
from pytest_entropy.ingest.paths import join_path, path_like

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Final

    from pytest_entropy.ingest.paths import PathT

__all__ = [
    "detect_anthropic",
    "detect_bfcl",
    "detect_claude_code",
    "detect_codex",
    "detect_gemini_cli",
    "detect_inspect",
    "detect_mcp",
    "detect_openai",
    "detect_openhands",
    "detect_otel_genai",
    "detect_pi",
    "detect_tau_bench",
    "detect_toolbench",
    "is_rollout_name",
    "with_subagents",
]


# -------------------------------------------------------------------- pi


def detect_pi(path: str | os.PathLike[str], head: bytes) -> bool:
    """A Pi session header first and a ``toolCall`` somewhere, but no fabric trace anywhere
    (a fabric session is read natively, exactly as before this reader existed)."""
    if FABRIC_MARK in head:
        return False
    records = head_objects(head)
    if not records or records[0].get("type") != "session":
        return False
    return file_contains(path, b'"toolCall"') and not file_contains(path, FABRIC_MARK)


# ----------------------------------------------------------- claude_code

_SESSION_ID: Final = LazyPattern(rb'"sessionId"\s*:\s*"')
_UUID: Final = LazyPattern(rb'"uuid"\s*:')
_EVENT_TYPE: Final = LazyPattern(rb'"type"\s*:\s*"(?:user|assistant|progress|system|summary)"')


def detect_claude_code(path: str | os.PathLike[str], head: bytes) -> bool:
    """Events with ``sessionId``, ``uuid`` and a Claude Code event type (found in the raw
    head, so one huge first event cannot hide them)."""
    return (
        FABRIC_MARK not in head
        and _SESSION_ID.search(head) is not None
        and _UUID.search(head) is not None
        and _EVENT_TYPE.search(head) is not None
    )


def _is_directory(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:  # a link that loops is no session directory (the file rule counts it)
        return False


def with_subagents(root: PathT) -> list[PathT]:
    """``*.jsonl`` beside each session's ``<session>/subagents/*.jsonl``, by relative path
    (as the kind of path given: str for a str, else :class:`pathlib.Path`)."""
    top = os.fspath(root)
    files = [
        (os.path.basename(path), path) for path in sorted_files(top, is_jsonl_name, recursive=False)
    ]
    for entry in os.scandir(top):
        subagents = join_path(entry.path, "subagents")
        if _is_directory(entry) and os.path.isdir(subagents):
            for path in sorted_files(subagents, is_jsonl_name, recursive=False):
                files.append((f"{entry.name}/subagents/{os.path.basename(path)}", path))
    files.sort(key=lambda item: code_unit_key(item[0]))
    return [path_like(root, path) for _, path in files]


# ----------------------------------------------------------------- codex

_ROLLOUT_LINE: Final = LazyPattern(
    rb'"type"\s*:\s*"(?:session_meta|turn_context|response_item|event_msg)"\s*,\s*"payload"\s*:'
)


def detect_codex(path: str | os.PathLike[str], head: bytes) -> bool:
    """Rollout lines: a ``type`` among Codex's line types followed by its ``payload``; or an
    older rollout (``rollout-*.jsonl`` opening with ``{"id", "timestamp", ...}`` and no
    ``type``)."""
    if FABRIC_MARK in head:
        return False
    if _ROLLOUT_LINE.search(head) is not None:
        return True
    if not is_rollout_name(os.path.basename(path)):
        return False
    from pytest_entropy.ingest.foreign import head_records  # an older rollout's name

    first = head_records(head, limit=1)
    return (
        bool(first)
        and type(first[0]) is dict
        and type(first[0].get("id")) is str
        and "timestamp" in first[0]
        and "type" not in first[0]
    )


def is_rollout_name(name: str) -> bool:
    return name.startswith("rollout-") and is_jsonl_name(name)


# ------------------------------------------------------------ gemini_cli

_METADATA: Final = LazyPattern(rb'"sessionId"\s*:\s*"[^"]*"\s*,\s*"projectHash"\s*:\s*"')
_MESSAGE_TYPE: Final = LazyPattern(rb'"type"\s*:\s*"(?:user|gemini|info|error|warning)"')


def detect_gemini_cli(path: str | os.PathLike[str], head: bytes) -> bool:
    """A chat recording: ``sessionId`` then ``projectHash`` (the metadata record both the
    JSON Lines and the older whole-document files start with), or a message record."""
    if FABRIC_MARK in head:
        return False
    return _METADATA.search(head) is not None or (
        os.path.basename(path).startswith("session-")
        and _MESSAGE_TYPE.search(head) is not None
        and b'"toolCalls"' in head
    )


# ------------------------------------------------------------ inspect_ai

_JSON_LOG: Final = LazyPattern(
    rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:\s*"[a-z_]+"\s*,\s*"eval"\s*:\s*\{'
)
_ZIP_MAGIC: Final = b"PK\x03\x04"


def detect_inspect(path: str | os.PathLike[str], head: bytes) -> bool:
    """An ``.eval`` zip, or a JSON document opening ``{"version": N, "status": ..., "eval":``
    as Inspect writes its logs."""
    if head.startswith(_ZIP_MAGIC):
        return os.path.basename(path).endswith(".eval")
    return (
        FABRIC_MARK not in head
        and document_start(head) == b"{"
        and _JSON_LOG.match(head) is not None
    )


# ------------------------------------------------------------ otel_genai

_RESOURCE_SPANS: Final = LazyPattern(rb'^\s*\{\s*"resourceSpans"\s*:')
_GEN_AI: Final = LazyPattern(rb'"gen_ai\.')


def detect_otel_genai(path: str | os.PathLike[str], head: bytes) -> bool:
    """An OTLP/JSON trace export (``{"resourceSpans": ...``) holding ``gen_ai.`` attributes."""
    return (
        FABRIC_MARK not in head
        and _RESOURCE_SPANS.match(head) is not None
        and _GEN_AI.search(head) is not None
    )


# ------------------------------------------------------------------ bfcl

_RESULT_ENTRY: Final = LazyPattern(rb'\A\s*\{\s*"id"\s*:\s*"[^"\n]*"\s*,\s*"result"\s*:')


def detect_bfcl(path: str | os.PathLike[str], head: bytes) -> bool:
    """A result entry first: ``{"id": "<test id>", "result": ...`` (BFCL writes it so)."""
    # The pattern's anchored start first, without searching the head (most heads fail it
    # within a few bytes), then the substring test (a head of other records with ids lacks
    # it, and the pattern is then never compiled).
    at = blanks_end(head)
    if not head.startswith(b"{", at) or not head.startswith(b'"id"', blanks_end(head, at + 1)):
        return False
    return b'"result"' in head and _RESULT_ENTRY.match(head) is not None


# ------------------------------------------------------------- tau_bench

_TASK_ID: Final = LazyPattern(rb'"task_id"\s*:')
_TRAJECTORY: Final = LazyPattern(rb'"traj"\s*:')


def detect_tau_bench(path: str | os.PathLike[str], head: bytes) -> bool:
    """An array of results with ``task_id`` and ``traj``."""
    return (
        document_start(head) == b"["
        and _TASK_ID.search(head) is not None
        and _TRAJECTORY.search(head) is not None
    )


# ------------------------------------------------------------- openhands

_EVENT_SOURCE: Final = LazyPattern(rb'"source"\s*:\s*"(?:agent|user|environment)"')
_EVENT_KIND: Final = LazyPattern(rb'"(action|observation)"\s*:')
_HISTORY: Final = LazyPattern(rb'"history"\s*:\s*\[\s*\{')


def detect_openhands(path: str | os.PathLike[str], head: bytes) -> bool:
    """An event array, or an instance object whose ``history`` holds events."""
    if document_start(head) == b"[":
        return _EVENT_SOURCE.search(head) is not None and _EVENT_KIND.search(head) is not None
    # Instances are single lines often longer than the head: look for a history array of
    # events in the raw bytes.
    return (
        document_start(head) == b"{"
        and b'"history"' in head
        and _HISTORY.search(head) is not None
        and _EVENT_SOURCE.search(head) is not None
        and _EVENT_KIND.search(head) is not None
    )


# ------------------------------------------------------------- toolbench

_TREE_NODE: Final = LazyPattern(rb'"node_type"\s*:\s*"(?:Action|Action Input|Thought)"')


def detect_toolbench(path: str | os.PathLike[str], head: bytes) -> bool:
    """One JSON object holding DFSDT tree nodes (``Action``/``Action Input``/``Thought``)."""
    return (
        document_start(head) == b"{"
        and b'"node_type"' in head
        and _TREE_NODE.search(head) is not None
    )


# ----------------------------------------------------------- mcp_jsonrpc

_jsonrpc = has_pattern(rb'"jsonrpc"\s*:\s*"2\.0"')


def detect_mcp(path: str | os.PathLike[str], head: bytes) -> bool:
    """JSON-RPC 2.0 messages with a ``tools/call``, and no fabric trace."""
    return FABRIC_MARK not in head and _jsonrpc(head) and b"tools/call" in head


# ------------------------------------------------------------- anthropic

_tool_blocks = has_pattern(rb'"type"\s*:\s*"tool_use"|"type"\s*:\s*"tool_result"')


def detect_anthropic(path: str | os.PathLike[str], head: bytes) -> bool:
    """Messages with ``tool_use`` or ``tool_result`` blocks, and no fabric trace."""
    return FABRIC_MARK not in head and _tool_blocks(head) and looks_like_messages(head)


# ----------------------------------------------------------- openai_chat

_tool_calls = has_pattern(rb'"tool_calls"\s*:|"function_call"\s*:|"role"\s*:\s*"tool"')


def detect_openai(path: str | os.PathLike[str], head: bytes) -> bool:
    """Chat messages with tool calls (or Responses items), and no fabric trace."""
    return FABRIC_MARK not in head and _tool_calls(head) and looks_like_messages(head)
