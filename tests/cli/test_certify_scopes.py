"""Issue 29: ``certify`` checks the user's corpus in a scope of its own."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from pytest_entropy.cli.app import main
from pytest_entropy.report.json_schemas import schema_for

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SURFACE = str(DEMO / "surface.json")


def _certify(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["certify", *args, "--output-format", "json"])
    return code, json.loads(capsys.readouterr().out)


def _corpus_checks(report: dict) -> dict[str, dict]:
    return {check["id"]: check for check in report["corpusChecks"]["checks"]}


def _damaged_copy(tmp_path: Path) -> tuple[Path, Path]:
    sessions = tmp_path / "bad"
    shutil.copytree(DEMO / "sessions", sessions)
    truncated = sorted(sessions.iterdir())[0]
    data = truncated.read_bytes()
    truncated.write_bytes(data[: len(data) * 2 // 3])
    (sessions / "noise.jsonl").write_bytes(bytes(range(256)) * 16)
    return sessions, truncated


def test_a_damaged_corpus_fails_corpus_health_naming_both_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sessions, truncated = _damaged_copy(tmp_path)
    code, report = _certify(capsys, "--sessions", str(sessions), "--surface", SURFACE)
    assert code == 1
    health = _corpus_checks(report)["corpus-health"]
    assert health["passed"] is False and health["scope"] == "corpus"
    assert "noise.jsonl" in health["reason"] and truncated.name in health["reason"]
    # The spec's own verdict on the meter is untouched by the user's data.
    assert report["evaluation"]["passed"] is True
    # The garbage file is counted as unrecognised, not silently as a malformed line.
    code = main(["measure", "--sessions", str(sessions), "--json"])
    diagnostics = json.loads(capsys.readouterr().out)["diagnostics"]
    assert diagnostics["unrecognizedFiles"] == 1
    assert diagnostics["unrecognizedNames"] == [str(sessions / "noise.jsonl")]
    # --lenient: reported, not gating.
    code, report = _certify(capsys, "--sessions", str(sessions), "--surface", SURFACE, "--lenient")
    assert _corpus_checks(report)["corpus-health"]["gating"] is False
    assert "corpus-health" not in report["corpusChecks"]["failed"]


def test_a_clean_copy_passes_corpus_health(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sessions = tmp_path / "clean"
    shutil.copytree(DEMO / "sessions", sessions)
    code, report = _certify(capsys, "--sessions", str(sessions), "--surface", SURFACE)
    assert code == 0
    checks = _corpus_checks(report)
    assert list(checks) == [
        "corpus-health", "corpus-deterministic", "ratchet-holding", "compile-converges",
        "held-out-trial",
    ]  # fmt: skip
    assert all(check["passed"] for check in checks.values())
    assert "reason" not in checks["corpus-health"]


def test_the_scoped_report_follows_its_schema(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sessions, _ = _damaged_copy(tmp_path)
    validator = Draft202012Validator(schema_for("certify"))
    for args in (
        ["--sessions", str(sessions), "--surface", SURFACE],
        ["--sessions", str(DEMO / "sessions")],
    ):
        _code, report = _certify(capsys, *args)
        validator.validate(report)
        assert {check["scope"] for check in report["checks"]} == {"implementation", "corpus"}
        for check in report["checks"]:
            assert ("reason" in check) == (not check["passed"])
    # A failed check without a reason is refused by the schema.
    broken = json.loads(json.dumps(report))
    broken["checks"][0] = {"id": "x", "scope": "corpus", "passed": False, "evidence": "e"}
    assert not validator.is_valid(broken)


def test_without_sessions_there_is_no_corpus_section(capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _certify(capsys)
    assert code == 0
    assert "corpusChecks" not in report and "checks" not in report


def test_summary_has_one_more_line_for_the_users_checks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sessions, _ = _damaged_copy(tmp_path)
    assert main(["certify", "--sessions", str(sessions)]) == 1
    lines = capsys.readouterr().out.partition("\n\n")[0].splitlines()
    assert lines[-2] == "  PASS"  # the spec's verdict, as the spec prints it
    assert lines[-1].startswith("  your corpus: 2 of 3 checks passed (corpus-health: ")


def test_markdown_and_html_group_the_users_checks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytest.importorskip("pygal")
    sessions, _ = _damaged_copy(tmp_path)
    code = main(["certify", "--sessions", str(sessions), "--output-format", "markdown"])
    markdown = capsys.readouterr().out
    assert code == 1
    spec, _, own = markdown.partition("### Your corpus (scope `corpus`): FAIL")
    assert "| `corpus-health` |" not in spec and "| `corpus-health` | ✗ **fail** |" in own
    html_path = tmp_path / "r.html"
    code = main(["certify", "--sessions", str(sessions), "--html", str(html_path)])
    capsys.readouterr()
    html = html_path.read_text(encoding="utf-8")
    assert 'id="corpus-checks"' in html and "Your corpus (scope corpus)" in html


def test_surface_contained_compares_with_the_ratchet_baseline(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    baseline = tmp_path / "entropy-baseline.json"
    # --update-baseline: under CI a missing baseline is never created silently.
    created = ["--baseline", str(baseline), "--update-baseline"]
    assert main(["freedom", "--surface", SURFACE, *created]) == 0
    capsys.readouterr()
    sessions = str(DEMO / "sessions")
    argv = ["--sessions", sessions, "--baseline", str(baseline)]
    code, report = _certify(capsys, *argv, "--surface", SURFACE)
    assert code == 0
    assert _corpus_checks(report)["surface-contained"]["passed"] is True
    # Loosen one tool: an enum dropped from a parameter.
    surface = json.loads(Path(SURFACE).read_text(encoding="utf-8"))
    loosened = False
    for action in surface["actions"]:
        for schema in (action["inputSchema"].get("properties") or {}).values():
            if isinstance(schema, dict) and "enum" in schema and not loosened:
                schema.pop("enum")
                loosened = True
    assert loosened
    looser = tmp_path / "looser.json"
    looser.write_text(json.dumps(surface), encoding="utf-8")
    code, report = _certify(capsys, *argv, "--surface", str(looser))
    assert code == 1
    contained = _corpus_checks(report)["surface-contained"]
    assert contained["passed"] is False
    assert contained["reason"].startswith("the surface accepts calls the baseline refused: ")
    # No baseline file: the check is not planned (nothing to compare with, nothing passes).
    code, report = _certify(
        capsys, "--sessions", sessions, "--surface", SURFACE, "--baseline", str(tmp_path / "no")
    )
    assert "surface-contained" not in _corpus_checks(report)


def test_a_baseline_of_corpus_entries_only_plans_no_surface_check(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    baseline = tmp_path / "entropy-baseline.json"
    sessions = str(DEMO / "sessions")
    created = ["--baseline", str(baseline), "--update-baseline"]
    assert main(["measure", "--sessions", sessions, *created]) == 0
    capsys.readouterr()
    code, report = _certify(
        capsys, "--sessions", sessions, "--surface", SURFACE, "--baseline", str(baseline)
    )
    assert code == 0
    assert "surface-contained" not in _corpus_checks(report)
    baseline.write_text("{not json", encoding="utf-8")
    code, report = _certify(
        capsys, "--sessions", sessions, "--surface", SURFACE, "--baseline", str(baseline)
    )
    assert code == 1
    assert "unreadable" in _corpus_checks(report)["surface-contained"]["reason"]


def test_hostile_file_names_in_reasons_are_escaped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sessions = tmp_path / "s"
    shutil.copytree(DEMO / "sessions", sessions)
    (sessions / "x\x1b]52;c;QUFB\x07<b>|`.jsonl").write_bytes(bytes(range(256)) * 4)
    assert main(["certify", "--sessions", str(sessions)]) == 1
    text = capsys.readouterr().out.partition("\n\n")[0]
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b]52;c;QUFB\\x07<b>" in text.splitlines()[-1]
    assert main(["certify", "--sessions", str(sessions), "--output-format", "markdown"]) == 1
    markdown = capsys.readouterr().out
    own = markdown.partition("### Your corpus")[2]
    assert "<b>" not in own and "&lt;b&gt;" in own and "\x1b" not in own


def test_nothing_passes_on_nothing_and_odd_entries_are_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import os

    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.bin").write_bytes(b"\x00\x01")
    code, report = _certify(capsys, "--sessions", str(empty))
    assert code == 1
    checks = _corpus_checks(report)
    assert not any(check["passed"] for check in checks.values())
    assert "passed over: notes.bin" in checks["corpus-health"]["reason"]
    odd = tmp_path / "odd"
    shutil.copytree(DEMO / "sessions", odd)
    (odd / "d.jsonl").mkdir()
    (odd / "l.jsonl").symlink_to(tmp_path / "nowhere")
    os.mkfifo(odd / "f.jsonl")  # never opened: a FIFO without a writer would hang a read
    code, report = _certify(capsys, "--sessions", str(odd))
    assert code == 1
    reason = _corpus_checks(report)["corpus-health"]["reason"]
    for name, why in (("d", "a directory"), ("f", "not a regular file"), ("l", "a broken link")):
        assert f"{odd / name}.jsonl ({why})" in reason


@pytest.mark.parametrize(
    ("actions", "expected"),
    [
        ([], "declares no tool"),
        (
            [{"ref": "other.tool", "inputSchema": {"type": "object"}}],
            "none of the 7 tools the sessions call is declared in",
        ),
    ],
)
def test_a_surface_the_sessions_never_called_fails_corpus_health(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, actions: list, expected: str
) -> None:
    # Nothing passes on nothing: an empty surface, or one that declares none of the called
    # tools, scores every call against no schema and must not certify.
    surface = tmp_path / "surface.json"
    surface.write_text(json.dumps({"version": 1, "actions": actions}), encoding="utf-8")
    for lenient in ((), ("--lenient",)):
        code, report = _certify(
            capsys, "--sessions", str(DEMO / "sessions"), "--surface", str(surface), *lenient
        )
        assert code == 1
        health = _corpus_checks(report)["corpus-health"]
        assert health["passed"] is False and health["gating"] is True
        assert expected in health["reason"] and str(surface) in health["reason"]
        assert "corpus-health" in report["corpusChecks"]["failed"]


def test_a_surface_declaring_some_of_the_called_tools_passes_corpus_health(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    value = json.loads(Path(SURFACE).read_text(encoding="utf-8"))
    value["actions"] = value["actions"][:1]
    surface = tmp_path / "partial.json"
    surface.write_text(json.dumps(value), encoding="utf-8")
    _, report = _certify(capsys, "--sessions", str(DEMO / "sessions"), "--surface", str(surface))
    assert _corpus_checks(report)["corpus-health"]["passed"] is True


@pytest.mark.parametrize("text", ["[]", '{"tools": []}'])
def test_an_empty_tool_list_is_named_as_such(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str
) -> None:
    surface = tmp_path / "tools.json"
    surface.write_text(text, encoding="utf-8")
    code = main(["measure", "--sessions", str(DEMO / "sessions"), "--surface", str(surface)])
    assert code == 2
    error = capsys.readouterr().err
    assert "surface holds no tool" in error and str(surface) in error


@pytest.mark.parametrize("surface_format", ["mcp", "openai", "tau-bench", "snapshot", "auto"])
@pytest.mark.parametrize("text", ["", " \n\t\r\n", "\ufeff\n"])
@pytest.mark.parametrize("command", ["freedom", "measure"])
def test_an_empty_surface_file_is_an_input_error(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    surface_format: str,
    text: str,
    command: str,
) -> None:
    # Read as JSON Lines, an empty file was a list of no tools: a surface of no actions
    # under every foreign format.
    surface = tmp_path / "empty.json"
    surface.write_text(text, encoding="utf-8")
    sessions = ["--sessions", str(DEMO / "sessions")] if command == "measure" else []
    argv = [command, *sessions, "--surface", str(surface), "--surface-format", surface_format]
    code = main(argv)
    captured = capsys.readouterr()
    assert (code, captured.out) == (2, "")
    assert f"{surface}: surface file is empty" in captured.err


def test_an_empty_file_in_a_surface_directory_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tool = {"name": "echo", "inputSchema": {"type": "object"}}
    (tmp_path / "a.json").write_text(json.dumps([tool]), encoding="utf-8")
    assert main(["freedom", "--surface", str(tmp_path), "--surface-format", "mcp"]) == 0
    capsys.readouterr()
    (tmp_path / "b.json").write_bytes(b"")
    assert main(["freedom", "--surface", str(tmp_path), "--surface-format", "mcp"]) == 2
    assert f"{tmp_path / 'b.json'}: surface file is empty" in capsys.readouterr().err


def test_the_cli_help_names_the_cli_spellings(capsys: pytest.CaptureFixture[str]) -> None:
    # The help text is shared with the pytest plugin, whose flags are --entropy-*.
    assert main(["certify", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--entropy-format" not in text and "--entropy-surface" not in text
    assert "(other formats: --format)" in text and "the format of --surface:" in text


def test_one_cause_failing_every_corpus_check_is_said_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A surface that cannot be read failed all five checks, and the line said why five times.
    surface = tmp_path / "cut.json"
    surface.write_text('{"tools": [', encoding="utf-8")
    code = main(["certify", "--sessions", str(DEMO / "sessions"), "--surface", str(surface)])
    out = capsys.readouterr().out
    assert code == 1
    (line,) = [line for line in out.splitlines() if "your corpus:" in line]
    assert "checks passed (all 5 failed: cannot read: " in line
    assert line.count("surface file is not valid JSON") == 1
