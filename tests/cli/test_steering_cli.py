"""compile --partial/--only/--exclude/--min-gain/--explain, propose/freedom/trial --explain,
--redact-values and apply, from the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonpatch
import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.artifact import apply_compiled_surface, parse_compiled_surface_artifact
from pytest_entropy.core.fingerprint import surface_freedom_report
from pytest_entropy.core.redact import is_redacted
from pytest_entropy.ingest.surfaces import load_surface
from tests.sessions_support import write_native_sessions
from tests.vectors import cases_of

RATCHET = next(
    c
    for c in cases_of("compiler", "compileEntropySurface", key="kind")
    if c["id"] == "V2-CV-10:compile"
)
FLAKY = frozenset({"mcp.flaky.run"})  # its quarantine stands when it has no audit
REFERENCE_KEYS = ["status", "artifact", "report", "after", "proposals", "gate"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str, expect: int = 0) -> Any:
    code, out, err = run(capsys, *argv, "--json")
    assert code == expect, err
    return json.loads(out)


def vetoed_corpus(tmp_path: Path) -> tuple[str, str]:
    """V2-CV-10 with every call audited: the flaky tool's quarantine is vetoed by its audits,
    so the reference rejects the whole compile, the safe enum tightening with it."""
    sessions = write_native_sessions(tmp_path / "sessions.jsonl", RATCHET["input"]["traces"])
    surface = tmp_path / "surface.json"
    surface.write_text(json.dumps(RATCHET["input"]["surface"]), encoding="utf-8")
    return sessions, str(surface)


def compiled_corpus(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> tuple[Path, Path, dict[str, Any]]:
    """V2-CV-10 without the flaky tool's audits, compiled to ``artifact.json``: the
    surface file, the artifact file and the compile's JSON."""
    sessions = write_native_sessions(tmp_path / "train.jsonl", RATCHET["input"]["traces"], FLAKY)
    surface = tmp_path / "surface.json"
    surface.write_text(json.dumps(RATCHET["input"]["surface"]), encoding="utf-8")
    artifact = tmp_path / "artifact.json"
    compiled = run_json(
        capsys, "compile", "--sessions", sessions, "--surface", str(surface),
        "--out", str(artifact),
    )  # fmt: skip
    return surface, artifact, compiled


def test_partial_compiles_what_the_reference_rejects(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sessions, surface = vetoed_corpus(tmp_path)
    argv = ["compile", "--sessions", sessions, "--surface", surface]
    reference = run_json(capsys, *argv, expect=1)
    assert reference["status"] == "rejected"
    assert list(reference) == [k for k in REFERENCE_KEYS if k != "artifact"]
    out = tmp_path / "partial.json"
    partial = run_json(capsys, *argv, "--partial", "--out", str(out))
    assert partial["status"] == "compiled"
    assert list(partial) == [*REFERENCE_KEYS, "dropped"]
    assert partial["proposals"] == reference["proposals"]
    assert partial["dropped"] == [
        {
            "kind": "noise-quarantine",
            "ref": "mcp.flaky.run",
            "reason": "mcp.flaky.run: absent from the candidate surface",
        }
    ]
    written = json.loads(out.read_text(encoding="utf-8"))
    assert parse_compiled_surface_artifact(written) == written == partial["artifact"]
    assert written["quarantined"] == []
    assert [a["kind"] for a in written["applied"]] == ["enum-tighten"]
    # The human notice names only what was applied.
    code, text, _ = run(capsys, *argv, "--partial")
    assert code == 0
    assert "hid mcp.flaky.run" not in text
    assert "dropped: noise-quarantine mcp.flaky.run" in text


def test_partial_from_the_project_configuration(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions, surface = vetoed_corpus(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.entropy]\npartial = true\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    result = run_json(capsys, "compile", "--sessions", sessions, "--surface", surface)
    assert result["status"] == "compiled" and "dropped" in result


def test_selection_and_min_gain(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    sessions, surface = vetoed_corpus(tmp_path)
    argv = ["compile", "--sessions", sessions, "--surface", surface]
    excluded = run_json(capsys, *argv, "--exclude", "noise-quarantine")
    assert excluded["status"] == "compiled" and "dropped" not in excluded
    assert [(s["kind"], s["reason"]) for s in excluded["skipped"]] == [
        ("noise-quarantine", "excluded by --exclude noise-quarantine")
    ]
    only = run_json(
        capsys, *argv, "--only", "mcp.flaky.run", "--only", "mcp.report.render.format",
        expect=1,
    )  # fmt: skip
    assert only["status"] == "rejected" and only["skipped"] == []
    out = tmp_path / "nothing.json"
    skipped = run_json(capsys, *argv, "--min-gain", "1", "--out", str(out))
    assert skipped["status"] == "converged" and not out.exists()
    assert [s["kind"] for s in skipped["skipped"]] == ["enum-tighten", "noise-quarantine"]
    assert all(0 < s["gain"] < 1 for s in skipped["skipped"])
    code, _, err = run(capsys, *argv, "--min-gain", "lots")
    assert code == 2 and "--min-gain must be a number" in err


def test_explain_adds_one_key_everywhere(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sessions, surface = vetoed_corpus(tmp_path)
    propose = ["propose", "--sessions", sessions, "--surface", surface]
    plain = run_json(capsys, *propose)
    explained = run_json(capsys, *propose, "--explain")
    rows = explained.pop("explanations")
    assert explained == plain
    tighten = rows[0]
    assert tighten["kind"] == "enum-tighten" and tighten["removes"] == ["docx", "web"]
    assert tighten["gain"] > 0 and "observations" in tighten["text"]
    compiled = run_json(
        capsys, "compile", "--sessions", sessions, "--surface", surface, "--explain", expect=1
    )
    statuses = [row.get("status") for row in compiled.pop("explanations")]
    assert statuses == ["not applied: the compile rejected"] * 2
    freedom = run_json(capsys, "freedom", "--surface", surface, "--explain")
    assert list(freedom) == ["actions", "total", "mean", "explanations"]
    free = next(r for r in freedom["explanations"] if r["parameter"] == "mode")
    assert free["rule"] == "type string" and "declare an enum" in free["advice"]
    enum = next(r for r in freedom["explanations"] if r["parameter"] == "format")
    assert enum["rule"].startswith("enum") and enum["advice"].startswith("drop enum values (4")
    assert run_json(capsys, "freedom", "--surface", surface) == {
        k: v for k, v in freedom.items() if k != "explanations"
    }


def test_trial_explain_shows_refused_values_redacted_on_request(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    surface, artifact, compiled = compiled_corpus(capsys, tmp_path)
    assert compiled["status"] == "compiled"
    secret = "sk-proj-" + "a1B2" * 8
    held_out = [
        {
            "taskKey": "held",
            "operations": [
                {"ref": "mcp.report.render", "args": {"format": "docx"}, "outcome": "succeeded"},
                {"ref": "mcp.flaky.run", "args": {"mode": secret}, "outcome": "succeeded"},
            ],
        }
    ]
    held = write_native_sessions(tmp_path / "held.jsonl", held_out)
    argv = ["trial", "--sessions", held, "--surface", str(surface), "--artifact", str(artifact)]
    plain = run_json(capsys, *argv, expect=1)
    explained = run_json(capsys, *argv, "--explain", expect=1)
    rows = explained.pop("explanations")
    assert explained == plain
    by_class = {row["trialClass"]: row for row in rows}
    assert by_class["tightening-cost"]["examples"] == [
        {"source": "audit", "refused": {"format": "docx"}}
    ]
    assert by_class["quarantine-cost"]["examples"][0]["refused"] == {"mode": secret}
    redacted = run_json(capsys, *argv, "--explain", "--redact-values", expect=1)
    shown = {row["trialClass"]: row for row in redacted["explanations"]}
    value = shown["quarantine-cost"]["examples"][0]["refused"]["mode"]
    assert is_redacted(value) and secret not in json.dumps(redacted)
    assert shown["tightening-cost"]["examples"][0]["refused"] == {"format": "docx"}


def test_pool_redact_values_keeps_the_counts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    secret = "ghp_" + "x" * 36
    traces = [
        {
            "taskKey": "t",
            "operations": [
                {"ref": "mcp.a", "args": {"q": secret, "n": "short"}, "outcome": "succeeded"},
                {"ref": "mcp.a", "args": {"q": secret, "n": "y" * 100}, "outcome": "succeeded"},
            ],
        }
    ]
    sessions = write_native_sessions(tmp_path / "s.jsonl", traces)
    plain_out, redacted_out = tmp_path / "plain.json", tmp_path / "redacted.json"
    plain = run_json(capsys, "pool", "--sessions", sessions, "--out", str(plain_out))
    redacted = run_json(
        capsys, "pool", "--sessions", sessions, "--out", str(redacted_out), "--redact-values"
    )
    assert redacted["mergedSessions"] == plain["mergedSessions"] == 1
    text = redacted_out.read_text(encoding="utf-8")
    assert secret not in text and "y" * 100 not in text and "short" in text
    assert secret in plain_out.read_text(encoding="utf-8")

    def counts(pool: dict[str, Any]) -> list[tuple[str, list[int], int]]:
        return [
            (e["key"], sorted(v["count"] for v in e["values"]), e["total"]) for e in pool["entries"]
        ]

    assert counts(redacted["file"]) == counts(plain["file"])


def test_apply_writes_the_effective_surface_in_its_own_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sessions = write_native_sessions(tmp_path / "train.jsonl", RATCHET["input"]["traces"], FLAKY)
    tools = {
        "tools": [
            {"name": a["ref"], "description": "from the server", "inputSchema": a["inputSchema"]}
            for a in RATCHET["input"]["surface"]["actions"]
        ]
    }
    surface = tmp_path / "tools.json"
    surface.write_text(json.dumps(tools), encoding="utf-8")
    artifact = tmp_path / "artifact.json"
    run_json(
        capsys, "compile", "--sessions", sessions, "--surface", str(surface),
        "--out", str(artifact),
    )  # fmt: skip
    code, out, err = run(capsys, "apply", "--surface", str(surface), "--artifact", str(artifact))
    assert code == 0, err
    written = json.loads(out)
    assert [t["name"] for t in written["tools"]] == ["mcp.report.render", "memory.expand"]
    assert written["tools"][0]["description"] == "from the server"
    effective_file = tmp_path / "effective.json"
    effective_file.write_text(out, encoding="utf-8")
    declared = load_surface(surface)
    loaded = json.loads(artifact.read_text(encoding="utf-8"))
    effective = apply_compiled_surface(declared, loaded)
    assert surface_freedom_report(load_surface(effective_file)) == surface_freedom_report(effective)
    patch_file = tmp_path / "patch.json"
    code, _, err = run(
        capsys, "apply", "--surface", str(surface), "--artifact", str(artifact), "--patch",
        "--out", str(patch_file),
    )  # fmt: skip
    assert code == 0 and "1 tools overlaid · 1 removed · 0 stale" in err
    patches = json.loads(patch_file.read_text(encoding="utf-8"))
    assert patches["format"] == "mcp"
    patched: Any = tools
    for entry in patches["patches"]:
        patched = jsonpatch.apply_patch(patched, entry["patch"])
    assert patched == written


def test_apply_names_stale_tools_and_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    surface, artifact, _ = compiled_corpus(capsys, tmp_path)
    drifted = json.loads(json.dumps(RATCHET["input"]["surface"]))
    drifted["actions"][0]["inputSchema"]["properties"]["format"]["enum"].append("epub")
    surface.write_text(json.dumps(drifted), encoding="utf-8")
    code, out, err = run(capsys, "apply", "--surface", str(surface), "--artifact", str(artifact))
    assert code == 1
    assert "stale: mcp.report.render (overlay)" in err
    written = json.loads(out)
    render = next(a for a in written["actions"] if a["ref"] == "mcp.report.render")
    assert render["inputSchema"] == drifted["actions"][0]["inputSchema"]  # never applied
    assert "mcp.flaky.run" not in [a["ref"] for a in written["actions"]]  # still proven
    code, _, err = run(
        capsys, "apply", "--surface", str(tmp_path / "none.json"), "--artifact", str(artifact)
    )
    assert code == 2 and "surface file not found" in err
    code, _, err = run(
        capsys, "apply", "--surface", str(surface), "--artifact", str(tmp_path / "none.json")
    )
    assert code == 2 and "compiled surface file not found" in err


def test_a_selection_token_that_matches_nothing_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sessions, surface = vetoed_corpus(tmp_path)
    argv = ["compile", "--sessions", sessions, "--surface", surface, "--partial"]
    code, out, err = run(
        capsys, *argv, "--only", "mcp.report.render.fromat", "--only", "enum-tighten",
        "--exclude", "sequence-fuse", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert err.splitlines() == [
        "warning: --only mcp.report.render.fromat matches no proposal of this compile",
        "warning: --exclude sequence-fuse matches no proposal of this compile",
    ]
    result = json.loads(out)
    assert result["warnings"] == [line.removeprefix("warning: ") for line in err.splitlines()]
    assert list(result)[: len(REFERENCE_KEYS)] == REFERENCE_KEYS
    # Tokens that all match add no key and no line; human output warns on stderr too.
    code, out, err = run(capsys, *argv, "--only", "enum-tighten", "--json")
    assert code == 0 and err == ""
    assert "warnings" not in json.loads(out)
    code, _, err = run(capsys, *argv, "--exclude", "mcp.nowhere")
    assert code == 0
    assert "warning: --exclude mcp.nowhere matches no proposal of this compile" in err
