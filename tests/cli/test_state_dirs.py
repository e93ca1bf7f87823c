"""One state directory: trial, certify --trial, status, compile --write and watch agree on it
(``.entropy/`` of the project unless --state-dir, --agent-dir or the configuration says
otherwise); the state directory is private (a ``.gitignore`` of ``*``); Claude Code's
directory works as an agent directory and is never written into."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.cli.commands.compile import CONVERGED, CONVERGED_INCUMBENT
from pytest_entropy.sources.agent_dir import (
    agent_layout,
    detect_agent_kind,
    encode_claude_project_dir,
    machine_session_files,
)
from pytest_entropy.state.files import GITIGNORE_TEXT

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SESSIONS = str(DEMO / "sessions")
SURFACE = str(DEMO / "surface.json")
REPAIRS = str(DEMO / "repairs.json")
COMPILE = ["compile", "--sessions", SESSIONS, "--surface", SURFACE, "--repairs", REPAIRS]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


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


def test_compile_says_what_it_wrote_and_where(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, *COMPILE)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("entropy: compiled, not saved (")
    assert "background optimization complete" not in out
    assert lines[1] == (
        f"artifact not written: --write saves it as {project / '.entropy' / 'compiled.json'}"
        " (and merges the sessions into the pool there), --out FILE writes it anywhere"
    )
    assert list(project.iterdir()) == []  # nothing written anywhere
    code, out, _ = run(capsys, *COMPILE, "--write")
    assert code == 0
    state = project / ".entropy"
    assert out.splitlines()[0].startswith("entropy: background optimization complete (")
    assert f"pool written to {state / 'observation-pool.json'}" in out.splitlines()
    assert f"artifact written to {state / 'compiled.json'}" in out.splitlines()
    assert (state / ".gitignore").read_text(encoding="utf-8") == GITIGNORE_TEXT
    assert "*" in (state / ".gitignore").read_text(encoding="utf-8").splitlines()
    code, out, _ = run(capsys, *COMPILE, "--write")
    assert code == 0
    assert out.splitlines()[0].startswith(f"entropy: {CONVERGED_INCUMBENT} · score ")
    assert f"pool unchanged at {state / 'observation-pool.json'}" in out.splitlines()
    assert "no artifact written: nothing new to save" in out.splitlines()


def test_a_converged_compile_without_an_artifact_has_nothing_to_trial(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = sorted((DEMO / "sessions").glob("*.jsonl"))[0]
    code, out, _ = run(capsys, "compile", "--sessions", str(one), "--surface", SURFACE)
    assert code == 0
    assert out.splitlines()[0].startswith(f"entropy: {CONVERGED} · score ")
    assert out.splitlines()[1] == "no artifact written: nothing new to save"
    code, out, _ = run(capsys, "trial", "--sessions", str(one), "--surface", SURFACE, "--json")
    assert code == 0
    assert json.loads(out)["verdict"] == "no-evidence"
    assert list(project.iterdir()) == []


def test_an_existing_state_directory_gets_no_gitignore(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".entropy").mkdir()
    assert run(capsys, *COMPILE, "--write")[0] == 0
    assert not (project / ".entropy" / ".gitignore").exists()
    assert (project / ".entropy" / "compiled.json").is_file()


def _status_compiled_line(capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    code, out, _ = run(capsys, "status", "--sessions", SESSIONS, "--surface", SURFACE, *extra)
    assert code == 0
    return next(line for line in out.splitlines() if line.startswith("compiled:"))


@pytest.mark.parametrize("where", ["default", "flag", "config"])
def test_every_command_agrees_on_the_state_directory(
    where: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flags: list[str] = []
    state = project / ".entropy"
    if where == "flag":
        state = project / "elsewhere"
        flags = ["--state-dir", str(state)]
    elif where == "config":
        state = project / "configured"
        (project / "pyproject.toml").write_text(
            '[tool.entropy]\nstate-dir = "configured"\n', encoding="utf-8"
        )
    assert _status_compiled_line(capsys, *flags) == "compiled: none"
    assert run(capsys, *COMPILE, "--write", *flags)[0] == 0
    assert (state / "compiled.json").is_file()
    assert _status_compiled_line(capsys, *flags).startswith("compiled: v2 · 1 tightened")
    code, out, _ = run(capsys, "trial", "--sessions", SESSIONS, "--surface", SURFACE, *flags)
    assert code == 0
    assert out.startswith("trial: clean · ")
    code, out, _ = run(
        capsys, "certify", "--sessions", SESSIONS, "--surface", SURFACE, "--trial", *flags
    )
    assert code == 0, out
    assert f"artifact {state / 'compiled.json'}: 1 tightened · 1 quarantined" in out
    watched = project / "watched"
    shutil.copytree(DEMO / "sessions", watched)
    code, out, _ = run(
        capsys, "watch", "--sessions", str(watched), "--surface", SURFACE, "--once", "--json",
        *flags,
    )  # fmt: skip
    assert code == 0
    assert json.loads(out.splitlines()[-1])["event"] == "tick"
    assert sorted(path.name for path in project.iterdir()) == sorted(
        {state.name, "watched"} | ({"pyproject.toml"} if where == "config" else set())
    )


def test_certification_falls_back_to_the_agent_directory(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    agent = tmp_path / "pi-agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    assert run(capsys, *COMPILE, "--agent-dir", str(agent), "--write")[0] == 0
    compiled = agent / "fabric" / "entropy" / "compiled.json"
    assert compiled.is_file()
    assert not (project / ".entropy").exists()
    code, out, _ = run(capsys, "certify", "--sessions", SESSIONS, "--surface", SURFACE, "--trial")
    assert code == 0
    assert f"artifact {compiled}: 1 tightened" in out
    shutil.rmtree(agent)
    code, out, _ = run(capsys, "certify", "--sessions", SESSIONS, "--surface", SURFACE, "--trial")
    assert code == 1
    assert "no compiled surface in the agent dir (pass --artifact <path>)" in out


# ------------------------------------------------------------------ Claude Code's directory


def _event(kind: str, message: Any, session: str, cwd: str) -> dict[str, Any]:
    return {"type": kind, "sessionId": session, "uuid": "u", "isSidechain": False,
            "cwd": cwd, "message": message}  # fmt: skip


def _transcript(path: Path, session: str, cwd: str, commands: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [_event("user", {"role": "user", "content": "go"}, session, cwd)]
    for number, command in enumerate(commands):
        call = {"type": "tool_use", "id": f"t{number}", "name": "Bash",
                "input": {"command": command}}  # fmt: skip
        lines.append(_event("assistant", {"model": "claude-opus-4-6", "role": "assistant",
                                          "content": [call]}, session, cwd))  # fmt: skip
        result = {"type": "tool_result", "tool_use_id": f"t{number}", "content": "ok",
                  "is_error": False}  # fmt: skip
        lines.append(_event("user", {"role": "user", "content": [result]}, session, cwd))
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


CC_SURFACE = {
    "version": 1,
    "actions": [
        {
            "ref": "Bash",
            "inputSchema": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
            },
        },
    ],
}


@pytest.fixture
def claude_dir(tmp_path: Path, project: Path) -> Path:
    """A Claude Code directory: ten other projects' sessions, newer than the current one's."""
    root = tmp_path / "dot-claude"
    here = root / "projects" / encode_claude_project_dir(project)
    _transcript(here / "current.jsonl", "current", str(project), ["ls", "pwd"])
    os.utime(here / "current.jsonl", (1_000, 1_000))
    for number in range(10):
        other = root / "projects" / f"-home-u-other{number}"
        path = _transcript(other / f"s{number}.jsonl", f"s{number}", f"/home/u/other{number}",
                           ["ls"])  # fmt: skip
        os.utime(path, (2_000 + number, 2_000 + number))
    return root


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_claude_code_layout_is_detected_and_windowed(claude_dir: Path, project: Path) -> None:
    assert detect_agent_kind(claude_dir) == "claude-code"
    layout = agent_layout(claude_dir)
    assert layout.state_dir(project) == project / ".entropy"
    window = machine_session_files(claude_dir, project, kind=None)
    assert len(window) == 8
    names = [item.path.name for item in window]
    assert "current.jsonl" in names  # the oldest file, always kept
    assert names[:7] == [f"s{number}.jsonl" for number in range(9, 2, -1)]


@pytest.mark.parametrize("kind", [[], ["--agent-kind", "claude-code"]])
def test_status_watch_and_compile_over_claude_code(
    kind: list[str], claude_dir: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    surface = project.parent / "cc-surface.json"
    surface.write_text(json.dumps(CC_SURFACE), encoding="utf-8")
    before = _snapshot(claude_dir)
    code, out, _ = run(capsys, "status", "--agent-dir", str(claude_dir), *kind,
                       "--surface", str(surface), "--json")  # fmt: skip
    assert code == 0
    document = json.loads(out)
    assert len(document["corpus"]["files"]) == 8
    # read as Claude Code transcripts (their calls counted), not as native traces
    assert all(row["operations"] > 0 for row in document["corpus"]["sessions"])
    code, out, _ = run(capsys, "status", "--agent-dir", str(claude_dir), *kind, "--project",
                       "--surface", str(surface), "--json")  # fmt: skip
    assert code == 0
    files = json.loads(out)["corpus"]["files"]
    assert [Path(file).name for file in files] == ["current.jsonl"]
    code, out, _ = run(capsys, "compile", "--sessions", str(claude_dir / "projects"),
                       "--surface", str(surface), "--agent-dir", str(claude_dir), *kind,
                       "--write")  # fmt: skip
    assert code == 0, out
    assert (project / ".entropy" / "observation-pool.json").is_file()
    assert (project / ".entropy" / ".gitignore").is_file()
    shutil.rmtree(project / ".entropy")
    code, out, _ = run(capsys, "watch", "--agent-dir", str(claude_dir), *kind,
                       "--surface", str(surface), "--once", "--json")  # fmt: skip
    assert code == 0, out
    assert json.loads(out.splitlines()[-1])["event"] == "tick"
    assert (project / ".entropy" / "observation-pool.json").is_file()
    assert _snapshot(claude_dir) == before  # Claude Code's own directory is never written


def test_claude_code_project_names(tmp_path: Path) -> None:
    assert encode_claude_project_dir("/home/u/my.proj") == "-home-u-my-proj"
    assert encode_claude_project_dir("/home/u/a_b c/ü") == "-home-u-a-b-c--"
    assert encode_claude_project_dir("/srv/app-2") == "-srv-app-2"


def test_claude_code_project_names_match_the_real_transcripts(shared_corpora: Path) -> None:
    """The spotter corpus names, for each session, the project directory it was copied from;
    each session's first ``cwd`` (usernames sanitised to USER upstream) encodes to it."""
    root = shared_corpora / "claude-code-sessions-spotter"
    readme = (root / "UPSTREAM_FIXTURES_README.md").read_text(encoding="utf-8")
    pairs = re.findall(r"- `([0-9a-f-]+\.jsonl)` from `([^/`]+)/", readme)
    checked = 0
    for name, project_dir in pairs:
        path = root / "transcripts" / name
        if not path.is_file():
            continue  # one large session is missing from the subset (its README says so)
        with open(path, encoding="utf-8") as stream:
            cwd = next(json.loads(line)["cwd"] for line in stream if '"cwd"' in line)
        assert encode_claude_project_dir(cwd.replace("/USER/", "/marco/")) == project_dir
        checked += 1
    assert checked >= 5
