"""Nothing passes on nothing: every command that reads a corpus fails (exit 2) when it yields
no operations, naming what was read, unless ``--allow-empty``; ``--format auto`` walks a
directory without ``*.jsonl`` for the files a session reader claims (issue 14)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_entropy.cli.app import main
from tests.ci_tables_support import corpus_commands
from tests.cli.test_convert import pi_log

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SURFACE = str(DEMO / "surface.json")
PI_TOOLS = [
    {
        "name": "bash",
        "label": "bash",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def command_lines(sessions: Path, tmp_path: Path) -> dict[str, list[str]]:
    """Every command that reads a corpus, over ``sessions``."""
    artifact = tmp_path / "artifact.json"
    if not artifact.exists():
        assert main(["compile", "--sessions", str(DEMO / "sessions"), "--surface", SURFACE,
                     "--out", str(artifact)]) == 0  # fmt: skip
    return corpus_commands(sessions, tmp_path, artifact)


def silent_zero_dirs(tmp_path: Path) -> dict[str, Path]:
    """The issue's silent-zero inputs: an empty directory, binary files (named as sessions
    and not), and a directory of a format no reader recognises."""
    empty = tmp_path / "empty"
    empty.mkdir()
    binary = tmp_path / "binary"
    binary.mkdir()
    (binary / "a.jsonl").write_bytes(bytes(range(256)) * 8)
    (binary / "b.bin").write_bytes(bytes(range(256)))
    foreign = tmp_path / "unknown-format"
    (foreign / "deep").mkdir(parents=True)
    (foreign / "deep" / "runs.json").write_text('{"run": 1, "steps": []}', encoding="utf-8")
    return {"empty": empty, "binary": binary, "unknown-format": foreign}


@pytest.mark.parametrize("case", ["empty", "binary", "unknown-format"])
def test_every_command_fails_on_an_empty_corpus(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = silent_zero_dirs(tmp_path)[case]
    for name, argv in command_lines(sessions, tmp_path).items():
        capsys.readouterr()
        code, out, err = run(capsys, *argv)
        assert code == 2, (name, out, err)
        assert "0 traces" in err and "--allow-empty" in err, (name, err)
        if case == "unknown-format" and name != "watch --once":
            assert "1 unrecognised: " in err and "runs.json" in err, (name, err)
        if case == "binary" and name != "watch --once":
            assert "no file matched a session format; try --format" in err, (name, err)
        assert not (tmp_path / "pool.json").exists()  # nothing written on nothing
        code, out, err = run(capsys, *argv, "--allow-empty")
        assert code == 0, (name, out, err)
        (tmp_path / "pool.json").unlink(missing_ok=True)


def test_allow_empty_from_the_project_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = silent_zero_dirs(tmp_path)["empty"]
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "measure", "--sessions", str(empty))
    assert code == 2, err
    (tmp_path / "pyproject.toml").write_text("[tool.entropy]\nallow-empty = true\n")
    code, out, err = run(capsys, "measure", "--sessions", str(empty), "--json")
    assert code == 0, err
    assert json.loads(out)["report"]["totals"]["operations"] == 0


def test_the_message_names_what_was_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for number in range(3):
        (sessions / f"s{number}.jsonl").write_text('{"role": "user"}\n' * 2, encoding="utf-8")
    code, _, err = run(capsys, "measure", "--sessions", str(sessions))
    assert code == 2
    assert "read 3 files, 6 lines, 0 traces: no file matched a session format" in err
    code, _, err = run(capsys, "measure", "--sessions", str(sessions), "--format", "pi")
    assert code == 2
    assert "nothing in them is a --format pi session; try --format auto" in err


def walked_corpus(tmp_path: Path) -> Path:
    """A directory without ``*.jsonl`` at its top: Pi sessions two levels down, their tool
    list beside them, and a file nothing reads."""
    root = tmp_path / "corpus"
    pi_log(root / "runs" / "day1" / "a.jsonl", {"command": "ls"}, {"command": "pwd"})
    pi_log(root / "runs" / "day2" / "b.jsonl", {"command": "cat x"})
    (root / "tools").mkdir()
    (root / "tools" / "pi-tools.json").write_text(json.dumps(PI_TOOLS), encoding="utf-8")
    (root / "notes.json").write_text('{"hello": "world"}', encoding="utf-8")
    (root / "README.md").write_text("not a session\n", encoding="utf-8")
    return root


def test_auto_walks_a_directory_without_jsonl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = walked_corpus(tmp_path)
    code, out, err = run(capsys, "measure", "--sessions", str(root), "--json")
    assert code == 0, err
    document = json.loads(out)
    assert document["report"]["totals"]["operations"] == 3
    diagnostics = document["diagnostics"]
    assert diagnostics["files"] == 2
    assert diagnostics["surfaceFiles"] == 1  # the tool list: a surface, not unrecognised
    assert diagnostics["unrecognizedFiles"] == 1
    assert diagnostics["unrecognizedNames"] == [str(root / "notes.json")]
    # The human output warns about it, naming it (stderr, so --json stays clean).
    assert "warning: session files passed over: 1 unrecognised" in err
    assert "notes.json" in err
    # The same files one by one give the same report.
    code, out, err = run(
        capsys,
        "measure",
        "--sessions",
        str(root / "runs" / "day1" / "a.jsonl"),
        str(root / "runs" / "day2" / "b.jsonl"),
        "--json",
    )
    assert json.loads(out)["reportHash"] == document["reportHash"]


def test_strict_makes_an_unrecognised_file_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = walked_corpus(tmp_path)
    code, _, err = run(capsys, "measure", "--sessions", str(root), "--strict")
    assert code == 2
    assert "--strict: 0 unreadable and 1 unrecognised session file(s)" in err
    assert "notes.json" in err
    (root / "notes.json").unlink()
    code, _, err = run(capsys, "measure", "--sessions", str(root), "--strict")
    assert code == 0, err


def test_the_named_surface_is_skipped_as_a_surface(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = walked_corpus(tmp_path)
    (root / "notes.json").unlink()
    surface = root / "declared.json"  # a snapshot: detected as a surface anyway
    shutil.copy(SURFACE, surface)
    odd = root / "odd-surface.json"  # named by --surface: skipped whatever it looks like
    odd.write_text(json.dumps({"tools": PI_TOOLS}), encoding="utf-8")
    code, out, err = run(
        capsys, "measure", "--sessions", str(root), "--surface", str(odd), "--json"
    )
    assert code == 0, err
    diagnostics = json.loads(out)["diagnostics"]
    assert (diagnostics["surfaceFiles"], diagnostics["unrecognizedFiles"]) == (3, 0)


def test_a_jsonl_directory_is_read_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A directory holding ``*.jsonl`` reads those (by name) and never walks: a subdirectory
    of other sessions is not read."""
    sessions = tmp_path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    pi_log(sessions / "nested" / "deep" / "x.jsonl", {"command": "ls"})
    (sessions / "notes.json").write_text('{"hello": 1}', encoding="utf-8")
    code, out, _ = run(capsys, "measure", "--sessions", str(sessions), "--json")
    code_demo, demo, _ = run(capsys, "measure", "--sessions", str(DEMO / "sessions"), "--json")
    assert code == code_demo == 0
    assert json.loads(out)["reportHash"] == json.loads(demo)["reportHash"]
    assert json.loads(out)["diagnostics"]["unrecognizedFiles"] == 0


def test_a_running_watch_waits_and_says_so_once(tmp_path: Path) -> None:
    from pytest_entropy.ingest.base import ReadOptions
    from pytest_entropy.ingest.surfaces import load_surface
    from pytest_entropy.run.watch import WAITING, CompileLoop
    from pytest_entropy.sources.locate import directory_session_files

    sessions = tmp_path / "sessions"
    sessions.mkdir()
    surface = load_surface(SURFACE)
    loop = CompileLoop(
        window=lambda: directory_session_files(sessions),
        surface=surface,
        state_dir=tmp_path / "state",
        options=ReadOptions(surface=surface),
    )
    first, second = loop.tick(), loop.tick()
    assert first.empty and [notice.text for notice in first.notices] == [WAITING]
    assert second.empty and second.notices == []
    shutil.copy(DEMO / "sessions" / sorted(p.name for p in (DEMO / "sessions").iterdir())[0],
                sessions)  # fmt: skip
    assert not loop.tick().empty


@pytest.mark.parametrize("line", ["[" * 1000, '{"a":' * 5000 + "1" + "}" * 5000])
def test_a_line_nested_past_the_decoders_depth_is_a_usage_error_not_a_crash(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, line: str
) -> None:
    # The check that tells a file of headers from random bytes decoded each line with the
    # standard library, whose recursion limit raised through the command (exit 3).
    deep = tmp_path / "deep.jsonl"
    deep.write_text(line + "\n", encoding="utf-8")
    code, _, err = run(capsys, "measure", "--sessions", str(deep))
    assert code == 2
    assert "no file matched a session format" in err and "internal error" not in err


def test_a_lone_unrecognised_file_says_what_its_lines_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A file of malformed lines was blamed on its format alone, with nothing saying that
    # none of it was even JSON.
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type": "trace",\n{bad\nnot json\n', encoding="utf-8")
    code, _, err = run(capsys, "measure", "--sessions", str(broken))
    assert code == 2
    assert f"1 unrecognised: {broken}: none of its 3 lines is JSON)" in err
    scalars = tmp_path / "scalars.jsonl"
    scalars.write_text('[1]\n"x"\n', encoding="utf-8")
    code, _, err = run(capsys, "measure", "--sessions", str(scalars))
    assert code == 2
    assert f"{scalars}: none of its 2 lines is a JSON object)" in err


def test_a_corpus_of_only_unreadable_files_gives_the_first_ones_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import gzip

    whole = gzip.compress(b'{"role": "user"}\n' * 400)
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    (sessions / "cut.jsonl.gz").write_bytes(whole[: len(whole) // 2])
    code, _, err = run(capsys, "measure", "--sessions", str(sessions))
    assert code == 2
    assert "no file could be read: " in err
    assert "(the first: Compressed file ended before the end-of-stream marker" in err


def test_a_corpus_of_only_damaged_trace_lines_names_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Blamed on the format ("no file matched a session format; try --format") though every
    # line was a trace line of the native format, cut short.
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    cut = '{"details": {"trace": {"kind": "pi-fabric.execution", "version": 1, "oper\n'
    (sessions / "a.jsonl").write_text(cut * 2, encoding="utf-8")
    for extra in ([], ["--format", "fabric"]):
        code, _, err = run(capsys, "measure", "--sessions", str(sessions), *extra)
        assert code == 2
        assert "no usable trace: 2 lines that looked like session records could not be used" in err
        assert f"(the first: {sessions / 'a.jsonl'}:1: malformed JSON" in err
        assert "try --format" not in err
