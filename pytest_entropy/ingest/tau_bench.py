"""tau-bench trajectories: one JSON array of ``{task_id, trial, reward, info, traj}`` records.

``traj`` is an OpenAI chat-completions message list (``tool_calls`` with JSON-string
arguments, ``tool`` results). tau-bench wraps every exception a tool raises as a result
text starting with ``Error:``, its own marker for a failed call; any other answer succeeded.
Call ids are sometimes reused within a record, so a result answers the oldest unanswered
call with its id.

* trace: one record (``task_id`` + ``trial``), calls in ``traj`` order; an episode without
  calls is still a trace;
* task key: ``<domain>/<task_id>``; the domain is the file name's ``-airline``/``-retail``
  suffix (``tau`` otherwise);
* model: the file name without that suffix, as ``tau-bench/<name>`` (the trajectories do not
  record the provider): ``gpt-4o-airline.json`` -> ``tau-bench/gpt-4o``;
* files: a directory means its ``*.json`` files (tool lists beside them are not
  trajectories and count as unrecognized files).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_entropy.ingest.base import SessionFormat
from pytest_entropy.ingest.detection import is_json_name, sorted_files
from pytest_entropy.ingest.detectors import detect_tau_bench
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.foreign import load_json_document
from pytest_entropy.ingest.openai_chat import OpenAIConversation
from pytest_entropy.ingest.runs import RunBuilder
from pytest_entropy.ingest.writer import ForeignTrace, NativeWriter

if TYPE_CHECKING:
    from pytest_entropy.ingest.base import ReadOptions

__all__ = ["FORMAT", "detect_tau_bench", "json_documents", "read_tau_bench", "tau_bench_names"]

_DOMAINS: Final = ("airline", "retail")
_ERROR_MARK: Final = "Error:"


def tau_bench_names(path: Path) -> tuple[str, str]:
    """``(domain, model name)`` from a trajectory file name."""
    stem = path.name
    for suffix in (".gz", ".json"):
        stem = stem.removesuffix(suffix)
    for domain in _DOMAINS:
        if stem.endswith("-" + domain) and len(stem) > len(domain) + 1:
            return domain, stem[: -len(domain) - 1]
    return "tau", stem


def _tool_outcome(message: dict[str, Any]) -> tuple[str, str | None]:
    content = message.get("content")
    if type(content) is str and content.startswith(_ERROR_MARK):
        return "failed", None
    return "succeeded", None


def read_tau_bench(
    path: Path, options: ReadOptions, diagnostics: ScanDiagnostics
) -> Iterator[bytes]:
    """Native lines of one tau-bench trajectory file."""
    where = str(path)
    ok, document = load_json_document(path, diagnostics, name=where)
    if not ok:
        return
    if type(document) is not list:
        diagnostics.unrecognized(where, "not a tau-bench trajectory array")
        return
    domain, name = tau_bench_names(path)
    model = "tau-bench/" + name
    writer = NativeWriter(options, diagnostics)
    for position, record in enumerate(document, 1):
        diagnostics.foreign_records += 1
        if type(record) is not dict or type(record.get("traj")) is not list:
            diagnostics.unknown_records += 1
            diagnostics.note(f"{where}#{position}", "not a tau-bench record")
            continue
        task = record.get("task_id")
        task_key = f"{domain}/{task if type(task) in (int, str) else '?'}"
        runs = RunBuilder(writer, task_key, dedupe=False)
        conversation = OpenAIConversation(runs, outcome_of=_tool_outcome, prompts_split=False)
        conversation.model = model
        for message in record["traj"]:
            if type(message) is dict:
                yield from conversation.message(message)
            else:
                diagnostics.unknown_records += 1
        if runs.calls:
            yield from runs.finish()
        else:
            yield from writer.lines(ForeignTrace(task_key, model))


def json_documents(root: Path) -> list[Path]:
    """A directory's ``*.json`` (and gzipped) files, by name."""
    return sorted_files(root, is_json_name, recursive=False)


FORMAT: Final = SessionFormat(
    "tau-bench", read_tau_bench, detector=detect_tau_bench, directory_files=json_documents
)
