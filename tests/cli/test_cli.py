"""The command line in-process: outputs, JSON shapes, exit codes and error messages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.canonical import stable_json_hash
from pytest_entropy.core.meter import measure, report_hash

# Every test here runs on the Rust core and on the plain path (issue 28).
pytestmark = pytest.mark.usefixtures("scan_path")

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SESSIONS = str(DEMO / "sessions")
SURFACE = str(DEMO / "surface.json")
REPAIRS = str(DEMO / "repairs.json")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0
    assert out.startswith("pytest-entropy ")
    assert "metric v2" in out and "ICU " in out


def test_measure_json_shape_and_hash(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_json(capsys, "measure", "--sessions", SESSIONS, "--surface", SURFACE)
    assert list(result) == ["reportHash", "report", "diagnostics"]
    assert result["reportHash"] == stable_json_hash(result["report"])
    surface = json.loads(Path(SURFACE).read_text(encoding="utf-8"))
    assert result["report"]["catalogDigest"] == stable_json_hash(surface)
    assert result["diagnostics"]["files"] == 3
    assert result["diagnostics"]["traces"] == result["report"]["totals"]["traces"]


def test_measure_numbers_print_as_javascript_does(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "measure", "--sessions", SESSIONS, "--json")
    assert code == 0
    assert ".0," not in out and ".0\n" not in out
    assert '"catalogDigest": ""' in out


def test_catalog_digest_override(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_json(capsys, "measure", "--sessions", SESSIONS, "--catalog-digest", "abc")
    assert result["report"]["catalogDigest"] == "abc"


def test_files_and_directories_in_the_order_given(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    files = sorted(Path(SESSIONS).glob("*.jsonl"))
    forward = run_json(capsys, "measure", "--sessions", *map(str, files))
    backward = run_json(capsys, "measure", "--sessions", *map(str, reversed(files)))
    directory = run_json(capsys, "measure", "--sessions", SESSIONS)
    assert forward["reportHash"] == directory["reportHash"]
    # Order matters: first-seen order feeds the entropy sums.
    assert forward["report"]["totals"] == backward["report"]["totals"]


def test_jobs_give_the_same_report(capsys: pytest.CaptureFixture[str]) -> None:
    one = run_json(capsys, "measure", "--sessions", SESSIONS, "--surface", SURFACE)
    two = run_json(capsys, "measure", "--sessions", SESSIONS, "--surface", SURFACE, "--jobs", "2")
    assert one["reportHash"] == two["reportHash"]
    assert one["diagnostics"] == two["diagnostics"]


def test_human_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "measure", "--sessions", SESSIONS, "--surface", SURFACE, "--repairs", REPAIRS
    )
    assert code == 0
    assert out.startswith("entropy score ")
    assert "(lower is better) = static " in out
    assert "top refs" in out and "models:" in out and "report hash " in out


def test_malformed_lines_are_counted_not_fatal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = next(iter(sorted(Path(SESSIONS).glob("*.jsonl"))))
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(source.read_bytes() + b'{"pi-fabric.execution" oops\n[1,2]\n')
    result = run_json(capsys, "measure", "--sessions", str(broken))
    assert result["diagnostics"]["malformedLines"] == 1
    assert result["diagnostics"]["samples"][0].startswith(f"{broken}:")
    clean = run_json(capsys, "measure", "--sessions", str(source))
    assert clean["reportHash"] == result["reportHash"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["measure", "--sessions", "/nonexistent/x.jsonl"], "no such file or directory"),
        (["measure", "--sessions", SESSIONS, "--surface", "/nonexistent.json"], "not found"),
        (["measure", "--sessions", SESSIONS, "--surface", REPAIRS], "surface snapshot must be"),
        (["measure", "--sessions", SESSIONS, "--repairs", SURFACE], "repair table must be"),
        (["measure", "--sessions", SESSIONS, "--jobs", "0"], "must be at least 1"),
        (["measure"], "required"),
        (["bogus"], "invalid choice"),
        (["status", "--sessions", "/nonexistent"], "sessions directory not found"),
    ],
)
def test_usage_and_input_errors_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert message in err
    assert out == ""


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys)
    assert code == 2
    assert "usage:" in err


def test_freedom(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_json(capsys, "freedom", "--surface", SURFACE)
    assert [row["freedom"] for row in result["actions"]] == sorted(
        (row["freedom"] for row in result["actions"]), reverse=True
    )
    code, out, _ = run(capsys, "freedom", "--surface", SURFACE)
    assert code == 0 and out.startswith("surface freedom: total ")


def test_status_over_a_directory(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_json(capsys, "status", "--sessions", SESSIONS, "--surface", SURFACE)
    assert result["verdict"] in ("ratchet holding", "ratchet slipping")
    assert result["lines"][0].startswith("entropy: metric v2 · surface ")
    assert len(result["corpus"]["sessions"]) == 3
    code, out, _ = run(capsys, "status", "--sessions", SESSIONS, "--surface", SURFACE)
    assert code == 0 and "session entropy (observed): 3 sessions" in out


def test_status_over_an_agent_dir(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    project = tmp_path / "agent" / "sessions" / "--work-app--"
    project.mkdir(parents=True)
    for path in Path(SESSIONS).glob("*.jsonl"):
        shutil.copy(path, project / path.name)
    entropy_dir = tmp_path / "agent" / "fabric" / "entropy"
    entropy_dir.mkdir(parents=True)
    shutil.copy(SURFACE, entropy_dir / "surface.json")
    agent = str(tmp_path / "agent")
    machine = run_json(capsys, "status", "--agent-dir", agent, "--cwd", "/work/app")
    project_only = run_json(
        capsys, "status", "--agent-dir", agent, "--cwd", "/work/app", "--project"
    )
    # No session of this project: an empty corpus, which status accepts only when told.
    elsewhere = run_json(
        capsys, "status", "--agent-dir", agent, "--cwd", "/other", "--project", "--allow-empty"
    )
    assert machine["surface"]["actions"] == 7  # the exported snapshot is the default surface
    assert len(machine["corpus"]["sessions"]) == 3
    assert machine["corpus"] == project_only["corpus"]
    assert elsewhere["corpus"]["sessions"] == []
    assert "latest 0 project sessions" in elsewhere["lines"][-1]


def test_library_and_cli_agree(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_entropy.ingest.native import ScanRecords
    from pytest_entropy.sources.locate import expand_session_paths
    from pytest_entropy.sources.scan import read_file_evidence

    traces = []
    for path in expand_session_paths([SESSIONS]):
        evidence = read_file_evidence(path)
        assert isinstance(evidence, ScanRecords)
        traces.extend(evidence.traces)
    result = run_json(capsys, "measure", "--sessions", SESSIONS)
    assert report_hash(measure(traces)) == result["reportHash"]
