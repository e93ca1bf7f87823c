"""No lost updates (issue 12, item 2): a compile, a watch tick or a pool merge that computes
from the state files writes only if they are unchanged, and otherwise computes again.

The interleavings are made deterministic by running the other writer from inside the first
one's computation; the last test runs real processes at the same time.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pytest_entropy.cli.commands.compile as compile_command
import pytest_entropy.run.watch as watch_module
from pytest_entropy.cli.app import main
from pytest_entropy.core.pool import merge_observation_window
from pytest_entropy.state.store import (
    COMPILED,
    POOL,
    StoreConflictError,
    Write,
    commit,
    load,
    save,
    snapshot,
    update_many,
)
from tests.store_support import peer_for, surface_with_spare_tools

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SESSION_FILES = sorted(str(path) for path in (DEMO / "sessions").glob("*.jsonl"))
EXTRA_TOOLS = 6


def window(name: str) -> dict[str, Any]:
    """One session's observation window in the pool's terms."""
    return {"file": name, "observations": [{"ref": "mcp.a", "key": "k", "value": name}]}


def adopted_refs(state: Path) -> set[str]:
    stored = load(state, COMPILED).file or {}
    return {e["ref"] for e in [*stored.get("actions", []), *stored.get("quarantined", [])]}


def tracked_files(state: Path) -> set[str]:
    return {session["file"] for session in (load(state, POOL).file or {}).get("tracked", [])}


def quiet(argv: list[str], capsys: pytest.CaptureFixture[str]) -> int:
    code = main(argv)
    capsys.readouterr()
    return code


# ----------------------------------------------------------------------- the primitive


def test_commit_writes_nothing_when_a_snapshotted_file_changed(tmp_path: Path) -> None:
    first = merge_observation_window(None, [window("a")]).file
    other = merge_observation_window(None, [window("b")]).file
    save(tmp_path, POOL, first)
    held = snapshot(tmp_path / POOL.filename, POOL)
    save(tmp_path, POOL, other)  # another writer, between the read and the write
    mine = merge_observation_window(held.file, [window("c")]).file
    assert commit([held], [Write(tmp_path / POOL.filename, POOL, mine)]) is None
    assert load(tmp_path, POOL).file == other


def test_update_many_computes_again_from_the_new_state(tmp_path: Path) -> None:
    path = tmp_path / POOL.filename
    save(tmp_path, POOL, merge_observation_window(None, [window("a")]).file)
    calls = []

    def plan(snapshots: Any) -> tuple[None, list[Write]]:
        calls.append(1)
        if len(calls) == 1:  # another writer lands while we compute
            current = load(tmp_path, POOL).file
            other = merge_observation_window(current, [window("b")])
            save(tmp_path, POOL, other.file)
        merged = merge_observation_window(snapshots[0].file, [window("c")])
        return None, [Write(path, POOL, merged.file)]

    update_many([(path, POOL)], plan)
    assert len(calls) == 2
    assert tracked_files(tmp_path) == {"a", "b", "c"}


def test_update_many_gives_up_with_a_conflict_error(tmp_path: Path) -> None:
    path = tmp_path / POOL.filename
    count = iter(range(1000))

    def plan(snapshots: Any) -> tuple[None, list[Write]]:
        name = f"f{next(count)}"
        current = load(tmp_path, POOL).file
        save(
            tmp_path,
            POOL,
            merge_observation_window(current, [window(name)]).file,
        )
        return None, [Write(path, POOL, merge_observation_window(None, []).file)]

    with pytest.raises(StoreConflictError, match="changed 3 times"):
        update_many([(path, POOL)], plan, attempts=3)


# --------------------------------------------------- the writers, interleaved on purpose


def test_an_import_during_a_compile_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / ".entropy"
    surface = surface_with_spare_tools(tmp_path, EXTRA_TOOLS)
    peer, ref = peer_for(surface, 0, tmp_path)
    real = compile_command.compile_sources
    landed: list[int] = []

    def compile_while_importing(*args: Any, **kwargs: Any) -> Any:
        if not landed:  # the import lands after the compile read the state
            landed.append(quiet(["import", str(peer), "--surface", str(surface),
                                 "--state-dir", str(state)], capsys))  # fmt: skip
        return real(*args, **kwargs)

    monkeypatch.setattr(compile_command, "compile_sources", compile_while_importing)
    code = main(["compile", "--sessions", *SESSION_FILES, "--surface", str(surface),
                 "--state-dir", str(state), "--write"])  # fmt: skip
    assert code == 0 and landed == [0]
    assert ref in adopted_refs(state)  # the import's entry survived the compile's write
    assert tracked_files(state) == set(SESSION_FILES)


def test_two_interleaved_compiles_keep_both_sessions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / ".entropy"
    real = compile_command.compile_sources
    nested: list[int] = []

    def compile_during_compile(*args: Any, **kwargs: Any) -> Any:
        if not nested:
            nested.append(0)
            nested[0] = quiet(["compile", "--sessions", SESSION_FILES[1], "--surface",
                               str(DEMO / "surface.json"), "--state-dir", str(state),
                               "--write"], capsys)  # fmt: skip
        return real(*args, **kwargs)

    monkeypatch.setattr(compile_command, "compile_sources", compile_during_compile)
    code = main(["compile", "--sessions", SESSION_FILES[0], "--surface",
                 str(DEMO / "surface.json"), "--state-dir", str(state), "--write"])  # fmt: skip
    assert code == 0 and nested == [0]
    assert tracked_files(state) == {SESSION_FILES[0], SESSION_FILES[1]}


def test_a_watch_tick_keeps_an_import_and_a_compile_that_land_meanwhile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / ".entropy"
    surface = surface_with_spare_tools(tmp_path, EXTRA_TOOLS)
    peer, ref = peer_for(surface, 1, tmp_path)
    live = tmp_path / "live"
    live.mkdir()
    (live / "now.jsonl").write_bytes(Path(SESSION_FILES[2]).read_bytes())
    real = watch_module.read_corpus
    others: list[int] = []

    def tick_while_others_write(*args: Any, **kwargs: Any) -> Any:
        if not others:
            others.append(quiet(["import", str(peer), "--surface", str(surface),
                                 "--state-dir", str(state)], capsys))  # fmt: skip
            others.append(quiet(["compile", "--sessions", SESSION_FILES[0], "--surface",
                                 str(surface), "--state-dir", str(state), "--write"],
                                capsys))  # fmt: skip
        return real(*args, **kwargs)

    monkeypatch.setattr(watch_module, "read_corpus", tick_while_others_write)
    code = main(["watch", "--sessions", str(live), "--surface", str(surface),
                 "--state-dir", str(state), "--once"])  # fmt: skip
    assert code == 0 and others == [0, 0]
    assert ref in adopted_refs(state)
    assert tracked_files(state) == {SESSION_FILES[0], str(live / "now.jsonl")}


# ------------------------------------------------------ real processes at the same time


def test_concurrent_compiles_and_imports_lose_nothing(tmp_path: Path) -> None:
    state = tmp_path / ".entropy"
    surface = surface_with_spare_tools(tmp_path, EXTRA_TOOLS)
    command = [sys.executable, "-m", "pytest_entropy"]
    expected_refs: set[str] = set()
    expected_files: set[str] = set()
    for round_ in range(2):
        processes = []
        for index in range(3):
            chosen = SESSION_FILES[index : index + 1 + round_]
            processes.append(("compile", chosen, subprocess.Popen(
                [*command, "compile", "--sessions", *chosen, "--surface", str(surface),
                 "--state-dir", str(state), "--write"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )))  # fmt: skip
        for index in range(3):
            peer, ref = peer_for(surface, round_ * 3 + index, tmp_path)
            processes.append(("import", [ref], subprocess.Popen(
                [*command, "import", str(peer), "--surface", str(surface),
                 "--state-dir", str(state)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )))  # fmt: skip
        for kind, items, process in processes:
            out, err = process.communicate(timeout=300)
            assert process.returncode == 0, err  # no lock timeout, no conflict at this size
            if kind == "import":
                assert "adopted 1 overlays and 0 quarantines" in out or (
                    "adopted 0 overlays and 1 quarantines" in out
                ), out
                expected_refs.update(items)
            else:
                expected_files.update(items)
        assert load(state, COMPILED).error is None and load(state, POOL).error is None
        assert expected_refs <= adopted_refs(state), "an adopted entry was lost"
        assert expected_files <= tracked_files(state), "a session was lost from the pool"
