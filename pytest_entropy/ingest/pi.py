"""Plain Pi coding-agent sessions: ``toolCall`` blocks and ``toolResult`` messages.

A Pi session file (``~/.pi/agent/sessions/<project>/<id>.jsonl``) without the fabric
extension records each tool call as a ``{"type":"toolCall","id","name","arguments"}`` block
of an assistant message, and its result as a ``toolResult`` message with ``isError``.

* trace: one prompt run, the calls between two user messages (split where the model
  changes); task key: the session id of the ``session`` header (``(none)`` without one);
* model: the assistant message's ``provider``/``model``, else the latest ``model_change`` or
  header ``provider``/``modelId``;
* failed: ``isError: true``; a call without a result (an aborted or errored turn) is
  ``aborted``;
* refs: ``pi.<tool>`` (the reference's names), or ``--ref-prefix`` + tool.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_entropy.ingest.base import SessionFormat
from pytest_entropy.ingest.detectors import detect_pi
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.foreign import iter_json_lines
from pytest_entropy.ingest.runs import RunBuilder
from pytest_entropy.ingest.writer import NativeWriter

if TYPE_CHECKING:
    from pytest_entropy.ingest.base import ReadOptions

__all__ = ["FORMAT", "PI_PREFIX", "detect_pi", "read_pi_session"]

PI_PREFIX: Final = "pi."

# Entry types that carry no tool calls (Pi's session format, 0.x): read and ignored.
_QUIET_ENTRIES: Final = frozenset(
    {
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)
_QUIET_ROLES: Final = frozenset({"bashExecution", "custom", "branchSummary", "compactionSummary"})


def _model(provider: Any, model: Any) -> str | None:
    if type(provider) is str and provider and type(model) is str and model:
        return provider + "/" + model
    return None


def read_pi_session(
    path: Path, options: ReadOptions, diagnostics: ScanDiagnostics
) -> Iterator[bytes]:
    """Native lines of one plain Pi session file."""
    writer = NativeWriter(options, diagnostics, default_prefix=PI_PREFIX)
    runs = RunBuilder(writer, "(none)")
    current_model: str | None = None
    where = str(path)
    for number, record in iter_json_lines(path, diagnostics, name=where):
        if type(record) is not dict:
            diagnostics.non_object_lines += 1
            diagnostics.note(f"{where}:{number}", "record is not a JSON object")
            continue
        kind = record.get("type")
        if kind == "session":
            if type(record.get("id")) is str:
                runs.task_key = record["id"]
            current_model = _model(record.get("provider"), record.get("modelId")) or current_model
        elif kind == "model_change":
            current_model = _model(record.get("provider"), record.get("modelId")) or current_model
        elif kind == "message" and type(record.get("message")) is dict:
            yield from _message(record["message"], runs, current_model)
            if record["message"].get("role") == "assistant":
                message = record["message"]
                current_model = _model(message.get("provider"), message.get("model")) or (
                    current_model
                )
        elif type(kind) is not str or kind not in _QUIET_ENTRIES:
            diagnostics.unknown_records += 1
            diagnostics.note(f"{where}:{number}", f"unknown entry type {str(kind)[:40]!r}")
    yield from runs.finish()


def _message(
    message: dict[str, Any], runs: RunBuilder, current_model: str | None
) -> Iterator[bytes]:
    role = message.get("role")
    diagnostics = runs.writer.diagnostics
    if role == "user":
        yield from runs.boundary()
    elif role == "assistant":
        model = _model(message.get("provider"), message.get("model")) or current_model
        content = message.get("content")
        for block in content if type(content) is list else ():
            if type(block) is dict and block.get("type") == "toolCall":
                yield from runs.recorded_call(
                    block.get("name"), block.get("arguments"), block.get("id"), model
                )
    elif role == "toolResult":
        failed = message.get("isError") is True
        runs.result(message.get("toolCallId"), "failed" if failed else "succeeded")
    elif type(role) is not str or role not in _QUIET_ROLES:
        diagnostics.unknown_records += 1


FORMAT: Final = SessionFormat("pi", read_pi_session, detector=detect_pi)
