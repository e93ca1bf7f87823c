"""Google Gemini CLI chat recordings (``~/.gemini/tmp/<project hash>/chats/session-*.jsonl``).

A file is JSON Lines (packages/core/src/services/chatRecordingService.ts): a metadata
record (``sessionId``, ``projectHash``, ...), message records (``id``, ``type``, ...),
``{"$rewindTo": id}`` records and ``{"$set": {...}}`` metadata updates; older versions wrote
one JSON document (a ``ConversationRecord`` with ``messages``). The conversation is rebuilt
as Gemini CLI's own loader rebuilds it: a message id written again replaces the earlier copy
in place (the last copy wins; counted as a duplicate record), a rewind drops that message
and everything after it (counted as rewound records; an unknown id drops everything), a
``$set`` carrying ``messages`` is a checkpoint that replaces the conversation.

* call: each ``toolCalls[]`` entry of a ``gemini`` message (``id``, ``name``, ``args``);
* outcome: its ``status`` (the table in ``docs/formats.md``);
* trace: the calls between two ``user`` messages; task key: the ``sessionId`` (else the
  file name); model: ``google/<model>`` of the message.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_entropy.ingest.anthropic import provider_model
from pytest_entropy.ingest.base import SessionFormat
from pytest_entropy.ingest.detection import (
    is_json_name,
    is_jsonl_name,
    sorted_files,
)
from pytest_entropy.ingest.detectors import detect_gemini_cli
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.foreign import iter_json_values
from pytest_entropy.ingest.runs import RunBuilder
from pytest_entropy.ingest.writer import NativeWriter

if TYPE_CHECKING:
    from pytest_entropy.ingest.base import ReadOptions

__all__ = ["FORMAT", "call_outcome", "detect_gemini_cli", "gemini_cli_files", "read_gemini_cli"]

_QUIET_MESSAGES: Final = frozenset({"info", "error", "warning"})
# The scheduler's own error texts (packages/core/src/scheduler/scheduler.ts, policy.ts) and
# the schema validator's (packages/core/src/utils/schemaValidator.ts: ``dataVar: params``).
_NOT_FOUND: Final = re.compile(r'^Tool "[^"]*" not found')
_POLICY: Final = "Tool execution denied by policy."
_PARAMS: Final = "params "


def _error_text(result: Any) -> str:
    """The ``functionResponse.response.error`` text of a recorded result, or ``""``."""
    parts = result if type(result) is list else [result]
    for part in parts:
        response = part.get("functionResponse") if type(part) is dict else None
        body = response.get("response") if type(response) is dict else None
        error = body.get("error") if type(body) is dict else None
        if type(error) is str:
            return error
    return ""


def call_outcome(call: dict[str, Any]) -> tuple[str, str | None]:
    """The outcome and failure stage of one recorded tool call (``docs/formats.md``)."""
    status = call.get("status")
    if status == "success":
        return "succeeded", None
    if status == "error":
        text = _error_text(call.get("result")).lstrip()
        if _NOT_FOUND.match(text):
            return "failed", "resolve"
        if text.startswith(_POLICY):
            return "failed", "approve"
        if text.startswith(_PARAMS):
            return "failed", "validate"
        return "failed", None
    # cancelled, and the states of a call that never finished (validating, scheduled,
    # executing, awaiting_approval: packages/core/src/scheduler/types.ts)
    return "aborted", None


class _Conversation:
    """Messages by id in first-written order, as Gemini CLI's loader keeps them."""

    __slots__ = ("diagnostics", "messages", "session")

    def __init__(self, diagnostics: ScanDiagnostics) -> None:
        self.diagnostics = diagnostics
        self.messages: dict[str, dict[str, Any]] = {}
        self.session: str | None = None

    def message(self, record: dict[str, Any]) -> None:
        if record["id"] in self.messages:
            self.diagnostics.duplicate_records += 1
        self.messages[record["id"]] = record

    def rewind(self, message_id: str) -> None:
        ids = list(self.messages)
        start = ids.index(message_id) if message_id in self.messages else 0
        for dropped in ids[start:]:
            del self.messages[dropped]
            self.diagnostics.rewound_records += 1

    def metadata(self, record: dict[str, Any], where: str) -> None:
        if self.session is None and type(record.get("sessionId")) is str:
            self.session = record["sessionId"]
        messages = record.get("messages")
        if type(messages) is list:
            for item in messages:
                self.record(item, where, nested=True)

    def record(self, record: Any, where: str, *, nested: bool = False) -> None:
        diagnostics = self.diagnostics
        if type(record) is not dict:
            diagnostics.non_object_lines += 1
            diagnostics.note(where, "record is not a JSON object")
        elif type(record.get("$rewindTo")) is str and not nested:
            self.rewind(record["$rewindTo"])
        elif type(record.get("$set")) is dict and not nested:
            update = record["$set"]
            if type(update.get("messages")) is list:
                self.messages.clear()  # a checkpoint: the conversation as it now stands
            self.metadata(update, where)
        elif type(record.get("id")) is str:
            self.message(record)
        elif type(record.get("sessionId")) is str and type(record.get("projectHash")) is str:
            self.metadata(record, where)
        else:
            diagnostics.unknown_records += 1
            diagnostics.note(where, "not a Gemini CLI chat record")


def read_gemini_cli(
    path: Path, options: ReadOptions, diagnostics: ScanDiagnostics
) -> Iterator[bytes]:
    """Native lines of one Gemini CLI chat recording."""
    where = str(path)
    conversation = _Conversation(diagnostics)
    for number, record in iter_json_values(path, diagnostics, name=where):
        conversation.record(record, f"{where}:{number}")
    stem = path.name.removesuffix(".gz").removesuffix(".jsonl").removesuffix(".json")
    runs = RunBuilder(NativeWriter(options, diagnostics), conversation.session or stem)
    for message in conversation.messages.values():
        kind = message.get("type")
        if kind == "user":
            yield from runs.boundary()
        elif kind == "gemini":
            model = provider_model("google", message.get("model"))
            calls = message.get("toolCalls")
            for call in calls if type(calls) is list else ():
                if type(call) is not dict or type(call.get("name")) is not str:
                    diagnostics.unknown_records += 1
                    continue
                args = call.get("args")
                call_id = call.get("id") if type(call.get("id")) is str else None
                outcome, stage = call_outcome(call)
                yield from runs.call(
                    call["name"],
                    args if args is not None else {},
                    call_id=call_id,
                    model=model,
                    outcome=outcome,
                    stage=stage,
                    answered=True,
                    decoded=type(args) is dict or args is None,
                )
        elif type(kind) is not str or kind not in _QUIET_MESSAGES:
            diagnostics.unknown_records += 1
            diagnostics.note(where, f"unknown message type {str(kind)[:40]!r}")
    yield from runs.finish()


def _is_chat_name(name: str) -> bool:
    return name.startswith("session-") and (is_jsonl_name(name) or is_json_name(name))


def gemini_cli_files(root: Path) -> list[Path]:
    """Every ``session-*.jsonl`` / ``session-*.json`` below a directory (a ``~/.gemini``,
    its ``tmp``, one project's folder or its ``chats``), by relative path."""
    return sorted_files(root, _is_chat_name, recursive=True)


FORMAT: Final = SessionFormat(
    "gemini-cli", read_gemini_cli, detector=detect_gemini_cli, directory_files=gemini_cli_files
)
