"""Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

Each line is an event. ``assistant`` events carry an Anthropic message whose ``tool_use``
blocks are the calls (one API message may be split over several lines; a block repeated
under the same id is counted and dropped); ``user`` events carry the ``tool_result``
blocks, failed when ``is_error`` is true, or a prompt. ``progress``, ``system``,
``file-history-snapshot``, ``queue-operation`` and ``summary`` events carry no calls.

* trace: one prompt run, the calls between two prompts (split where the model changes);
* task key: the ``sessionId``; a sidechain (subagent) transcript uses
  ``<sessionId>/<agentId>``, so each subagent is its own task;
* model: ``anthropic/<message.model>`` (``<synthetic>`` placeholder messages change nothing);
* files: a directory means its ``*.jsonl`` plus each session's ``<session>/subagents/*.jsonl``
  (subagent transcripts), in code-unit order of their relative paths.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final

from pytest_entropy.ingest.anthropic import (
    assistant_tool_uses,
    is_prompt,
    provider_model,
    user_tool_results,
)
from pytest_entropy.ingest.base import SessionFormat
from pytest_entropy.ingest.detectors import detect_claude_code, with_subagents
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.foreign import iter_json_lines
from pytest_entropy.ingest.runs import RunBuilder
from pytest_entropy.ingest.writer import NativeWriter

if TYPE_CHECKING:
    from pytest_entropy.ingest.base import ReadOptions

__all__ = ["FORMAT", "detect_claude_code", "read_claude_code", "with_subagents"]

_QUIET_EVENTS: Final = frozenset(
    {
        "progress",
        "system",
        "file-history-snapshot",
        "queue-operation",
        "summary",
        "custom-title",
        "tag",
        "agent-name",
    }
)


def read_claude_code(
    path: Path, options: ReadOptions, diagnostics: ScanDiagnostics
) -> Iterator[bytes]:
    """Native lines of one Claude Code transcript."""
    writer = NativeWriter(options, diagnostics)
    runs = RunBuilder(writer, "(none)")
    model: str | None = None
    keyed = False
    where = str(path)
    for number, event in iter_json_lines(path, diagnostics, name=where):
        if type(event) is not dict:
            diagnostics.non_object_lines += 1
            diagnostics.note(f"{where}:{number}", "record is not a JSON object")
            continue
        if not keyed and type(event.get("sessionId")) is str:
            keyed = True
            runs.task_key = event["sessionId"]
            if event.get("isSidechain") is True and type(event.get("agentId")) is str:
                runs.task_key += "/" + event["agentId"]
        kind = event.get("type")
        message = event.get("message")
        if kind == "assistant" and type(message) is dict:
            model = provider_model("anthropic", message.get("model")) or model
            yield from assistant_tool_uses(message.get("content"), runs, model)
        elif kind == "user" and type(message) is dict:
            content = message.get("content")
            if is_prompt(content):
                yield from runs.boundary()
            else:
                user_tool_results(content, runs)
        elif type(kind) is not str or kind not in _QUIET_EVENTS:
            diagnostics.unknown_records += 1
            diagnostics.note(f"{where}:{number}", f"unknown event type {str(kind)[:40]!r}")
    yield from runs.finish()


FORMAT: Final = SessionFormat(
    "claude-code", read_claude_code, detector=detect_claude_code, directory_files=with_subagents
)
