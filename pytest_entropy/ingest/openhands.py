"""OpenHands (CodeAct) trajectories: event streams of actions and observations.

A file is either JSON Lines of evaluation instances (``output.jsonl``: ``instance_id``,
``metadata``, ``history``) or one JSON array of events (a replay trajectory).

* call: an event with an ``action`` and a ``tool_call_metadata`` (``function_name``); its
  arguments are the model's own ``function.arguments`` for that ``tool_call_id`` in
  ``model_response``, else the event's ``args``. Actions without a tool call (prompts,
  recalls, agent state changes; the old resolver format's text-parsed actions) are not
  calls; the latter are counted as unstructured outputs;
* outcome: the observation whose ``cause`` is the action's ``id``: ``error`` failed; ``run``
  with ``extras.metadata.exit_code`` 0 succeeded, -1 timed out (OpenHands' "no exit code yet"),
  any other failed; anything else succeeded. A ``finish`` action ends the run and has no
  observation: it succeeded. Any other call without an observation: ``aborted``. An ``error``
  observation without a ``cause`` (a call refused before it became an action) names no
  call and is counted as an unmatched result;
* trace: one trajectory; task key: the ``instance_id`` (a replay file: its file name);
* model: ``metadata.llm_config.model`` (already ``provider/model``), else the
  ``model_response.model`` of the first call as ``openhands/<model>``.
"""

from __future__ import annotations

import itertools
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
from pytest_entropy.ingest.detectors import detect_openhands
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.foreign import decode_arguments, iter_json_values
from pytest_entropy.ingest.runs import RunBuilder
from pytest_entropy.ingest.writer import ForeignTrace, NativeWriter

if TYPE_CHECKING:
    from pytest_entropy.ingest.base import ReadOptions

__all__ = ["FORMAT", "detect_openhands", "openhands_files", "read_openhands"]

_NOT_CALLS: Final = frozenset({"message", "system", "recall", "change_agent_state", "null"})


def _arguments(event: dict[str, Any], metadata: dict[str, Any]) -> tuple[Any, bool]:
    response = metadata.get("model_response")
    choices = response.get("choices") if type(response) is dict else None
    wanted = metadata.get("tool_call_id")
    for choice in choices if type(choices) is list else ():
        message = choice.get("message") if type(choice) is dict else None
        calls = message.get("tool_calls") if type(message) is dict else None
        for call in calls if type(calls) is list else ():
            function = call.get("function") if type(call) is dict else None
            if type(function) is dict and call.get("id") == wanted:
                return decode_arguments(function.get("arguments"))
    return decode_arguments(event.get("args", {}))


def _observation_outcome(event: dict[str, Any]) -> str:
    kind = event.get("observation")
    if kind == "error":
        return "failed"
    if kind == "run":
        extras = event.get("extras")
        metadata = extras.get("metadata") if type(extras) is dict else None
        code = metadata.get("exit_code") if type(metadata) is dict else None
        if type(code) is int and code != 0:
            return "timed_out" if code == -1 else "failed"
    return "succeeded"


def _trajectory(
    events: list[Any], task_key: str, model: str | None, writer: NativeWriter
) -> Iterator[bytes]:
    diagnostics = writer.diagnostics
    runs = RunBuilder(writer, task_key)
    calls: set[str] = set()
    for event in events:
        if type(event) is not dict:
            diagnostics.unknown_records += 1
            continue
        action = event.get("action")
        metadata = event.get("tool_call_metadata")
        if type(action) is str:
            if type(metadata) is dict and type(metadata.get("function_name")) is str:
                if model is None:
                    response = metadata.get("model_response")
                    if type(response) is dict:
                        model = provider_model("openhands", response.get("model"))
                args, decoded = _arguments(event, metadata)
                call_id = f"event:{event.get('id')}"
                calls.add(call_id)
                yield from runs.call(
                    metadata["function_name"],
                    args,
                    call_id=call_id,
                    model=model,
                    decoded=decoded,
                )
                if action == "finish":
                    # OpenHands ends the run on a finish action; no observation follows it.
                    runs.result(call_id, "succeeded")
            elif action not in _NOT_CALLS:
                diagnostics.unstructured_outputs += 1
        elif type(event.get("observation")) is str:
            cause = event.get("cause")
            if type(cause) is int and f"event:{cause}" in calls:
                runs.result(f"event:{cause}", _observation_outcome(event))
            elif cause is None and event["observation"] == "error":
                diagnostics.unmatched_results += 1
    if runs.calls:
        yield from runs.finish()
    else:
        yield from writer.lines(ForeignTrace(task_key, model))


def read_openhands(
    path: Path, options: ReadOptions, diagnostics: ScanDiagnostics
) -> Iterator[bytes]:
    """Native lines of one OpenHands output or trajectory file."""
    where = str(path)
    writer = NativeWriter(options, diagnostics)
    records = iter_json_values(path, diagnostics, name=where)
    first = next(records, None)
    if first is None:
        return
    if _is_event(first[1]):
        stem = path.name.removesuffix(".gz").removesuffix(".json").removesuffix(".jsonl")
        events = [first[1], *(record for _, record in records)]
        yield from _trajectory(events, stem, None, writer)
        return
    for number, record in itertools.chain([first], records):
        history = record.get("history") if type(record) is dict else None
        if type(history) is not list:
            diagnostics.unknown_records += 1
            diagnostics.note(f"{where}:{number}", "not an OpenHands instance")
            continue
        instance = record.get("instance_id")
        task_key = instance if type(instance) is str else f"{path.name}:{number}"
        metadata = record.get("metadata")
        config = metadata.get("llm_config") if type(metadata) is dict else None
        model = provider_model("openhands", config.get("model")) if type(config) is dict else None
        yield from _trajectory(history, task_key, model, writer)


def _is_event(record: Any) -> bool:
    return (
        type(record) is dict
        and "history" not in record
        and ("action" in record or "observation" in record)
    )


def openhands_files(root: Path) -> list[Path]:
    """A directory's JSON and JSON Lines files, by name."""
    return sorted_files(
        root, lambda name: is_json_name(name) or is_jsonl_name(name), recursive=False
    )


FORMAT: Final = SessionFormat(
    "openhands", read_openhands, detector=detect_openhands, directory_files=openhands_files
)
