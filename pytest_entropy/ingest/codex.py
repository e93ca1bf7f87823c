"""OpenAI Codex CLI rollouts (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``).

Each line is ``{timestamp, type, payload}`` (codex-rs/protocol ``RolloutLine``):
``session_meta`` (the session id, ``cwd``, ``model_provider``), ``turn_context`` (one per
turn, with the model), ``response_item`` (what went to and came from the model),
``event_msg`` (what the harness reported) and ``compacted`` (a compaction's summary).

* call: a ``response_item`` ``function_call`` (``name``, JSON-text ``arguments``, ``call_id``),
  ``custom_tool_call`` (free-text ``input``, read as ``{"input": text}``, the item's own field),
  ``local_shell_call`` (``local_shell``, its ``action``) or ``web_search_call``
  (``web_search``, its ``action``; its own ``status`` is its outcome). MCP tools keep their
  ``mcp__<server>__<tool>`` names;
* outcome: the ``function_call_output`` / ``custom_tool_call_output`` with the same
  ``call_id``, read with what the harness reported for that call before it
  (``exec_command_end``, ``patch_apply_end``, ``mcp_tool_call_end``) and, without such an
  event, the fixed texts the harness answers with (the table in ``docs/formats.md``);
* trace: one turn (a ``turn_context`` starts the next); task key: the ``session_meta`` id
  (else the file name); model: ``<model_provider>/<turn_context.model>`` (``openai`` when no
  provider is recorded).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_entropy.ingest.anthropic import provider_model
from pytest_entropy.ingest.base import SessionFormat
from pytest_entropy.ingest.detection import sorted_files
from pytest_entropy.ingest.detectors import detect_codex, is_rollout_name
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.foreign import decode_arguments, iter_json_lines
from pytest_entropy.ingest.jsonparse import JSONParseError, parse_json_text
from pytest_entropy.ingest.runs import RunBuilder
from pytest_entropy.ingest.writer import ForeignCall, NativeWriter

if TYPE_CHECKING:
    from pytest_entropy.ingest.base import ReadOptions

__all__ = ["FORMAT", "codex_files", "detect_codex", "output_outcome", "read_codex"]

_LINE_TYPES: Final = frozenset({"session_meta", "turn_context", "response_item", "event_msg"})
# Response items that carry no tool call (messages, reasoning, the harness's snapshots).
_QUIET_ITEMS: Final = frozenset(
    {"message", "reasoning", "ghost_snapshot", "compaction", "compaction_summary", "other"}
)
_OUTPUT_ITEMS: Final = frozenset({"function_call_output", "custom_tool_call_output"})
# Older rollouts (before the {timestamp, type, payload} envelope) wrote these items bare.
_LEGACY_ITEMS: Final = (
    _QUIET_ITEMS
    | _OUTPUT_ITEMS
    | {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
    }
)
# What the harness answers the model with when a call never ran (codex-rs/core/src/tools):
# registry.rs names an unknown tool, handlers/mod.rs refuses arguments that do not
# deserialize, events.rs normalises a refused approval.
_UNSUPPORTED: Final = ("unsupported call:", "unsupported custom tool call:")
_PARSE_FAILURE: Final = "failed to parse function arguments"
_REJECTED: Final = ("exec command rejected by user", "patch rejected by user", "rejected by user")
_EXECUTION_ERROR: Final = "execution error:"
# Unified exec's poll of a running process (handlers/unified_exec.rs): the exit code it
# shows is the exit of the command exec_command started, which exec_command_end reports.
_POLLS: Final = frozenset({"write_stdin"})
_EXIT_CODE: Final = re.compile(r"^Exit code: (-?\d+)$|^Process exited with code (-?\d+)$", re.M)

Outcome = tuple[str, str | None]


def _output_text(output: Any) -> tuple[str, bool | None]:
    """``(text, success flag)`` of a recorded output: a string, content items, or the older
    ``{content, success}`` object."""
    if type(output) is str:
        return output, None
    if type(output) is dict:
        content = output.get("content")
        success = output.get("success")
        text, _ = _output_text(content)
        return text, success if type(success) is bool else None
    if type(output) is list:
        texts = [
            item["text"] for item in output if type(item) is dict and type(item.get("text")) is str
        ]
        return "\n".join(texts), None
    return "", None


def _exit_code(text: str) -> int | None:
    """The exit code a shell tool's output states: the structured ``metadata.exit_code``
    or the freeform ``Exit code: N`` / unified exec's ``Process exited with code N`` line."""
    if text.startswith("{"):
        try:
            value = parse_json_text(text)
        except JSONParseError:
            value = None
        metadata = value.get("metadata") if type(value) is dict else None
        code = metadata.get("exit_code") if type(metadata) is dict else None
        if type(code) is int:
            return code
    match = _EXIT_CODE.search(text[:4096])
    if match is None:
        return None
    return int(match.group(1) or match.group(2))


def output_outcome(output: Any, decoded: bool) -> Outcome:
    """The outcome and failure stage an output alone tells (``docs/formats.md``).

    ``decoded``: whether the call's arguments were a JSON object (an argument refusal of
    arguments that are not even JSON failed while preparing them, else validating them).
    """
    text, success = _output_text(output)
    head = text.lstrip()
    if head.startswith(_UNSUPPORTED):
        return "failed", "resolve"
    if head.startswith(_PARSE_FAILURE):
        return "failed", "validate" if decoded else "prepare"
    if head.startswith(_REJECTED):
        return "failed", "approve"
    if head.startswith(_EXECUTION_ERROR):
        return "failed", "invoke"
    code = _exit_code(text)
    if code is not None and code != 0:
        return "failed", "invoke"
    if success is False:
        return "failed", None
    return "succeeded", None


def _event_outcome(payload: dict[str, Any]) -> tuple[str, Outcome] | None:
    """``(call id, outcome)`` an ``event_msg`` reports for a call, or ``None``."""
    call_id = payload.get("call_id")
    if type(call_id) is not str:
        return None
    kind = payload.get("type")
    status = payload.get("status")
    if status == "declined":
        return call_id, ("failed", "approve")
    if kind == "exec_command_end":
        code = payload.get("exit_code")
        if (type(code) is int and code != 0) or status == "failed":
            return call_id, ("failed", "invoke")
        return call_id, ("succeeded", None)
    if kind == "patch_apply_end":
        if payload.get("success") is False or status == "failed":
            return call_id, ("failed", "invoke")
        return call_id, ("succeeded", None)
    if kind == "mcp_tool_call_end":
        result = payload.get("result")
        if type(result) is dict and "Err" in result:
            return call_id, ("failed", None)
        ok = result.get("Ok") if type(result) is dict else None
        if type(ok) is dict and (ok.get("isError") is True or ok.get("is_error") is True):
            return call_id, ("failed", "invoke")
        return call_id, ("succeeded", None)
    return None


class _Rollout:
    """One rollout's reading state: the runs, the model, and the harness's verdicts.

    The harness's events and the outputs arrive in either order (a command still running
    when its output went back ends later, in an ``exec_command_end``): a verdict an event
    reports wins over what the output says, whichever comes first.
    """

    __slots__ = ("held", "model", "provider", "reported", "runs")

    def __init__(self, writer: NativeWriter, task_key: str) -> None:
        self.runs = RunBuilder(writer, task_key)
        self.provider = "openai"
        self.model: str | None = None
        self.held: dict[str, ForeignCall] = {}  # this turn's calls by id
        self.reported: dict[str, Outcome] = {}  # verdicts of events, by call id

    def boundary(self) -> Iterator[bytes]:
        self.held.clear()
        self.reported.clear()
        yield from self.runs.boundary()

    def call(self, name: Any, args: Any, call_id: Any, *, decoded: bool = True) -> Iterator[bytes]:
        if type(name) is not str:
            self.runs.writer.diagnostics.unknown_records += 1
            return
        known = type(call_id) is str
        call = yield from self.runs.call(
            name, args, call_id=call_id if known else None, model=self.model, decoded=decoded
        )
        if call is not None and known:
            self.held[call_id] = call

    def event(self, payload: dict[str, Any]) -> None:
        reported = _event_outcome(payload)
        if reported is None:
            return
        call_id, (outcome, stage) = reported
        self.reported[call_id] = (outcome, stage)
        call = self.held.get(call_id)
        if call is not None and call.answered:
            call.outcome = outcome
            call.stage = stage

    def output(self, item: dict[str, Any]) -> None:
        call_id = item.get("call_id")
        call = self.held.get(call_id) if type(call_id) is str else None
        if type(call_id) is str and call_id in self.reported:
            outcome, stage = self.reported[call_id]
        else:
            decoded = call is None or type(call.args) is dict
            outcome, stage = output_outcome(item.get("output"), decoded)
            if call is not None and call.name in _POLLS and stage == "invoke":
                outcome, stage = "succeeded", None  # the exit belongs to exec_command
        self.runs.result(call_id, outcome, stage)

    def item(self, item: dict[str, Any], where: str) -> Iterator[bytes]:
        diagnostics = self.runs.writer.diagnostics
        kind = item.get("type")
        kind = kind if type(kind) is str else None
        if kind == "function_call":
            args, decoded = decode_arguments(item.get("arguments"))
            yield from self.call(item.get("name"), args, item.get("call_id"), decoded=decoded)
        elif kind == "custom_tool_call":
            text = item.get("input")
            yield from self.call(
                item.get("name"), {"input": text}, item.get("call_id"), decoded=type(text) is str
            )
        elif kind == "local_shell_call":
            action = item.get("action")
            call_id = item.get("call_id") or item.get("id")
            yield from self.call("local_shell", action, call_id, decoded=type(action) is dict)
        elif kind == "web_search_call":
            # A search the API ran itself: no call id, its own status is the verdict.
            action = item.get("action")
            status = item.get("status")
            verdict: Outcome = ("aborted", None)
            if status is None or status == "completed":
                verdict = ("succeeded", None)
            elif status == "failed":
                verdict = ("failed", "invoke")
            yield from self.runs.call(
                "web_search",
                action if type(action) is dict else {},
                model=self.model,
                outcome=verdict[0],
                stage=verdict[1],
                answered=True,
            )
        elif kind in _OUTPUT_ITEMS:
            self.output(item)
        elif kind not in _QUIET_ITEMS:
            diagnostics.unknown_records += 1
            diagnostics.note(where, f"unknown response item {str(kind)[:40]!r}")


def read_codex(path: Path, options: ReadOptions, diagnostics: ScanDiagnostics) -> Iterator[bytes]:
    """Native lines of one Codex rollout."""
    where = str(path)
    writer = NativeWriter(options, diagnostics)
    stem = path.name.removesuffix(".gz").removesuffix(".jsonl")
    rollout = _Rollout(writer, stem)
    keyed = False
    for number, line in iter_json_lines(path, diagnostics, name=where):
        at = f"{where}:{number}"
        if type(line) is not dict:
            diagnostics.non_object_lines += 1
            diagnostics.note(at, "record is not a JSON object")
            continue
        kind = line.get("type")
        kind = kind if type(kind) is str else None
        payload = line.get("payload")
        if kind == "compacted":
            continue  # a summary of earlier turns; its replacement history is not new calls
        if payload is None and kind in _LEGACY_ITEMS:
            yield from rollout.item(line, at)  # an older rollout: bare response items
            continue
        if "record_type" in line:
            continue  # an older rollout's state marker
        if kind is None and not keyed and type(line.get("id")) is str and "timestamp" in line:
            keyed = True  # an older rollout's first line: the session's id
            if line["id"]:
                rollout.runs.task_key = line["id"]
            continue
        if kind not in _LINE_TYPES or type(payload) is not dict:
            diagnostics.unknown_records += 1
            diagnostics.note(at, f"unknown rollout line {str(kind)[:40]!r}")
            continue
        if kind == "response_item":
            yield from rollout.item(payload, at)
        elif kind == "event_msg":
            rollout.event(payload)
        elif kind == "turn_context":
            yield from rollout.boundary()
            model = provider_model(rollout.provider, payload.get("model"))
            rollout.model = model or rollout.model
        elif not keyed:  # the first session_meta names the session (a fork copies others)
            keyed = True
            if type(payload.get("id")) is str and payload["id"]:
                rollout.runs.task_key = payload["id"]
            provider = payload.get("model_provider")
            if type(provider) is str and provider and "/" not in provider:
                rollout.provider = provider
            model = provider_model(rollout.provider, payload.get("model"))
            rollout.model = model or rollout.model
    yield from rollout.runs.finish()


def codex_files(root: Path) -> list[Path]:
    """Every ``rollout-*.jsonl`` below a directory (``sessions/YYYY/MM/DD``), by relative
    path: a ``$CODEX_HOME`` or its ``sessions`` folder reads in time order."""
    return sorted_files(root, is_rollout_name, recursive=True)


FORMAT: Final = SessionFormat(
    "codex", read_codex, detector=detect_codex, directory_files=codex_files
)
