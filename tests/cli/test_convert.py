"""``convert`` and the format options of ``measure``, ``status`` and ``freedom``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.cli.commands.convert import converted_name
from pytest_entropy.ingest.writer import REDACTED, is_secret_key, redact_value
from tests.formats_support import convert


def pi_log(path: Path, *arguments: dict[str, Any]) -> Path:
    lines = [
        {"type": "session", "id": "s"},
        {"type": "message", "message": {"role": "user", "content": "go"}},
    ]
    for number, args in enumerate(arguments):
        lines.append(
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "provider": "anthropic",
                    "model": "m",
                    "content": [
                        {"type": "toolCall", "id": f"c{number}", "name": "bash", "arguments": args}
                    ],
                },
            }
        )
        lines.append(
            {
                "type": "message",
                "message": {
                    "role": "toolResult",
                    "toolCallId": f"c{number}",
                    "isError": number == 0,
                },
            }
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_converted_names_keep_input_order() -> None:
    assert converted_name("a.jsonl", 1, 4) == "0001-a.jsonl"
    assert (
        converted_name("x/subagents/agent-1.jsonl.gz", 12, 4) == "0012-x__subagents__agent-1.jsonl"
    )
    assert converted_name("gpt-4o-airline.json", 3, 5) == "00003-gpt-4o-airline.jsonl"


def test_convert_is_deterministic_and_native(tmp_path: Path) -> None:
    source = pi_log(
        tmp_path / "in" / "one.jsonl", {"command": "ls"}, {"command": "ls -la", "timeout": 5}
    )
    first = convert(tmp_path / "a", "--sessions", str(source.parent))
    second = convert(tmp_path / "b", "--sessions", str(source))
    assert [item["format"] for item in first["files"]] == ["pi"]
    assert first["files"][0]["calls"] == 2 and first["files"][0]["traces"] == 1
    out_a = Path(first["files"][0]["output"])
    out_b = Path(second["files"][0]["output"])
    assert out_a.name == out_b.name == "0001-one.jsonl"
    assert out_a.read_bytes() == out_b.read_bytes()
    lines = out_a.read_bytes().splitlines()
    assert json.loads(lines[0]) == {"type": "model_change", "provider": "anthropic", "modelId": "m"}
    details = json.loads(lines[1])["message"]["details"]
    assert details["trace"]["kind"] == "pi-fabric.execution"
    assert [op["sequence"] for op in details["trace"]["operations"]] == [0, 1]
    assert details["audits"][1] == {
        "ref": "pi.bash",
        "tool": "bash",
        "success": True,
        "args": {"command": "ls -la", "timeout": 5},
    }
    # Converting the converted file again copies it unchanged.
    again = convert(tmp_path / "c", "--sessions", str(out_a))
    assert again["files"][0]["format"] == "fabric"
    assert Path(again["files"][0]["output"]).read_bytes() == out_a.read_bytes()


def test_redaction_rule() -> None:
    for key in (
        "apiKey",
        "api_key",
        "X-Api-Key",
        "accessToken",
        "client_secret",
        "password",
        "Authorization",
    ):
        assert is_secret_key(key), key
    for key in ("max_tokens", "tokenizer", "author", "path", "keys", "monkey"):
        assert not is_secret_key(key), key
    blob = "QUJD" * 40
    value, count = redact_value(
        {
            "token": 42,
            "nested": [{"password": "p"}, blob, "short"],
            "image": f"data:image/png;base64,{blob}",
            "keep": None,
        }
    )
    assert value == {
        "token": REDACTED,
        "nested": [{"password": REDACTED}, REDACTED, "short"],
        "image": REDACTED,
        "keep": None,
    }
    assert count == 4


def test_convert_redact_changes_audits_not_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = pi_log(tmp_path / "in" / "s.jsonl", {"command": "curl", "api_key": "sk-123"})
    plain = convert(tmp_path / "plain", "--sessions", str(source))
    redacted = convert(tmp_path / "red", "--sessions", str(source), "--redact")
    text = Path(redacted["files"][0]["output"]).read_text(encoding="utf-8")
    assert "sk-123" not in text and REDACTED in text
    assert '"redactedValues":1' in text
    assert "sk-123" in Path(plain["files"][0]["output"]).read_text(encoding="utf-8")
    hashes = []
    for result in (plain, redacted):
        code, out, err = run(
            capsys, "measure", "--sessions", result["files"][0]["output"], "--json"
        )
        assert code == 0, err
        hashes.append(json.loads(out)["reportHash"])
    code, out, _ = run(capsys, "measure", "--sessions", str(source), "--json")
    assert hashes == [json.loads(out)["reportHash"]] * 2


def test_measure_and_status_take_the_format_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = tmp_path / "sessions"
    pi_log(sessions / "a.jsonl", {"command": "ls"}, {"path": "x"})
    tools = tmp_path / "tools.json"
    tools.write_text(
        json.dumps(
            [
                {
                    "name": "bash",
                    "label": "bash",
                    "parameters": {
                        "type": "object",
                        "properties": {"command": {"type": "string"}},
                        "required": ["command"],
                    },
                }
            ]
        ),
        encoding="utf-8",
    )
    code, out, err = run(
        capsys, "measure", "--sessions", str(sessions), "--surface", str(tools), "--json"
    )
    assert code == 0, err
    report = json.loads(out)["report"]
    assert report["totals"]["failed"] == 1
    assert [row["ref"] for row in report["refs"]] == ["pi.bash"]
    assert report["refs"][0]["staticFreedom"] > 0
    code, out, _ = run(
        capsys, "measure", "--sessions", str(sessions), "--format", "fabric", "--json"
    )
    assert code == 2  # read natively, Pi sessions yield nothing: an empty corpus fails
    code, out, _ = run(
        capsys,
        "measure",
        "--sessions",
        str(sessions),
        "--format",
        "fabric",
        "--allow-empty",
        "--json",
    )
    assert json.loads(out)["report"]["totals"]["operations"] == 0
    code, out, _ = run(
        capsys, "measure", "--sessions", str(sessions), "--ref-prefix", "agent.", "--json"
    )
    assert [row["ref"] for row in json.loads(out)["report"]["refs"]] == ["agent.bash"]
    code, out, err = run(
        capsys, "status", "--sessions", str(sessions), "--surface", str(tools), "--json"
    )
    assert code == 0, err
    assert json.loads(out)["surface"]["actions"] == 1
    code, out, _ = run(
        capsys, "freedom", "--surface", str(tools), "--surface-format", "pi", "--json"
    )
    assert [row["ref"] for row in json.loads(out)["actions"]] == ["pi.bash"]
    code, _, err = run(capsys, "measure", "--sessions", str(sessions), "--format", "nope")
    assert code == 2 and "invalid choice" in err


def test_agent_dir_stays_native_unless_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = tmp_path / "agent"
    project = agent / "sessions" / "--work-app--"
    pi_log(project / "s.jsonl", {"command": "ls"})
    base = ["status", "--agent-dir", str(agent), "--cwd", "/work/app", "--json", "--allow-empty"]
    code, out, err = run(capsys, *base)
    assert code == 0, err
    assert json.loads(out)["diagnostics"]["traces"] == 0
    code, out, err = run(capsys, *base, "--format", "pi")
    assert code == 0, err
    assert json.loads(out)["diagnostics"]["traces"] == 1
