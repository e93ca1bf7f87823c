"""``convert`` and the format options of ``measure``, ``status`` and ``freedom``."""

from __future__ import annotations

import gzip
import json
import random
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


# ----------------------------------------------- nothing passes on nothing (garbage inputs)


def _garbage(path: Path, kind: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "csv":
        path.write_text("name,count\na,1\nb,2\n", encoding="utf-8")
    else:
        path.write_bytes(random.Random(7).randbytes(4096))
    return path


@pytest.mark.parametrize(
    ("name", "kind", "why"),
    [
        ("noise.bin", "bytes", "no line of any known session format"),
        ("noise.jsonl", "bytes", "lines is JSON"),
        ("table.csv", "csv", "no line of any known session format"),
    ],
)
def test_convert_refuses_a_file_of_no_session_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, kind: str, why: str
) -> None:
    source = _garbage(tmp_path / name, kind)
    out = tmp_path / "out"
    code, stdout, err = run(capsys, "convert", "--sessions", str(source), "--out", str(out))
    assert (code, stdout) == (2, "")
    assert f"1 unrecognised: {source}: " in err and why in err, err
    assert "--allow-empty accepts an empty corpus" in err
    assert not out.exists()  # nothing written on nothing


def test_convert_passes_over_garbage_beside_a_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = tmp_path / "in"
    pi_log(sessions / "a.jsonl", {"command": "ls"})
    noise = _garbage(sessions / "b.jsonl", "bytes")
    out = tmp_path / "out"
    code, stdout, err = run(
        capsys, "convert", "--sessions", str(sessions), "--out", str(out), "--json"
    )
    assert code == 0, err
    result = json.loads(stdout)
    assert [item["output"] for item in result["files"]] == [str(out / "0001-a.jsonl"), None]
    assert result["diagnostics"]["unrecognizedNames"] == [str(noise)]
    assert [path.name for path in out.iterdir()] == ["0001-a.jsonl"]
    assert f"1 unrecognised ({noise})" in err  # the warning every corpus command prints
    code, _, err = run(
        capsys, "convert", "--sessions", str(sessions), "--out", str(tmp_path / "o2"), "--strict"
    )
    assert code == 2 and f"{noise}: no line of any known session format" in err


def test_convert_refuses_an_empty_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "out"
    code, stdout, err = run(capsys, "convert", "--sessions", str(empty), "--out", str(out))
    assert (code, stdout) == (2, "")
    assert "read 0 files, 0 lines, 0 traces: no session files found" in err
    assert not out.exists()
    code, stdout, err = run(
        capsys, "convert", "--sessions", str(empty), "--out", str(out), "--allow-empty"
    )
    assert code == 0, err
    assert "converted 0 of 0 files" in stdout


def _truncated_gzip(path: Path, body: bytes) -> Path:
    packed = gzip.compress(body)
    path.write_bytes(packed[: len(packed) // 2])
    return path


def test_convert_refuses_an_unreadable_gzip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = pi_log(tmp_path / "in" / "a.jsonl", {"command": "ls"})
    # Incompressible lines: half of the stream still inflates its first bytes, then ends.
    body = b"".join(random.Random(3).randbytes(64).hex().encode() + b"\n" for _ in range(2000))
    broken = _truncated_gzip(tmp_path / "in" / "b.jsonl.gz", body)
    out = tmp_path / "out"
    code, stdout, err = run(capsys, "convert", "--sessions", str(broken), "--out", str(out))
    assert (code, stdout) == (2, "")
    assert f"read 1 file, 0 lines, 0 traces: no file could be read: {broken}" in err, err
    assert "Compressed file ended before the end-of-stream marker" in err
    assert not out.exists()
    # Beside a readable session it is counted, named and skipped, as measuring skips it.
    code, stdout, err = run(capsys, "convert", "--sessions", str(session.parent), "--out", str(out))
    assert code == 0, err
    assert f"{broken}: unreadable, nothing written" in stdout
    assert f"1 unreadable ({broken})" in err
    assert [path.name for path in out.iterdir()] == ["0001-a.jsonl"]


def test_convert_skips_counts_and_names_malformed_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = convert(tmp_path / "a", "--sessions", str(pi_log(tmp_path / "s.jsonl", {"p": 1})))
    native = Path(first["files"][0]["output"]).read_bytes().splitlines()
    damaged = tmp_path / "damaged.jsonl"
    # A trace line cut short (line 2), a trace line that is no object (line 4).
    cut_short = native[1][: native[1].index(b"pi-fabric.execution") + 40]
    damaged.write_bytes(
        b"\n".join([native[0], cut_short, native[1], b'"pi-fabric.execution"', b""])
    )
    out = tmp_path / "out"
    code, stdout, err = run(capsys, "convert", "--sessions", str(damaged), "--out", str(out))
    assert code == 0, err
    assert "(fabric: 1 calls in 1 traces; 2 unusable lines not copied)" in stdout
    assert f"  {damaged}:2: malformed JSON" in stdout
    assert f"  {damaged}:4: line is not a JSON object" in stdout
    written = (out / "0001-damaged.jsonl").read_bytes()
    assert written.splitlines() == native
    code, stdout, _ = run(
        capsys, "convert", "--sessions", str(damaged), "--out", str(tmp_path / "o2"), "--json"
    )
    result = json.loads(stdout)
    assert result["files"][0]["skippedLines"] == 2
    assert result["diagnostics"]["malformedLines"] == 1
    assert result["diagnostics"]["nonObjectLines"] == 1
    # Only lines of the damage itself: a file of nothing else converts nothing (exit 2).
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"\n".join(line[: len(line) // 2] for line in native) + b"\n")
    code, _, err = run(capsys, "convert", "--sessions", str(cut), "--out", str(tmp_path / "o3"))
    assert code == 2 and "read 1 file, 2 lines, 0 traces" in err
    assert not (tmp_path / "o3").exists()


def test_convert_counts_the_calls_of_native_input(tmp_path: Path) -> None:
    source = pi_log(tmp_path / "in" / "s.jsonl", {"command": "ls"}, {"command": "pwd"})
    first = convert(tmp_path / "a", "--sessions", str(source))
    again = convert(tmp_path / "b", "--sessions", first["files"][0]["output"])
    assert again["files"][0]["format"] == "fabric"
    assert (again["files"][0]["calls"], again["files"][0]["traces"]) == (2, 1)
    assert again["files"][0]["skippedLines"] == 0
