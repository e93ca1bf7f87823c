"""The Inspect AI reader (issue 33): Inspect's own test logs measured to hand-checked counts,
one test per row of its failure-stage table in docs/formats.md, ``.eval`` zips read member
by member (out of order, damaged and unknown members counted)."""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.registry import resolve_format
from tests.formats_support import operations, read, round_trip

DATA = Path(__file__).resolve().parents[1] / "data" / "inspect"
BROWSER = DATA / "2025-05-12T20-27-36-04-00_browser.json.gz"
DEDUP = DATA / "log_message_deduplication.eval"
ERRORS = DATA / "log_tool_call_error.json"


def test_inspect_real_logs() -> None:
    for path in (BROWSER, DEDUP, ERRORS):
        assert resolve_format(path, ReadOptions()) == "inspect"
    evidence, diagnostics = read(BROWSER)
    ops = operations(evidence)
    assert Counter(op.ref for op in ops) == {"web_browser_click": 3, "web_browser_go": 1}
    assert {op.outcome for op in ops} == {"succeeded"}
    assert [(t.task_key, t.model) for t in evidence.traces] == [
        ("browser/1", "openai/gpt-4o-mini-2024-07-18")
    ]
    # A .eval whose header.json is its last member (written after the samples).
    archive = zipfile.ZipFile(DEDUP)
    assert archive.namelist()[-1] == "header.json"
    evidence, diagnostics = read(DEDUP)
    assert Counter(op.ref for op in operations(evidence)) == {"bash": 5}
    assert [(t.task_key, t.model) for t in evidence.traces] == [
        ("inspect_test_utils/guess_number/0", "hardcoded/hardcoded")
    ]
    assert diagnostics.unknown_records == 0 and diagnostics.malformed_lines == 0
    # Inspect's error-type fixture: eleven tool messages whose calls it never recorded.
    evidence, diagnostics = read(ERRORS)
    assert operations(evidence) == []
    assert len(evidence.traces) == 1
    assert diagnostics.unmatched_results == 11


def log(*samples: Any, model: str = "anthropic/claude-sonnet-4-5") -> dict[str, Any]:
    return {
        "version": 2,
        "status": "success",
        "eval": {"task": "ctf", "model": model, "created": "t"},
        "samples": list(samples),
    }


def sample(sample_id: Any, *messages: Any, epoch: int = 1) -> dict[str, Any]:
    return {"id": sample_id, "epoch": epoch, "input": "x", "messages": list(messages)}


def assistant(*calls: dict[str, Any], model: str | None = "claude-sonnet-4-5-2025") -> Any:
    return {"role": "assistant", "content": "", "model": model, "tool_calls": list(calls)}


def call(call_id: str, function: str = "bash", arguments: Any = None, **extra: Any) -> Any:
    return {"id": call_id, "function": function,
            "arguments": {"cmd": "ls"} if arguments is None else arguments, "type": "function",
            **extra}  # fmt: skip


def tool(call_id: str, error: tuple[str, str] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "tool", "content": "", "tool_call_id": call_id,
                               "function": "bash"}  # fmt: skip
    if error is not None:
        message["error"] = {"type": error[0], "message": error[1]}
    return message


ROWS = [
    ("no error", None, {}, ("succeeded", None)),
    ("unknown tool", ("parsing", "Tool bsh not found"), {}, ("failed", "resolve")),
    ("arguments did not parse", ("parsing", "Error parsing the following tool call arguments:"),
     {"parse_error": "Error parsing the following tool call arguments:", "arguments": {}},
     ("failed", "prepare")),
    ("schema validation", ("parsing", "Found 1 validation errors parsing tool input arguments:"),
     {}, ("failed", "validate")),
    ("timeout", ("timeout", "Command timed out before completing."), {}, ("timed_out", None)),
    ("unicode", ("unicode_decode", "Error decoding bytes to utf-8"), {}, ("failed", "invoke")),
    ("permission", ("permission", "Permission denied."), {}, ("failed", "invoke")),
    ("file not found", ("file_not_found", "File 'a' was not found."), {}, ("failed", "invoke")),
    ("is a directory", ("is_a_directory", "Is a directory."), {}, ("failed", "invoke")),
    ("limit", ("limit", "The tool exceeded its output limit of 10 MiB."), {},
     ("failed", "invoke")),
    ("output limit (older logs)", ("output_limit", "The tool output limit was exceeded."), {},
     ("failed", "invoke")),
    ("sandbox unavailable", ("sandbox_unavailable", "no sandbox"), {}, ("failed", "invoke")),
    ("tool error", ("unknown", "boom"), {}, ("failed", "invoke")),
    ("approval", ("approval", "Rejected by the approver."), {}, ("failed", "approve")),
    ("cancelled", ("cancelled", "Tool call cancelled"), {}, ("aborted", None)),
    ("a newer type", ("quantum", "?"), {}, ("failed", None)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("error", "extra", "expected"),
    [(error, extra, expected) for _, error, extra, expected in ROWS],
    ids=[name for name, _, _, _ in ROWS],
)
def test_inspect_stage_table(tmp_path: Path, error: Any, extra: Any, expected: Any) -> None:
    path = tmp_path / "log.json"
    document = log(sample(1, {"role": "user", "content": "go"}, assistant(call("c", **extra)),
                          tool("c", error)))  # fmt: skip
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    evidence, _ = read(path)
    (op,) = operations(evidence)
    assert (op.outcome, op.failure_stage) == expected


def eval_zip(path: Path, members: list[tuple[str, Any]]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, value in members:
            data = value if type(value) is bytes else json.dumps(value).encode()
            archive.writestr(name, data)
    return path


def test_eval_zip_member_by_member(tmp_path: Path) -> None:
    header = {key: value for key, value in log().items() if key != "samples"}
    path = eval_zip(
        tmp_path / "2026-01-01_ctf.eval",
        [
            ("samples/2_epoch_1.json", sample(2, assistant(call("a"), call("b", "python")),
                                              tool("a"))),  # b never answered
            ("samples/1_epoch_2.json", sample(1, assistant(call("c", arguments='{"cmd": 1'),
                                                         model=None), epoch=2)),
            ("samples/3_epoch_1.json", b'{"id": 3, "messages": ['),
            ("future/thing.json", {"x": 1}),
            ("summaries.json", []),
            ("header.json", header),
        ],
    )  # fmt: skip
    assert resolve_format(path, ReadOptions()) == "inspect"
    evidence, diagnostics = read(path)
    assert [(t.task_key, t.model) for t in evidence.traces] == [
        ("ctf/2", "anthropic/claude-sonnet-4-5-2025"),
        ("ctf/1", "anthropic/claude-sonnet-4-5"),
    ]
    assert [(op.ref, op.outcome) for op in operations(evidence)] == [
        ("bash", "succeeded"),
        ("python", "aborted"),
        ("bash", "aborted"),
    ]
    assert diagnostics.malformed_lines == 1  # samples/3
    assert diagnostics.unknown_records == 1  # future/thing.json
    assert diagnostics.unanswered_calls == 2
    assert diagnostics.undecodable_arguments == 1
    # A log still being written has no header: the journal's start record names the eval.
    running = eval_zip(
        tmp_path / "running.eval",
        [("samples/1_epoch_1.json", sample(1, assistant(call("a"), model=None), tool("a"))),
         ("_journal/start.json", {"version": 3, "eval": {"task": "t2", "model": "m/x"}})],
    )  # fmt: skip
    evidence, _ = read(running)
    assert [(t.task_key, t.model) for t in evidence.traces] == [("t2/1", "m/x")]
    # Not a zip at all, named .eval: counted, never fatal.
    broken = tmp_path / "broken.eval"
    broken.write_bytes(b"PK\x03\x04 truncated")
    evidence, diagnostics = read(broken, "inspect")
    assert evidence.traces == [] and diagnostics.malformed_lines == 1


def test_convert_then_measure_equals_direct(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.eval").write_bytes(DEDUP.read_bytes())
    (tmp_path / "in" / "b.json.gz").write_bytes(BROWSER.read_bytes())
    direct, native = round_trip([tmp_path / "in"], tmp_path / "out", "inspect")
    assert direct == native
    converted = sorted(path.name for path in (tmp_path / "out").iterdir())
    assert converted == ["0001-a.eval.jsonl", "0002-b.jsonl"]
