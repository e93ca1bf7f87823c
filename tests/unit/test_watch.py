"""The compile loop: ticks, notices, de-duplication, the watcher, configuration."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.run.watch import CompileLoop, Notice, Watcher
from pytest_entropy.sources.locate import directory_session_files
from pytest_entropy.state.config import load_config

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SURFACE = json.loads((DEMO / "surface.json").read_text(encoding="utf-8"))
SESSION_FILES = sorted((DEMO / "sessions").glob("*.jsonl"))


def make_loop(sessions: Path, state: Path) -> CompileLoop:
    return CompileLoop(
        window=lambda: directory_session_files(sessions), surface=SURFACE, state_dir=state
    )


def disk(state: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(state.glob("*.json"))}


def test_end_to_end_watch(tmp_path: Path) -> None:
    sessions, state = tmp_path / "sessions", tmp_path / "state"
    sessions.mkdir()
    notices: list[Notice] = []
    watcher = Watcher(
        make_loop(sessions, state),
        [sessions],
        notices.append,
        grace_seconds=0.05,
        poll_seconds=0.05,
        use_inotify=False,
    )
    import threading

    runner = threading.Thread(target=watcher.run)
    runner.start()
    try:
        assert watcher.wait_idle()
        # Burst 1: the first session, whole.
        (sessions / "a.jsonl").write_bytes(SESSION_FILES[0].read_bytes())
        time.sleep(0.3)
        assert watcher.wait_idle()
        pool = json.loads((state / "observation-pool.json").read_text(encoding="utf-8"))
        assert [Path(t["file"]).name for t in pool["tracked"]] == ["a.jsonl"]
        # Burst 2: the other sessions appended into b.jsonl, one line split across writes.
        rest = b"".join(p.read_bytes() for p in SESSION_FILES[1:])
        cut = rest.index(b"\n", len(rest) // 2) + 40
        with open(sessions / "b.jsonl", "ab") as stream:
            stream.write(rest[:cut])
        time.sleep(0.3)
        assert watcher.wait_idle()
        with open(sessions / "b.jsonl", "ab") as stream:
            stream.write(rest[cut:])
        time.sleep(0.3)
        assert watcher.wait_idle()
        compiled = json.loads((state / "compiled.json").read_text(encoding="utf-8"))
        assert [a["ref"] for a in compiled["actions"]] == ["mcp.report.render"]
        assert [q["ref"] for q in compiled["quarantined"]] == ["mcp.flaky.sync"]
        # The evidence arrived in two steps, and so did the tightenings: each newly saved
        # artifact that changed the surface was announced once.
        texts = [n.text for n in notices if n.kind == "compiled"]
        assert texts
        joined = " ".join(texts)
        assert "tightened mcp.report.render.format to {pdf, html}" in joined
        assert "hid mcp.flaky.sync" in joined
        for text in texts:
            assert text.startswith("entropy: background optimization complete (")
            assert "lower is better" in text
            assert "safety checks passed" in text
            assert "enum-tighten" not in text
            assert "noise-quarantine" not in text
        # Burst 3: a.jsonl replaced by a new file with the same content, b.jsonl touched:
        # nothing changes on disk and nothing is announced.
        before = disk(state)
        replacement = sessions / "a.tmp"
        replacement.write_bytes((sessions / "a.jsonl").read_bytes())
        os.replace(replacement, sessions / "a.jsonl")
        os.utime(sessions / "b.jsonl")
        count = len(notices)
        time.sleep(0.3)
        assert watcher.wait_idle()
        assert disk(state) == before
        assert len(notices) == count
        assert watcher.ticks >= 4
    finally:
        watcher.stop()
        runner.join(timeout=10)
    assert not runner.is_alive()


def test_gate_rejections_are_announced_once_per_reason_kind_and_ref(tmp_path: Path) -> None:
    sessions, state = tmp_path / "sessions", tmp_path / "state"
    sessions.mkdir()
    lines = b"".join(p.read_bytes() for p in SESSION_FILES)
    record = json.loads(lines.splitlines()[-1])
    record["message"]["details"]["trace"]["operations"] = [
        {"type": "call", "sequence": 0, "ref": "mcp.flaky.sync", "args": {}, "outcome": "succeeded"}
    ]
    record["message"]["details"]["audits"] = []
    success = (json.dumps(record) + "\n").encode()
    (sessions / "s.jsonl").write_bytes(lines + success)
    loop = make_loop(sessions, state)
    first = loop.tick()
    assert first.status == "rejected"
    assert [n.kind for n in first.notices] == ["rejected"]
    assert "hiding mcp.flaky.sync would break recorded calls" in first.notices[0].text
    assert "flaky" in first.notices[0].text
    # More evidence, different scores, the same (reason kind, ref): silent.
    with open(sessions / "s.jsonl", "ab") as stream:
        stream.write(lines.splitlines(keepends=True)[-1])
    second = loop.tick()
    assert second.status == "rejected"
    assert second.notices == []
    assert not (state / "compiled.json").exists()


def test_a_damaged_artifact_pauses_compiles_and_says_so_once(tmp_path: Path) -> None:
    sessions, state = tmp_path / "sessions", tmp_path / "state"
    sessions.mkdir()
    state.mkdir()
    (sessions / "a.jsonl").write_bytes(SESSION_FILES[0].read_bytes())
    (state / "compiled.json").write_text("{ nope", encoding="utf-8")
    loop = make_loop(sessions, state)
    first = loop.tick()
    assert first.status == "damaged"
    assert first.notices[0].text.startswith("entropy: compiled surface is malformed JSON")
    assert loop.tick().notices == []
    assert (state / "compiled.json").read_text(encoding="utf-8") == "{ nope"
    assert not (state / "observation-pool.json").exists()


def test_strict_says_once_that_an_unreadable_session_pauses_compiles(tmp_path: Path) -> None:
    sessions, state = tmp_path / "sessions", tmp_path / "state"
    sessions.mkdir()
    state.mkdir()
    (sessions / "a.jsonl").write_bytes(SESSION_FILES[0].read_bytes())
    (sessions / "b.jsonl").symlink_to(sessions / "c.jsonl")  # a loop: listed, never readable
    (sessions / "c.jsonl").symlink_to(sessions / "b.jsonl")
    loop = CompileLoop(
        window=lambda: directory_session_files(sessions),
        surface=SURFACE,
        state_dir=state,
        strict=True,
    )
    first = loop.tick()
    assert first.status == "unreadable"
    assert [notice.kind for notice in first.notices] == ["damaged"]
    assert "b.jsonl: unreadable session file (strict)" in first.notices[0].text
    again = loop.tick()
    assert again.status == "unreadable"
    assert again.notices == []  # said once while it lasts
    for link in ("b.jsonl", "c.jsonl"):
        (sessions / link).unlink()
    assert loop.tick().status != "unreadable"
    assert disk(state)  # compiles resumed once the file was gone


def test_review_suggestions_are_announced_once_per_distinct_set(tmp_path: Path) -> None:
    sessions, state = tmp_path / "sessions", tmp_path / "state"
    sessions.mkdir()
    surface = json.loads(json.dumps(SURFACE))
    for action in surface["actions"]:
        if action["ref"] == "mcp.report.render":
            action["inputSchema"]["properties"]["format"] = {
                "type": "string",
                "x-fabric-enum-candidate": True,
            }
    (sessions / "a.jsonl").write_bytes(b"".join(p.read_bytes() for p in SESSION_FILES))
    loop = CompileLoop(
        window=lambda: directory_session_files(sessions), surface=surface, state_dir=state
    )
    first = loop.tick()
    kinds = [n.kind for n in first.notices]
    assert "review" in kinds or any("await review" in n.text for n in first.notices)
    assert loop.tick().notices == []


def test_configuration_precedence(tmp_path: Path) -> None:
    (tmp_path / "entropy.yml").write_text(
        "compile: false\nsurface: from-yaml.json\nwindow: 3\n", encoding="utf-8"
    )
    assert load_config(tmp_path).compile is False
    (tmp_path / "pyproject.toml").write_text(
        '[tool.entropy]\ncompile = true\nsurface = "from-toml.json"\n', encoding="utf-8"
    )
    config = load_config(tmp_path)
    assert config.compile is True
    assert config.surface == str(tmp_path / "from-toml.json")
    assert config.window == 3  # only in the YAML file
    overridden = load_config(tmp_path, {"surface": "cli.json", "compile": None})
    assert overridden.surface == "cli.json"
    assert overridden.sources["surface"] == "command line"
    (tmp_path / "entropy.yml").write_text(
        "compile: !!python/object/apply:os.system ['true']\n", encoding="utf-8"
    )
    with pytest.raises(EntropyInputError, match="not valid YAML"):
        load_config(tmp_path)


def test_compile_false_disables_the_loop(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.entropy]\ncompile = false\n", encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_entropy",
            "watch",
            "--sessions",
            str(tmp_path),
            "--surface",
            str(DEMO / "surface.json"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0
    assert "compile loop is disabled" in result.stdout


def test_sigterm_finishes_the_queued_compile(tmp_path: Path) -> None:
    sessions, state = tmp_path / "sessions", tmp_path / "state"
    sessions.mkdir()
    (sessions / "a.jsonl").write_bytes(b"".join(p.read_bytes() for p in SESSION_FILES))
    process = subprocess.Popen(
        [
            sys.executable, "-m", "pytest_entropy", "watch", "--sessions", str(sessions),
            "--surface", str(DEMO / "surface.json"), "--state-dir", str(state), "--poll",
            "--grace-ms", "400", "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert process.stderr is not None
    assert process.stderr.readline().startswith("entropy: watching ")  # handlers installed
    process.send_signal(signal.SIGTERM)  # inside the grace period of the initial compile
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    events: list[dict[str, Any]] = [json.loads(line) for line in out.splitlines()]
    assert [e["event"] for e in events] == ["compiled"]
    assert (state / "compiled.json").exists()


def test_inotify_triggers_a_compile(tmp_path: Path) -> None:
    import threading

    import watchfiles  # noqa: F401 - part of the test extra; the watcher polls without it

    sessions, state = tmp_path / "sessions", tmp_path / "state"
    sessions.mkdir()
    notices: list[Notice] = []
    watcher = Watcher(
        make_loop(sessions, state), [sessions], notices.append, grace_seconds=0.05, use_inotify=True
    )
    runner = threading.Thread(target=watcher.run, kwargs={"initial_tick": False})
    runner.start()
    try:
        time.sleep(0.3)  # let the inotify watch start
        (sessions / "a.jsonl").write_bytes(b"".join(p.read_bytes() for p in SESSION_FILES))
        deadline = time.monotonic() + 20
        while not (state / "compiled.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert watcher.wait_idle()
    finally:
        watcher.stop()
        runner.join(timeout=10)
    assert (state / "compiled.json").exists()
    assert [n.kind for n in notices] == ["compiled"]
