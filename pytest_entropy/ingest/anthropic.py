"""Anthropic Messages logs: ``tool_use`` blocks and ``tool_result`` blocks.

A file is JSON Lines (or one JSON document) of any of these records, in order:

* a message ``{"role": "user" | "assistant", "content": [...]}``, optionally with ``model``;
* a Messages API response ``{"type": "message", "role": "assistant", "model", "content"}``;
* a request or conversation ``{"model", "messages": [...]}`` (its messages in order).

A call is a ``tool_use`` block (``name``, ``input``, ``id``); its result is the
``tool_result`` block with the same ``tool_use_id``, failed when ``is_error`` is true.

* trace: one prompt run, the calls between two user messages that carry no
  ``tool_result`` (split where the model changes); task key: a conversation's string ``id``,
  else ``(none)``;
* model: ``anthropic/<model>`` from the record (a model already written ``provider/model``
  stays as it is);
* repeated records of one call (request logs repeat the history) are counted and dropped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_entropy.ingest.base import SessionFormat
from pytest_entropy.ingest.detectors import detect_anthropic
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.foreign import iter_json_values
from pytest_entropy.ingest.runs import RunBuilder
from pytest_entropy.ingest.writer import NativeWriter

if TYPE_CHECKING:
    from pytest_entropy.ingest.base import ReadOptions

__all__ = [
    "FORMAT",
    "assistant_tool_uses",
    "detect_anthropic",
    "is_prompt",
    "provider_model",
    "read_anthropic_messages",
    "user_tool_results",
]


def provider_model(provider: str, model: Any) -> str | None:
    """``provider/model`` for a model name; a name that already has a provider keeps it."""
    if type(model) is not str or not model or model.startswith("<"):
        return None
    if "/" in model.strip("/"):
        return model
    return provider + "/" + model


def is_prompt(content: Any) -> bool:
    """A user message that starts a new prompt run (no ``tool_result`` blocks in it)."""
    if type(content) is not list:
        return True
    return not any(type(block) is dict and block.get("type") == "tool_result" for block in content)


def assistant_tool_uses(content: Any, runs: RunBuilder, model: str | None) -> Iterator[bytes]:
    """Record every ``tool_use`` block of an assistant message's content as a call."""
    if type(content) is not list:
        return
    for block in content:
        if type(block) is not dict or block.get("type") != "tool_use":
            continue
        yield from runs.recorded_call(block.get("name"), block.get("input"), block.get("id"), model)


def user_tool_results(content: Any, runs: RunBuilder) -> None:
    """Answer calls from the ``tool_result`` blocks of a user message."""
    if type(content) is not list:
        return
    for block in content:
        if type(block) is dict and block.get("type") == "tool_result":
            failed = block.get("is_error") is True
            runs.result(block.get("tool_use_id"), "failed" if failed else "succeeded")


def _message(message: dict[str, Any], runs: RunBuilder, model: str | None) -> Iterator[bytes]:
    role = message.get("role")
    content = message.get("content")
    if role == "assistant":
        own = provider_model("anthropic", message.get("model")) or model
        yield from assistant_tool_uses(content, runs, own)
    elif role == "user":
        if is_prompt(content):
            yield from runs.boundary()
        else:
            user_tool_results(content, runs)
    else:
        runs.writer.diagnostics.unknown_records += 1


def read_anthropic_messages(
    path: Path, options: ReadOptions, diagnostics: ScanDiagnostics
) -> Iterator[bytes]:
    """Native lines of one Anthropic Messages log."""
    writer = NativeWriter(options, diagnostics)
    runs = RunBuilder(writer, "(none)")
    model: str | None = None
    where = str(path)
    for number, record in iter_json_values(path, diagnostics, name=where):
        if type(record) is not dict:
            diagnostics.non_object_lines += 1
            diagnostics.note(f"{where}:{number}", "record is not a JSON object")
            continue
        model = provider_model("anthropic", record.get("model")) or model
        messages = record.get("messages")
        if type(messages) is list:
            yield from runs.boundary()
            if type(record.get("id")) is str:
                runs.task_key = record["id"]
            for message in messages:
                if type(message) is dict:
                    yield from _message(message, runs, model)
                else:
                    diagnostics.unknown_records += 1
        elif "role" in record:
            yield from _message(record, runs, model)
        else:
            diagnostics.unknown_records += 1
            diagnostics.note(f"{where}:{number}", "not an Anthropic message or conversation")
    yield from runs.finish()


FORMAT: Final = SessionFormat("anthropic", read_anthropic_messages, detector=detect_anthropic)
