"""OpenAI message logs: chat-completions ``tool_calls`` and ``tool`` messages.

A file is JSON Lines (or one JSON document) of any of these records, in order:

* a chat message: ``assistant`` with ``tool_calls`` (``id``, ``function.name``,
  ``function.arguments`` as a JSON string) or a legacy ``function_call``; ``tool`` (with
  ``tool_call_id``) or legacy ``function`` results; ``user`` prompts;
* a Responses API item: ``function_call`` (``call_id``, ``name``, ``arguments``) and
  ``function_call_output``;
* a conversation or request ``{"model", "messages": [...]}``, a chat completion
  ``{"model", "choices": [{"message"}]}``, a Responses result ``{"model", "output": [...]}``,
  or ``{"request": ..., "response": ...}`` pairs of those.

OpenAI's formats have no failure flag: a result counts as failed only when it carries a
typed ``is_error``/``isError: true`` (some loggers add one); otherwise an answered call
succeeded and an unanswered one is ``aborted``.

* trace: one prompt run (calls between two user messages, split where the model changes);
  task key: a conversation's string ``id``, else ``(none)``;
* model: ``openai/<model>``; a model already written ``provider/model`` stays as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_entropy.ingest.anthropic import provider_model
from pytest_entropy.ingest.base import SessionFormat
from pytest_entropy.ingest.detectors import detect_openai
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.foreign import iter_json_values
from pytest_entropy.ingest.runs import RunBuilder
from pytest_entropy.ingest.writer import NativeWriter

if TYPE_CHECKING:
    from pytest_entropy.ingest.base import ReadOptions

__all__ = ["FORMAT", "OpenAIConversation", "detect_openai", "read_openai_chat"]

# A result's outcome from its message: ``(outcome, typed stage)``.
ResultOutcome = Callable[[dict[str, Any]], tuple[str, str | None]]


def typed_error_outcome(message: dict[str, Any]) -> tuple[str, str | None]:
    """Failed only with a typed ``is_error``/``isError`` flag."""
    if message.get("is_error") is True or message.get("isError") is True:
        return "failed", None
    return "succeeded", None


class OpenAIConversation:
    """Feeds OpenAI chat messages and Responses items into a :class:`RunBuilder`."""

    __slots__ = ("model", "outcome_of", "prompts_split", "runs")

    def __init__(
        self,
        runs: RunBuilder,
        *,
        outcome_of: ResultOutcome = typed_error_outcome,
        prompts_split: bool = True,
    ) -> None:
        self.runs = runs
        self.outcome_of = outcome_of
        self.prompts_split = prompts_split
        self.model: str | None = None

    def set_model(self, value: Any) -> None:
        self.model = provider_model("openai", value) or self.model

    def _call(self, name: Any, arguments: Any, call_id: Any) -> Iterator[bytes]:
        return self.runs.recorded_call(name, arguments, call_id, self.model)

    def message(self, message: dict[str, Any]) -> Iterator[bytes]:
        """One chat message or Responses item."""
        runs = self.runs
        role = message.get("role")
        kind = message.get("type")
        if kind == "function_call":
            yield from self._call(
                message.get("name"), message.get("arguments"), message.get("call_id")
            )
        elif kind == "function_call_output":
            outcome, stage = self.outcome_of(message)
            runs.result(message.get("call_id"), outcome, stage)
        elif role == "assistant":
            self.set_model(message.get("model"))
            calls = message.get("tool_calls")
            for call in calls if type(calls) is list else ():
                function = call.get("function") if type(call) is dict else None
                if type(function) is not dict:
                    runs.writer.diagnostics.unknown_records += 1
                    continue
                yield from self._call(
                    function.get("name"), function.get("arguments"), call.get("id")
                )
            legacy = message.get("function_call")
            if type(legacy) is dict:
                name = legacy.get("name")
                yield from self._call(name, legacy.get("arguments"), f"function:{name}")
        elif role == "tool":
            outcome, stage = self.outcome_of(message)
            runs.result(message.get("tool_call_id"), outcome, stage)
        elif role == "function":
            outcome, stage = self.outcome_of(message)
            runs.result(f"function:{message.get('name')}", outcome, stage)
        elif role == "user":
            if self.prompts_split:
                yield from runs.boundary()
        elif role not in ("system", "developer") and kind != "reasoning":
            runs.writer.diagnostics.unknown_records += 1

    def record(self, record: dict[str, Any]) -> Iterator[bytes]:
        """A record of any supported shape (see the module docstring)."""
        if "request" in record or "response" in record:
            for part in (record.get("request"), record.get("response")):
                if type(part) is dict:
                    yield from self.record(part)
            return
        self.set_model(record.get("model"))
        messages = record.get("messages")
        choices = record.get("choices")
        output = record.get("output")
        if type(messages) is list:
            yield from self.runs.boundary()
            if type(record.get("id")) is str:
                self.runs.task_key = record["id"]
            yield from self._items(messages)
        elif type(choices) is list:
            for choice in choices:
                if type(choice) is dict and type(choice.get("message")) is dict:
                    yield from self.message(choice["message"])
        elif type(output) is list:
            yield from self._items(output)
        elif "role" in record or "type" in record:
            yield from self.message(record)
        else:
            self.runs.writer.diagnostics.unknown_records += 1

    def _items(self, items: list[Any]) -> Iterator[bytes]:
        for item in items:
            if type(item) is dict:
                yield from self.message(item)
            else:
                self.runs.writer.diagnostics.unknown_records += 1


def read_openai_chat(
    path: Path, options: ReadOptions, diagnostics: ScanDiagnostics
) -> Iterator[bytes]:
    """Native lines of one OpenAI chat or Responses log."""
    writer = NativeWriter(options, diagnostics)
    conversation = OpenAIConversation(RunBuilder(writer, "(none)", dedupe=False))
    where = str(path)
    for number, record in iter_json_values(path, diagnostics, name=where):
        if type(record) is not dict:
            diagnostics.non_object_lines += 1
            diagnostics.note(f"{where}:{number}", "record is not a JSON object")
            continue
        yield from conversation.record(record)
    yield from conversation.runs.finish()


FORMAT: Final = SessionFormat("openai", read_openai_chat, detector=detect_openai)
