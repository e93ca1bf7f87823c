"""An editor's UTF-8 byte order mark in front of a whole-document session file (tau-bench,
OpenHands, ToolBench, BFCL) reads as the file without it: the detectors and the document
reader skip it, as the JSON Lines readers always did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_entropy.cli.app import main

_BOM = b"\xef\xbb\xbf"
_CALL = {"id": "c", "type": "function", "function": {"name": "book", "arguments": '{"n": 1}'}}
_TAU = [
    {
        "task_id": 7,
        "trial": 0,
        "reward": 1.0,
        "info": {},
        "traj": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [_CALL]},
            {"role": "tool", "tool_call_id": "c", "name": "book", "content": "{}"},
        ],
    }
]
_OPENHANDS = [
    {"id": 1, "source": "user", "action": "message", "args": {"content": "fix"}},
    {
        "id": 2,
        "source": "agent",
        "action": "run",
        "tool_call_metadata": {
            "function_name": "execute_bash",
            "model_response": {
                "choices": [
                    {
                        "message": {
                            "tool_calls": [
                                {
                                    "id": "t2",
                                    "function": {
                                        "name": "execute_bash",
                                        "arguments": '{"command": "make"}',
                                    },
                                }
                            ]
                        }
                    }
                ]
            },
        },
        "args": {"command": "make"},
    },
    {"id": 3, "source": "agent", "observation": "run", "cause": 2, "extras": {}},
]


def _hash(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    assert main(["measure", "--sessions", str(path), "--json"]) == 0, capsys.readouterr().err
    report = json.loads(capsys.readouterr().out)
    assert report["report"]["totals"]["actionOperations"] > 0
    return str(report["reportHash"])


@pytest.mark.parametrize(
    ("name", "document"), [("gpt-4o-airline.json", _TAU), ("trajectory.json", _OPENHANDS)]
)
def test_a_byte_order_mark_reads_as_the_file_without_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, document: list
) -> None:
    text = json.dumps(document, indent=1).encode()
    (tmp_path / "plain").mkdir()
    (tmp_path / "marked").mkdir()
    plain, marked = tmp_path / "plain" / name, tmp_path / "marked" / name
    plain.write_bytes(text)
    marked.write_bytes(_BOM + text)
    assert _hash(capsys, marked) == _hash(capsys, plain)
