"""Certification reads what measure reads: corpus mode under ``--format`` and
``--surface-format`` (default ``auto``), the spec's scan kept for native corpora (issue 14)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.meter import report_hash
from pytest_entropy.run.certification import Certification, CertificationOptions
from tests.cli.test_convert import pi_log
from tests.cli.test_empty_corpus import PI_TOOLS, walked_corpus

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SURFACE = str(DEMO / "surface.json")


def corpus_check(options: CertificationOptions) -> tuple[bool, str, dict[str, object]]:
    outcome = Certification(options).run("corpus-mode")
    return outcome.result.passed, outcome.result.evidence, dict(outcome.sections)


def test_a_native_corpus_is_the_spec_scan(tmp_path: Path) -> None:
    """Under ``auto`` a native directory is read by §12.1's rule: every ``*.jsonl`` directly
    in it, nothing else (a ``.jsonl.gz`` beside them is not part of the spec's corpus)."""
    sessions = tmp_path / "sessions"
    shutil.copytree(DEMO / "sessions", sessions)
    first = sorted(sessions.glob("*.jsonl"))[0]
    with gzip.open(sessions / "extra.jsonl.gz", "wb") as stream:
        stream.write(first.read_bytes())
    auto = corpus_check(CertificationOptions(sessions=str(sessions), surface=SURFACE))
    spec = corpus_check(
        CertificationOptions(sessions=str(sessions), surface=SURFACE, session_format=None)
    )
    assert auto == spec
    files = len(list(sessions.glob("*.jsonl")))
    assert auto[0] and auto[1].startswith(f"files {files} traces ")
    # --format fabric names the native directory rule, which does read the .jsonl.gz.
    fabric = corpus_check(
        CertificationOptions(sessions=str(sessions), surface=SURFACE, session_format="fabric")
    )
    assert fabric[1].startswith(f"files {files + 1} traces ")


def test_a_foreign_corpus_certifies_with_its_operations(tmp_path: Path) -> None:
    root = walked_corpus(tmp_path)
    (root / "notes.json").unlink()
    passed, evidence, sections = corpus_check(CertificationOptions(sessions=str(root)))
    assert passed and evidence == "files 2 traces 2 operations 3"
    measured = json.loads(json.dumps(sections["corpus"]))
    assert measured["totals"]["operations"] == 3
    # Read natively (the old corpus mode), the same corpus has nothing: the check fails.
    native = corpus_check(CertificationOptions(sessions=str(root), session_format="fabric"))
    assert not native[0] and native[1] == "files 0 traces 0 operations 0"


def test_the_corpus_report_equals_measure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "pi"
    pi_log(root / "a.jsonl", {"command": "ls"}, {"command": "pwd"})
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(PI_TOOLS), encoding="utf-8")
    outcome = Certification(
        CertificationOptions(sessions=str(root), surface=str(tools), surface_format="pi")
    ).run("corpus-mode")
    assert outcome.result.passed
    assert main(["measure", "--sessions", str(root), "--surface", str(tools), "--json"]) == 0
    measured = json.loads(capsys.readouterr().out)
    assert dict(outcome.properties)["entropy_report_hash"] == measured["reportHash"]


def test_an_empty_corpus_fails_corpus_mode_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["certify", "--sessions", str(empty), "--output-format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    failed = [check for check in report["evaluation"]["checks"] if not check["passed"]]
    assert failed == [
        {"id": "corpus-mode", "passed": False, "evidence": "files 0 traces 0 operations 0"}
    ]


def test_certify_takes_the_format_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "pi"
    pi_log(root / "a.jsonl", {"command": "ls"})
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(PI_TOOLS), encoding="utf-8")
    argv = ["certify", "--sessions", str(root), "--surface", str(tools), "--output-format", "json"]
    assert main([*argv, "--surface-format", "pi", "--format", "pi"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [action["ref"] for action in report["corpus"]["refs"]] == ["pi.bash"]
    assert main([*argv, "--surface-format", "no-such-format"]) == 2
    assert "unknown surface format 'no-such-format'" in capsys.readouterr().err


def test_a_live_server_is_a_corpus_surface(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    options = CertificationOptions(
        sessions=str(DEMO / "sessions"), surface="tests.servers.echo_server:server"
    )
    outcome = Certification(options).run("corpus-mode")
    assert outcome.result.passed
    assert outcome.sections["surface"]["actions"] == 2


def test_strict_refuses_a_walked_corpus_with_unrecognised_files(tmp_path: Path) -> None:
    root = walked_corpus(tmp_path)
    loose = corpus_check(CertificationOptions(sessions=str(root)))
    assert loose[0]
    strict = corpus_check(CertificationOptions(sessions=str(root), strict=True))
    assert not strict[0] and "strict: 1 unrecognised file(s)" in strict[1]
    assert "notes.json" in strict[1]


def test_report_hash_of_the_demo_corpus_is_unchanged() -> None:
    """The default certification of a native corpus measures what the reference measures."""
    from pytest_entropy.core.meter import measure
    from pytest_entropy.core.status import surface_hash
    from pytest_entropy.ingest.native import scan_lines
    from pytest_entropy.ingest.surfaces import load_surface

    lines: list[str] = []
    for path in sorted((DEMO / "sessions").glob("*.jsonl"), key=lambda p: p.name):
        lines.extend(path.read_text(encoding="utf-8").split("\n"))
    surface = load_surface(SURFACE)
    expected = measure(scan_lines(lines).traces, surface, None, surface_hash(surface))
    outcome = Certification(
        CertificationOptions(sessions=str(DEMO / "sessions"), surface=SURFACE)
    ).run("corpus-mode")
    assert dict(outcome.properties)["entropy_report_hash"] == report_hash(expected)
