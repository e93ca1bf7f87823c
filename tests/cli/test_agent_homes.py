"""Codex CLI's and Gemini CLI's homes as agent directories (issue 33): detected, the window
of the newest sessions, the project's own sessions with --project (Codex: session_meta.cwd;
Gemini CLI: projectHash), status, watch and compile over them, and nothing ever written
into the agent's own directory."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.sources.agent_dir import (
    agent_layout,
    detect_agent_kind,
    gemini_project_hash,
    machine_session_files,
    project_session_files,
)

SURFACE = {
    "version": 1,
    "actions": [
        {"ref": "shell", "inputSchema": {"type": "object"}},
        {"ref": "read_file", "inputSchema": {"type": "object"}},
    ],
}


def jsonl(path: Path, *records: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def rollout(path: Path, session: str, cwd: str, when: int) -> None:
    def line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "t", "type": kind, "payload": payload}

    jsonl(
        path,
        line("session_meta", {"id": session, "cwd": cwd, "model_provider": "openai"}),
        line("turn_context", {"cwd": cwd, "model": "gpt-5"}),
        line("response_item", {"type": "function_call", "name": "shell",
                               "arguments": '{"command": ["ls"]}', "call_id": "c"}),
        line("response_item", {"type": "function_call_output", "call_id": "c", "output": "ok"}),
    )  # fmt: skip
    os.utime(path, (when, when))


def chat(path: Path, session: str, project: str, when: int) -> None:
    jsonl(
        path,
        {"sessionId": session, "projectHash": gemini_project_hash(project), "startTime": "t"},
        {"id": "u", "timestamp": "t", "type": "user", "content": "go"},
        {"id": "m", "timestamp": "t", "type": "gemini", "model": "gemini-2.5-pro",
         "content": "", "toolCalls": [{"id": "c", "name": "read_file", "args": {"path": "a"},
                                       "status": "success", "timestamp": "t"}]},
    )  # fmt: skip
    os.utime(path, (when, when))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(root)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "no-pi-agent"))
    for name in list(os.environ):
        if name.startswith("PYTEST_ENTROPY_"):
            monkeypatch.delenv(name)
    return root


@pytest.fixture
def codex_home(tmp_path: Path, project: Path) -> Path:
    """Ten other projects' rollouts, newer than the current project's one."""
    root = tmp_path / "dot-codex"
    (root / "config.toml").parent.mkdir(parents=True)
    jsonl(root / "history.jsonl", {"session_id": "x", "ts": 1, "text": "hi"})
    rollout(root / "sessions/2026/01/01/rollout-2026-01-01T00-00-00-here.jsonl", "here",
            str(project), 1_000)  # fmt: skip
    for number in range(10):
        rollout(root / f"sessions/2026/01/0{number % 9 + 1}/rollout-2026-x-{number}.jsonl",
                f"o{number}", f"/home/u/other{number}", 2_000 + number)  # fmt: skip
    return root


@pytest.fixture
def gemini_home(tmp_path: Path, project: Path) -> Path:
    root = tmp_path / "dot-gemini"
    jsonl(root / "settings.json", {"theme": "x"})
    # The current project's chat sits under a registry name, not its hash: its head says.
    chat(root / "tmp" / "project" / "chats" / "session-here.jsonl", "here", str(project), 1_000)
    for number in range(10):
        other = f"/home/u/other{number}"
        folder = root / "tmp" / gemini_project_hash(other) / "chats"
        chat(folder / f"session-o{number}.jsonl", f"o{number}", other, 2_000 + number)
    return root


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(("home", "kind"), [("codex_home", "codex"), ("gemini_home", "gemini-cli")])
def test_detected_windowed_and_project(
    home: str, kind: str, project: Path, request: pytest.FixtureRequest
) -> None:
    root: Path = request.getfixturevalue(home)
    assert detect_agent_kind(root) == kind
    layout = agent_layout(root)
    assert layout.session_format == kind
    assert layout.state_dir(project) == project / ".entropy"
    assert layout.repairs_path() is None
    window = machine_session_files(root, project, kind=None)
    assert len(window) == 8
    names = [item.path.name for item in window]
    assert any("here" in name for name in names)  # the oldest file, always kept
    mine = project_session_files(root, project, kind=None)
    assert [item.path.name for item in mine] == [
        "rollout-2026-01-01T00-00-00-here.jsonl" if kind == "codex" else "session-here.jsonl"
    ]


@pytest.mark.parametrize(
    ("home", "kind"),
    [("codex_home", []), ("codex_home", ["--agent-kind", "codex"]),
     ("gemini_home", []), ("gemini_home", ["--agent-kind", "gemini-cli"])],
)  # fmt: skip
def test_status_watch_and_compile(
    home: str,
    kind: list[str],
    project: Path,
    request: pytest.FixtureRequest,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root: Path = request.getfixturevalue(home)
    surface = project.parent / "surface.json"
    surface.write_text(json.dumps(SURFACE), encoding="utf-8")
    before = _snapshot(root)
    code = main(["status", "--agent-dir", str(root), *kind, "--surface", str(surface), "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    document = json.loads(out)
    assert len(document["corpus"]["files"]) == 8
    assert all(row["operations"] == 1 for row in document["corpus"]["sessions"])
    code = main(["status", "--agent-dir", str(root), *kind, "--project", "--surface",
                 str(surface), "--json"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert len(json.loads(out)["corpus"]["files"]) == 1
    code = main(["watch", "--agent-dir", str(root), *kind, "--surface", str(surface),
                 "--once", "--json"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert json.loads(out.splitlines()[-1])["event"] == "tick"
    assert (project / ".entropy" / "observation-pool.json").is_file()
    shutil.rmtree(project / ".entropy")
    sessions = layout_root = agent_layout(root).sessions_root
    assert layout_root.is_dir()
    code = main(["compile", "--sessions", str(sessions), "--surface", str(surface),
                 "--agent-dir", str(root), *kind, "--write"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert (project / ".entropy" / "observation-pool.json").is_file()
    assert _snapshot(root) == before  # the agent's own directory is never written


@pytest.mark.parametrize("home", ["codex_home", "gemini_home"])
def test_certification_over_an_agent_home(
    home: str, project: Path, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    root: Path = request.getfixturevalue(home)
    surface = project.parent / "surface.json"
    surface.write_text(json.dumps(SURFACE), encoding="utf-8")
    before = _snapshot(root)
    sessions = agent_layout(root).sessions_root  # walked under --format auto
    code = main(["certify", "--sessions", str(sessions), "--surface", str(surface),
                 "--output-format", "markdown"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    (row,) = [line for line in out.splitlines() if "`corpus-mode`" in line]
    assert "files 11" in row and "operations 11" in row
    assert _snapshot(root) == before
