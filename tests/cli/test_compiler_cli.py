"""propose, compile, export, export-artifact, import and pool from the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.artifact import serialize_artifact
from pytest_entropy.core.canonical import stable_json_hash
from pytest_entropy.core.compiler import compile_entropy_surface
from tests.distributed_support import one_pass
from tests.sessions_support import write_native_sessions
from tests.vectors import cases_of

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SESSIONS = str(DEMO / "sessions")
SURFACE = str(DEMO / "surface.json")
REPAIRS = str(DEMO / "repairs.json")
RATCHET = next(
    c
    for c in cases_of("compiler", "compileEntropySurface", key="kind")
    if c["id"] == "V2-CV-10:compile"
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str, expect: int = 0) -> Any:
    code, out, err = run(capsys, *argv, "--json")
    assert code == expect, err
    return json.loads(out)


def ratchet_files(tmp_path: Path) -> tuple[str, str, str]:
    """The V2-CV-10 corpus as a native session file, its surface and its repairs."""
    # Audits for every ref but the flaky one, whose quarantine an audit would veto.
    sessions = write_native_sessions(
        tmp_path / "ratchet.jsonl", RATCHET["input"]["traces"], frozenset({"mcp.flaky.run"})
    )
    surface = tmp_path / "surface.json"
    surface.write_text(json.dumps(RATCHET["input"]["surface"]), encoding="utf-8")
    repairs = tmp_path / "repairs.json"
    repairs.write_text(json.dumps(RATCHET["input"]["repairs"]), encoding="utf-8")
    return sessions, str(surface), str(repairs)


def test_propose_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_json(
        capsys, "propose", "--sessions", SESSIONS, "--surface", SURFACE, "--repairs", REPAIRS
    )
    assert list(result) == ["reportHash", "proposals", "reviewSignals"]
    kinds = [p["kind"] for p in result["proposals"]]
    assert kinds == ["enum-tighten", "noise-quarantine"]
    assert result["reviewSignals"] == [
        p for p in result["proposals"] if p["kind"] not in ("enum-tighten", "noise-quarantine")
    ]


def test_propose_without_audit_values_falls_back_to_trace_args(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # MCP trace args are projected to {}: without audits no enum can be derived.
    result = run_json(
        capsys, "propose", "--sessions", SESSIONS, "--surface", SURFACE, "--no-audit-values"
    )
    assert "enum-tighten" not in [p["kind"] for p in result["proposals"]]


def test_compile_out_is_the_library_artifact_byte_for_byte(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sessions, surface, repairs = ratchet_files(tmp_path)
    out = tmp_path / "artifact.json"
    result = run_json(
        capsys, "compile", "--sessions", sessions, "--surface", surface, "--repairs", repairs,
        "--out", str(out),
    )  # fmt: skip
    assert result["status"] == "compiled"
    assert list(result) == ["status", "artifact", "report", "after", "proposals", "gate"]
    evidence = one_pass([Path(sessions)])
    outcome = compile_entropy_surface(
        evidence.traces,
        RATCHET["input"]["surface"],
        RATCHET["input"]["repairs"],
        evidence.value_observations,
        evidence.audit_calls,
    )
    assert outcome.artifact is not None
    assert out.read_bytes() == serialize_artifact(outcome.artifact).encode("utf-8")
    assert result["artifact"] == outcome.artifact
    # Same overlay, quarantine and gate as the reference's V2-CV-12 artifact.
    reference = json.loads(RATCHET["expected"]["artifactFileText"])
    for key in ("actions", "quarantined", "applied", "gate"):
        assert outcome.artifact[key] == reference[key]


def test_compile_state_dir_round_trip(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    state = tmp_path / "state"
    argv = [
        "compile",
        "--sessions",
        SESSIONS,
        "--surface",
        SURFACE,
        "--repairs",
        REPAIRS,
        "--state-dir",
        str(state),
        "--write",
    ]
    first = run_json(capsys, *argv)
    assert first["status"] == "compiled"
    artifact_text = (state / "compiled.json").read_text(encoding="utf-8")
    assert json.loads(artifact_text) == first["artifact"]
    pool = json.loads((state / "observation-pool.json").read_text(encoding="utf-8"))
    assert len(pool["tracked"]) == 3
    assert all(Path(t["file"]).is_absolute() for t in pool["tracked"])
    second = run_json(capsys, *argv)
    assert second["status"] == "converged"
    assert "after" not in second and "gate" not in second
    assert second["artifact"] == first["artifact"]
    assert (state / "compiled.json").read_text(encoding="utf-8") == artifact_text
    code, out, _ = run(capsys, *argv)
    assert code == 0
    assert out.startswith("entropy: converged")


def test_compile_human_notice(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(
        capsys,
        "compile",
        "--sessions",
        SESSIONS,
        "--surface",
        SURFACE,
        "--repairs",
        REPAIRS,
        "--out",
        str(tmp_path / "a.json"),
    )
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("entropy: background optimization complete (")
    assert "tightened mcp.report.render.format to {pdf, html}" in first
    assert "lower is better" in first
    assert "safety checks passed" in first
    assert "enum-tighten" not in first and "noise-quarantine" not in first


def test_compile_rejected_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    surface = json.loads(Path(SURFACE).read_text(encoding="utf-8"))
    # The quarantine candidate keeps a success: replay vetoes the whole compile.
    sessions = tmp_path / "s.jsonl"
    text = "".join(p.read_text(encoding="utf-8") for p in sorted(Path(SESSIONS).glob("*.jsonl")))
    record = json.loads(text.splitlines()[-1])
    record["message"]["details"]["trace"]["operations"] = [
        {"type": "call", "sequence": 0, "ref": "mcp.flaky.sync", "args": {}, "outcome": "succeeded"}
    ]
    record["message"]["details"]["audits"] = []
    sessions.write_text(text + json.dumps(record) + "\n", encoding="utf-8")
    code, out, _ = run(capsys, "compile", "--sessions", str(sessions), "--surface", SURFACE)
    assert code == 1
    assert "compile rejected by the gate" in out
    assert "mcp.flaky.sync: absent from the candidate surface" in out
    result = run_json(
        capsys, "compile", "--sessions", str(sessions), "--surface", SURFACE, expect=1
    )
    assert result["status"] == "rejected"
    assert "artifact" not in result
    assert surface == json.loads(Path(SURFACE).read_text(encoding="utf-8"))


def test_damaged_pool_blocks_and_is_kept(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pool = tmp_path / "pool.json"
    pool.write_text("{ nope", encoding="utf-8")
    code, _, err = run(
        capsys, "compile", "--sessions", SESSIONS, "--surface", SURFACE, "--pool", str(pool)
    )
    assert code == 2
    assert "observation pool is malformed JSON" in err
    assert pool.read_text(encoding="utf-8") == "{ nope"
    code, _, err = run(
        capsys,
        "pool",
        "--sessions",
        SESSIONS,
        "--pool-in",
        str(pool),
        "--out",
        str(tmp_path / "o.json"),
    )
    assert code == 2
    assert "observation pool is malformed JSON" in err
    assert not (tmp_path / "o.json").exists()


def test_pool_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "pool.json"
    first = run_json(capsys, "pool", "--sessions", SESSIONS, "--out", str(out))
    assert first["mergedSessions"] == 3
    again = run_json(
        capsys, "pool", "--sessions", SESSIONS, "--pool-in", str(out), "--out", str(out)
    )
    assert again["mergedSessions"] == 0
    assert again["skippedSessions"] == 3
    assert again["written"] is False


def test_export_import_round_trip(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    run_json(
        capsys,
        "compile",
        "--sessions",
        SESSIONS,
        "--surface",
        SURFACE,
        "--state-dir",
        str(theirs),
        "--write",
    )
    exported = run_json(capsys, "export-artifact", "--state-dir", str(theirs))
    assert exported["tightened"] == 1
    assert exported["quarantined"] == 1
    imported = run_json(
        capsys, "import", exported["path"], "--surface", SURFACE, "--state-dir", str(ours)
    )
    assert imported["adoptedOverlays"] == 1
    assert imported["adoptedQuarantines"] == 1
    assert imported["droppedOverlays"] == 0
    compiled = ours / "compiled.json"
    before = (compiled.read_bytes(), compiled.stat().st_mtime_ns)
    again = run_json(
        capsys, "import", exported["path"], "--surface", SURFACE, "--state-dir", str(ours)
    )
    # A repeat import adopts nothing and writes nothing (issue 26, item 17): the reference
    # would save a new evidence digest naming the source again.
    assert again["adoptedOverlays"] == 0
    assert again["adoptedQuarantines"] == 0
    assert again["written"] is False
    assert (compiled.read_bytes(), compiled.stat().st_mtime_ns) == before
    assert again["artifact"] == json.loads(before[0])
    code, out, _ = run(
        capsys, "import", exported["path"], "--surface", SURFACE, "--state-dir", str(ours)
    )
    assert code == 0
    assert f"adopted nothing: {compiled.resolve()} left as it was" in out
    assert (compiled.read_bytes(), compiled.stat().st_mtime_ns) == before
    assert again["artifact"]["actions"] == imported["artifact"]["actions"]
    assert again["artifact"]["quarantined"] == imported["artifact"]["quarantined"]
    surface = run_json(capsys, "export", "--surface", SURFACE, "--state-dir", str(ours))
    snapshot = json.loads(Path(surface["path"]).read_text(encoding="utf-8"))
    assert [a["ref"] for a in snapshot["actions"]] == sorted(a["ref"] for a in snapshot["actions"])
    assert surface["digest"] == stable_json_hash(snapshot)


def test_import_against_a_changed_surface_drops_everything(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    theirs = tmp_path / "theirs"
    run_json(
        capsys,
        "compile",
        "--sessions",
        SESSIONS,
        "--surface",
        SURFACE,
        "--state-dir",
        str(theirs),
        "--write",
    )
    changed = json.loads(Path(SURFACE).read_text(encoding="utf-8"))
    for action in changed["actions"]:
        action["inputSchema"]["description"] = "v2"
    changed_path = tmp_path / "changed.json"
    changed_path.write_text(json.dumps(changed), encoding="utf-8")
    result = run_json(
        capsys,
        "import",
        str(theirs / "compiled.json"),
        "--surface",
        str(changed_path),
        "--state-dir",
        str(tmp_path / "ours"),
    )
    assert (result["droppedOverlays"], result["droppedQuarantines"]) == (1, 1)
    assert (result["tightened"], result["quarantined"]) == (0, 0)
    # nothing adopted: no artifact is created either
    assert result["written"] is False
    assert not (tmp_path / "ours" / "compiled.json").exists()


@pytest.mark.parametrize("content", ['{"version": 2}', "[]", "{ nope"])
def test_invalid_import_is_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    code, _, err = run(
        capsys, "import", str(bad), "--surface", SURFACE, "--state-dir", str(tmp_path / "s")
    )
    assert code == 2
    assert str(bad) in err
    assert not (tmp_path / "s" / "compiled.json").exists()


def test_export_artifact_without_one(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "export-artifact", "--state-dir", str(tmp_path))
    assert code == 1
    assert "No compiled surface to export" in err


def test_patterns_the_linear_engine_cannot_run_are_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    surface = json.loads(Path(SURFACE).read_text(encoding="utf-8"))
    for action in surface["actions"]:
        if action["ref"] == "mcp.report.render":
            action["inputSchema"]["properties"]["title"]["pattern"] = "^(?!draft).*$"
    patterned = tmp_path / "surface.json"
    patterned.write_text(json.dumps(surface), encoding="utf-8")
    result = run_json(capsys, "compile", "--sessions", SESSIONS, "--surface", str(patterned))
    assert result["status"] == "compiled"  # an unenforceable pattern never fails the gate
    assert result["unsupportedPatterns"] == ["^(?!draft).*$"]
    code, out, _ = run(capsys, "compile", "--sessions", SESSIONS, "--surface", str(patterned))
    assert code == 0
    assert "were not enforced: '^(?!draft).*$'" in out
    plain = run_json(capsys, "compile", "--sessions", SESSIONS, "--surface", SURFACE)
    assert "unsupportedPatterns" not in plain


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (b"{ nope", "malformed JSON"),
        (b"", "malformed JSON"),
        (b'{"version": 1, "entries": "x"}', "invalid"),
    ],
)
@pytest.mark.parametrize("with_pool_in", [False, True])
def test_pool_never_overwrites_a_damaged_out(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    damage: bytes,
    problem: str,
    with_pool_in: bool,
) -> None:
    # Without --pool-in (or with another file as --pool-in) --out was replaced whatever it
    # held; a damaged state file is reported and left byte for byte as it was.
    out = tmp_path / "pool.json"
    out.write_bytes(damage)
    pool_in = []
    if with_pool_in:
        pool_in = ["--pool-in", str(tmp_path / "in.json")]
        assert main(["pool", "--sessions", SESSIONS, "--out", pool_in[1]]) == 0
        capsys.readouterr()
    code, stdout, err = run(capsys, "pool", "--sessions", SESSIONS, *pool_in, "--out", str(out))
    assert (code, stdout) == (2, "")
    assert f"{out}: observation pool is {problem}" in err
    assert out.read_bytes() == damage
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        ["pool.json", *(["in.json"] if with_pool_in else [])]
    )


def test_pool_replaces_a_valid_out_without_pool_in(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # --out is where the merge of --pool-in (default: an empty pool) goes: a valid pool
    # there is replaced, not merged into (that is --pool-in FILE --out FILE).
    first = tmp_path / "first"
    first.mkdir()
    (first / "a.jsonl").write_bytes(
        (Path(SESSIONS) / "2026-01-05-notes-release.jsonl").read_bytes()
    )
    out = tmp_path / "pool.json"
    assert run_json(capsys, "pool", "--sessions", str(first), "--out", str(out))["written"]
    again = run_json(capsys, "pool", "--sessions", SESSIONS, "--out", str(out))
    assert (again["mergedSessions"], again["skippedSessions"], again["written"]) == (3, 0, True)
    tracked = json.loads(out.read_text(encoding="utf-8"))["tracked"]
    assert [Path(row["file"]).parent for row in tracked] == [Path(SESSIONS).resolve()] * 3
