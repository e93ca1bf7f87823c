"""BFCL (Berkeley Function Calling Leaderboard) result files, with their score files.

Layout: ``.../result/<model>/[<group>/]<name>_result.json`` (JSON Lines, one entry per test
id); the checker's verdicts are in the matching ``.../score/<model>/[<group>/]`` file
(``<name>_score.json``, or ``<category>_score.json`` as BFCL v1 named them): a summary line,
then one line per *failed* entry.

* call: each ``{tool_name: arguments_json}`` of an entry's ``result`` (single-turn), or of
  the ``assistant`` messages in the ``inference_log`` steps (multi-turn); a ``result`` that is
  a raw string (prompt-style models, inference errors) is not decoded: the entry becomes a
  trace without calls and is counted as an unstructured output;
* outcome, multi-turn: the ``tool`` message at the same position in the step; failed when its
  text is a JSON object with a non-empty ``error`` member or starts with
  ``Error during execution`` (BFCL's own marker). A step that was not executed (its
  decoding failed: no ``tool`` messages) leaves undecodable calls ``failed`` and the others
  ``aborted``;
* outcome, single-turn: every call of an entry listed in the score file failed, the others
  succeeded (without a score file they count as succeeded and the entries as unscored);
* trace: one entry; task key: the test category (``simple``, ``live_multiple``,
  ``multi_turn_base``, ...) from the file name;
* model: the ``<model>`` directory, BFCL's name with ``/`` written as ``_``:
  ``openai_gpt-oss-120b`` -> ``openai/gpt-oss-120b``; a name without ``_`` becomes
  ``bfcl/<name>``;
* refs: the names as the model emitted them (BFCL's FC handlers send ``math.factorial`` as
  ``math_factorial``; the BFCL surface reader writes refs the same way);
* files: a directory means every ``*_result.json`` below it, by relative path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_entropy.ingest.base import SessionFormat
from pytest_entropy.ingest.detection import sorted_files
from pytest_entropy.ingest.detectors import detect_bfcl
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.foreign import decode_arguments, iter_json_lines
from pytest_entropy.ingest.jsonparse import JSONParseError, parse_json_text
from pytest_entropy.ingest.writer import ForeignCall, ForeignTrace, NativeWriter

if TYPE_CHECKING:
    from pytest_entropy.ingest.base import ReadOptions

__all__ = [
    "FORMAT",
    "bfcl_category",
    "bfcl_model",
    "bfcl_result_files",
    "bfcl_score_path",
    "detect_bfcl",
    "read_bfcl_results",
]

_RESULT_SUFFIX: Final = "_result.json"
_PREFIX: Final = re.compile(r"^(?:BFCL_v\d+_|gorilla_openfunctions_v\d+_test_)")
_EXECUTION_ERROR: Final = "Error during execution"


def bfcl_category(path: Path) -> str:
    """A result file's test category: ``BFCL_v4_live_simple_result.json`` -> ``live_simple``."""
    name = path.name.removesuffix(_RESULT_SUFFIX)
    return _PREFIX.sub("", name) or name


def _result_index(path: Path) -> int | None:
    parts = path.parts[:-1]
    for index in range(len(parts) - 1, -1, -1):
        if parts[index] == "result":
            return index
    return None


def bfcl_model(path: Path) -> str:
    """``provider/model`` from the ``<model>`` directory of a result file."""
    index = _result_index(path)
    parts = path.parts
    name = parts[index + 1] if index is not None and index + 2 < len(parts) else path.parent.name
    provider, underscore, model = name.partition("_")
    if underscore and provider and model:
        return f"{provider}/{model}"
    return f"bfcl/{name or 'unknown'}"


def bfcl_score_path(path: Path) -> Path | None:
    """The score file that belongs to a result file, if it exists."""
    index = _result_index(path)
    if index is None:
        return None
    parts = list(path.parts)
    parts[index] = "score"
    directory = Path(*parts[:-1])
    for name in (
        path.name.removesuffix(_RESULT_SUFFIX) + "_score.json",
        bfcl_category(path) + "_score.json",
    ):
        candidate = directory / name
        if candidate.is_file():
            return candidate
    return None


def _failed_entries(score: Path, diagnostics: ScanDiagnostics) -> tuple[set[str], set[int]]:
    """Ids (and, for BFCL v1's numeric ids, 1-based positions) of the failed entries."""
    ids: set[str] = set()
    positions: set[int] = set()
    private = ScanDiagnostics()
    for _, record in iter_json_lines(score, private):
        if type(record) is not dict or "accuracy" in record:
            continue
        prompt = record.get("prompt")
        entry_id = record.get("id")
        if type(prompt) is dict and type(prompt.get("id")) is str:
            ids.add(prompt["id"])
        elif type(entry_id) is str:
            ids.add(entry_id)
        elif type(entry_id) is int:
            positions.add(entry_id)
    diagnostics.malformed_lines += private.malformed_lines
    diagnostics.oversized_lines += private.oversized_lines
    for sample in private.samples:
        diagnostics.note(str(score), sample)
    return ids, positions


def _tool_failed(content: Any) -> bool:
    if type(content) is not str:
        return False
    if content.startswith(_EXECUTION_ERROR):
        return True
    if content.startswith("{"):
        try:
            value = parse_json_text(content)
        except JSONParseError:
            return False
        return type(value) is dict and value.get("error") not in (None, "", False)
    return False


def _calls(items: Any, outcome: str, diagnostics: ScanDiagnostics) -> Iterator[ForeignCall]:
    """The ``{name: arguments}`` calls of a result list (nested lists flattened)."""
    for item in items if type(items) is list else ():
        if type(item) is list:
            yield from _calls(item, outcome, diagnostics)
        elif type(item) is dict:
            for name, arguments in item.items():
                args, decoded = decode_arguments(arguments)
                if not decoded:
                    diagnostics.undecodable_arguments += 1
                yield ForeignCall(name, args, outcome)
        else:
            diagnostics.unstructured_outputs += 1


def _multi_turn(log: list[Any], diagnostics: ScanDiagnostics) -> Iterator[ForeignCall]:
    for turn in log:
        if type(turn) is not dict:
            continue  # the initial state records
        for step_name, step in turn.items():
            if step_name == "begin_of_turn_query" or type(step) is not list:
                continue
            calls: list[ForeignCall] = []
            results: list[Any] = []
            for message in step:
                if type(message) is not dict:
                    continue
                role = message.get("role")
                if role == "assistant":
                    calls.extend(_calls(message.get("content"), "aborted", diagnostics))
                elif role == "tool":
                    results.append(message.get("content"))
            for position, call in enumerate(calls):
                if position < len(results):
                    call.outcome = "failed" if _tool_failed(results[position]) else "succeeded"
                elif type(call.args) is not dict:
                    call.outcome = "failed"
                else:
                    diagnostics.unanswered_calls += 1
            if len(results) > len(calls):
                diagnostics.unmatched_results += len(results) - len(calls)
            yield from calls


def read_bfcl_results(
    path: Path, options: ReadOptions, diagnostics: ScanDiagnostics
) -> Iterator[bytes]:
    """Native lines of one BFCL result file."""
    where = str(path)
    category = bfcl_category(path)
    model = bfcl_model(path)
    score = bfcl_score_path(path)
    failed_ids, failed_positions = (
        (set(), set()) if score is None else _failed_entries(score, diagnostics)
    )
    writer = NativeWriter(options, diagnostics)
    position = 0
    for number, entry in iter_json_lines(path, diagnostics, name=where):
        position += 1
        if type(entry) is not dict or "result" not in entry:
            diagnostics.unknown_records += 1
            diagnostics.note(f"{where}:{number}", "not a BFCL result entry")
            continue
        entry_id = entry.get("id")
        failed = position in failed_positions or (type(entry_id) is str and entry_id in failed_ids)
        trace = ForeignTrace(category, model)
        log = entry.get("inference_log")
        result = entry.get("result")
        if type(log) is list:
            trace.calls.extend(_multi_turn(log, diagnostics))
        elif type(result) is list:
            if score is None:
                diagnostics.unscored_entries += 1
            outcome = "failed" if failed else "succeeded"
            trace.calls.extend(_calls(result, outcome, diagnostics))
        else:
            diagnostics.unstructured_outputs += 1
        yield from writer.lines(trace)


def bfcl_result_files(root: Path) -> list[Path]:
    """Every ``*_result.json`` under ``root``, by relative path."""
    return sorted_files(root, lambda name: name.endswith("_result.json"), recursive=True)


def bfcl_companions(path: Path) -> list[Path]:
    """The score file the reader reads beside a result file."""
    score = bfcl_score_path(path)
    return [] if score is None else [score]


FORMAT: Final = SessionFormat(
    "bfcl",
    read_bfcl_results,
    detector=detect_bfcl,
    directory_files=bfcl_result_files,
    companions=bfcl_companions,
)
