"""Inspect AI eval logs: ``.json`` (one ``EvalLog``) or ``.eval`` (a zip of JSON members).

A ``.json`` log holds ``version``, ``eval`` (``task``, ``model``), ``samples``; a ``.eval``
log holds ``header.json`` (the same without samples; ``_journal/start.json`` while a run is
still going) and one ``samples/<id>_epoch_<n>.json`` member per sample. A zip is read member
by member from its directory, whatever order the members were written in (the header is
looked up by name first); a member that is not valid JSON, and a member of a kind the
format does not define, is counted.

* call: each ``tool_calls[]`` entry (``id``, ``function``, ``arguments``, ``parse_error``)
  of a sample's ``assistant`` messages;
* outcome: the ``tool`` message with that ``tool_call_id``: no ``error`` succeeded, else
  its ``ToolCallError.type`` decides (the table in ``docs/formats.md``); no tool message:
  ``aborted``;
* trace: one sample and epoch; task key: ``<eval.task>/<sample id>`` (the epochs of one
  sample share it); model: the message's ``model`` under the provider of ``eval.model``
  (``openai/gpt-4o-mini`` + ``gpt-4o-mini-2024-07-18`` -> ``openai/gpt-4o-mini-2024-07-18``),
  else ``eval.model`` itself.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_entropy.ingest.base import SessionFormat
from pytest_entropy.ingest.detection import (
    is_json_name,
    sorted_files,
)
from pytest_entropy.ingest.detectors import detect_inspect
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.foreign import MAX_DOCUMENT_BYTES, decode_arguments, load_json_document
from pytest_entropy.ingest.jsonparse import JSONParseError, parse_json_bytes
from pytest_entropy.ingest.runs import RunBuilder
from pytest_entropy.ingest.writer import ForeignTrace, NativeWriter

if TYPE_CHECKING:
    from pytest_entropy.ingest.base import ReadOptions

__all__ = ["FORMAT", "detect_inspect", "error_outcome", "inspect_files", "read_inspect"]

Outcome = tuple[str, str | None]

# ToolCallError types (src/inspect_ai/tool/_tool_call.py) raised while the tool ran
# (src/inspect_ai/model/_call_tools.py); ``unknown`` is a ToolError the tool raised itself.
_RAN: Final = frozenset(
    {
        "unicode_decode",
        "permission",
        "file_not_found",
        "is_a_directory",
        "limit",
        "output_limit",
        "sandbox_unavailable",
        "unknown",
    }
)
# The parsing errors _call_tools.py writes before a tool runs.
_NOT_FOUND: Final = re.compile(r"^Tool \S+ not found")
_VALIDATION: Final = re.compile(r"^Found \d+ validation errors? parsing tool input arguments")
_KNOWN_MEMBERS: Final = ("header.json", "summaries.json", "reductions.json")
_KNOWN_FOLDERS: Final = ("_journal/", "samples/")


def error_outcome(error: Any, parse_error: Any) -> Outcome:
    """The outcome and failure stage of a tool message's ``error`` (``docs/formats.md``).

    ``parse_error``: the call's own ``parse_error`` (its arguments did not parse).
    """
    if type(error) is not dict:
        return "succeeded", None
    kind = error.get("type")
    kind = kind if type(kind) is str else None
    message = error.get("message")
    text = message.lstrip() if type(message) is str else ""
    if kind == "parsing":
        if _NOT_FOUND.match(text):
            return "failed", "resolve"
        if type(parse_error) is str and parse_error:
            return "failed", "prepare"
        return "failed", "validate"  # schema validation, or a tool's own argument check
    if kind == "timeout":
        return "timed_out", None
    if kind == "approval":
        return "failed", "approve"
    if kind == "cancelled":
        return "aborted", None
    if kind in _RAN:
        return "failed", "invoke"
    return "failed", None  # a type from a newer version


def _model(message_model: Any, eval_model: str | None) -> str | None:
    if type(message_model) is str and message_model:
        if "/" in message_model:
            return message_model
        provider = eval_model.partition("/")[0] if eval_model and "/" in eval_model else "inspect"
        return f"{provider}/{message_model}"
    return eval_model


class _Log:
    """What every sample of one log shares: the task, the model, the writer."""

    __slots__ = ("model", "task", "writer")

    def __init__(self, writer: NativeWriter, task: str) -> None:
        self.writer = writer
        self.task = task
        self.model: str | None = None

    def header(self, header: Any) -> None:
        spec = header.get("eval") if type(header) is dict else None
        if type(spec) is not dict:
            return
        if type(spec.get("task")) is str and spec["task"]:
            self.task = spec["task"]
        model = spec.get("model")
        if type(model) is str and model:
            self.model = model if "/" in model else f"inspect/{model}"

    def sample(self, sample: Any, where: str) -> Iterator[bytes]:
        diagnostics = self.writer.diagnostics
        messages = sample.get("messages") if type(sample) is dict else None
        if type(messages) is not list:
            diagnostics.unknown_records += 1
            diagnostics.note(where, "not an Inspect sample")
            return
        runs = RunBuilder(self.writer, f"{self.task}/{sample.get('id')}")
        parse_errors: dict[str, Any] = {}
        for message in messages:
            role = message.get("role") if type(message) is dict else None
            if role == "assistant":
                model = _model(message.get("model"), self.model)
                calls = message.get("tool_calls")
                for call in calls if type(calls) is list else ():
                    if type(call) is not dict or type(call.get("function")) is not str:
                        diagnostics.unknown_records += 1
                        continue
                    args, decoded = decode_arguments(call.get("arguments"))
                    call_id = call.get("id")
                    if type(call_id) is str:
                        parse_errors[call_id] = call.get("parse_error")
                    yield from runs.call(
                        call["function"],
                        args,
                        call_id=call_id if type(call_id) is str else None,
                        model=model,
                        decoded=decoded,
                    )
            elif role == "tool":
                call_id = message.get("tool_call_id")
                parse_error = parse_errors.get(call_id) if type(call_id) is str else None
                outcome, stage = error_outcome(message.get("error"), parse_error)
                runs.result(call_id, outcome, stage)
            elif role not in ("system", "user"):
                diagnostics.unknown_records += 1
        if runs.calls:
            yield from runs.finish()
        else:  # a sample without calls is still a trace (its task was attempted)
            yield from self.writer.lines(ForeignTrace(runs.task_key, self.model))


def _member_json(archive: zipfile.ZipFile, info: zipfile.ZipInfo, log: _Log, where: str) -> Any:
    """A zip member's JSON value, or ``None`` (counted)."""
    diagnostics = log.writer.diagnostics
    at = f"{where}!{info.filename}"
    if info.file_size > MAX_DOCUMENT_BYTES:
        diagnostics.oversized_lines += 1
        diagnostics.note(at, f"member larger than {MAX_DOCUMENT_BYTES >> 20} MiB")
        return None
    try:
        with archive.open(info) as stream:
            raw = stream.read(MAX_DOCUMENT_BYTES + 1)
        value, _ = parse_json_bytes(raw)
    except (OSError, zipfile.BadZipFile, NotImplementedError, EOFError) as error:
        diagnostics.malformed_lines += 1
        diagnostics.note(at, f"unreadable member ({error})")
        return None
    except JSONParseError as error:
        diagnostics.malformed_lines += 1
        diagnostics.note(at, f"malformed JSON ({error})")
        return None
    diagnostics.foreign_records += 1
    return value


def _read_eval(path: Path, log: _Log) -> Iterator[bytes]:
    where = str(path)
    diagnostics = log.writer.diagnostics
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as error:
        diagnostics.malformed_lines += 1
        diagnostics.note(where, f"not a zip archive ({error})")
        return
    with archive:
        members = archive.infolist()
        by_name = {info.filename: info for info in members}
        for name in ("header.json", "_journal/start.json"):
            if name in by_name:
                log.header(_member_json(archive, by_name[name], log, where))
                break
        for info in members:
            name = info.filename
            if name.startswith("samples/") and name.endswith(".json"):
                sample = _member_json(archive, info, log, where)
                if sample is not None:
                    yield from log.sample(sample, f"{where}!{name}")
            elif name.endswith("/") or name in _KNOWN_MEMBERS or name.startswith(_KNOWN_FOLDERS):
                continue
            else:
                diagnostics.unknown_records += 1
                diagnostics.note(f"{where}!{name}", "unknown .eval member")


def read_inspect(path: Path, options: ReadOptions, diagnostics: ScanDiagnostics) -> Iterator[bytes]:
    """Native lines of one Inspect AI eval log (``.json`` or ``.eval``)."""
    stem = path.name.removesuffix(".gz").removesuffix(".json").removesuffix(".eval")
    log = _Log(NativeWriter(options, diagnostics), stem)
    if zipfile.is_zipfile(path):
        yield from _read_eval(path, log)
        return
    ok, document = load_json_document(path, diagnostics, name=str(path))
    if not ok:
        return
    if type(document) is not dict or type(document.get("eval")) is not dict:
        diagnostics.unknown_records += 1
        diagnostics.note(str(path), "not an Inspect eval log")
        return
    diagnostics.foreign_records += 1
    log.header(document)
    samples = document.get("samples")
    for number, sample in enumerate(samples if type(samples) is list else ()):
        yield from log.sample(sample, f"{path}:samples[{number}]")


def inspect_files(root: Path) -> list[Path]:
    """Every ``*.eval`` and ``*.json`` (or ``.json.gz``) below a directory, by relative path."""
    return sorted_files(
        root, lambda name: name.endswith(".eval") or is_json_name(name), recursive=True
    )


FORMAT: Final = SessionFormat(
    "inspect", read_inspect, detector=detect_inspect, directory_files=inspect_files
)
