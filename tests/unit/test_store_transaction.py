"""A command's state writes are all or nothing across its files (issue 26, item 1).

``compile --write`` once wrote ``observation-pool.json`` and then failed before
``compiled.json``. Here the rename of the second file fails (an injected ``OSError``) or the
process is killed at that instant (SIGKILL from inside the rename): both files must keep the
bytes (and the inode and mtime) they had, once the next command has taken the locks."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.state.store import COMPILED, POOL, StoreError, Write, commit, snapshot
from pytest_entropy.state.transaction import JOURNAL_PREFIX

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "corpora" / "demo"
SESSIONS = DEMO / "sessions"
SURFACE = str(DEMO / "surface.json")
FIRST = sorted(SESSIONS.iterdir())[0]


def _compile(state: Path, *sessions: Path) -> int:
    pool = str(state / "observation-pool.json")
    flags = ["--write", "--state-dir", str(state), "--surface", SURFACE, "--pool", pool]
    return main(["compile", *flags, "--sessions", *map(str, sessions)])


def _files(state: Path) -> dict[str, Any]:
    """Each state file's bytes, inode and mtime (``None``: absent), and the directory listing."""
    out: dict[str, Any] = {}
    for name in ("observation-pool.json", "compiled.json"):
        path = state / name
        if path.exists():
            info = path.stat()
            out[name] = (path.read_bytes(), info.st_ino, info.st_mtime_ns)
        else:
            out[name] = None
    out["listing"] = sorted(os.listdir(state))
    return out


def _failing_rename(target: Path, fail: Callable[[], None]) -> Callable[..., None]:
    """``os.replace`` that calls ``fail`` when new bytes are renamed onto ``target``."""
    real = os.replace

    def replace(source: Any, destination: Any, **kwargs: Any) -> None:
        if os.path.abspath(destination) == str(target.resolve()) and str(source).endswith(
            (".tmp", ".staged")
        ):
            fail()
        real(source, destination, **kwargs)

    return replace


def _raise() -> None:
    raise OSError(28, "No space left on device")


@pytest.fixture
def states(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """``old``: a pool and an artifact from one session file; ``new``: from all three."""
    old, new = tmp_path / "old", tmp_path / "new"
    assert _compile(old, *sorted(SESSIONS.iterdir())[:2]) == 0
    assert _compile(new, SESSIONS) == 0
    capsys.readouterr()
    for state in (old, new):
        assert (state / "compiled.json").exists() and (state / "observation-pool.json").exists()
    assert (old / "compiled.json").read_bytes() != (new / "compiled.json").read_bytes()
    assert (old / "observation-pool.json").read_bytes() != (
        new / "observation-pool.json"
    ).read_bytes()
    return old, new


def _writes(old: Path, new: Path) -> list[Write]:
    return [
        Write(old / "observation-pool.json", POOL, json.loads((new / POOL.filename).read_text())),
        Write(old / "compiled.json", COMPILED, json.loads((new / COMPILED.filename).read_text())),
    ]


def test_an_error_between_the_two_renames_leaves_both_files(
    states: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = states
    before = _files(old)
    reads = [snapshot(old / POOL.filename, POOL), snapshot(old / COMPILED.filename, COMPILED)]
    monkeypatch.setattr(os, "replace", _failing_rename(old / "compiled.json", _raise))
    with pytest.raises(StoreError, match=r"compiled\.json: cannot write: No space left on device"):
        commit(reads, _writes(old, new))
    assert _files(old) == before  # bytes, inodes, mtimes and nothing left beside them
    monkeypatch.undo()
    assert commit(reads, _writes(old, new)) is not None  # and it can be done again
    assert _files(old)["compiled.json"][0] == (new / "compiled.json").read_bytes()  # type: ignore[index]
    assert _files(old)["observation-pool.json"][0] == (new / POOL.filename).read_bytes()  # type: ignore[index]
    assert _files(old)["listing"] == before["listing"]


def test_compile_write_fails_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reported case: a pool but no artifact yet; compiling all sessions writes both, and
    the artifact's rename fails. Exit 2, and the pool is still the old one."""
    state = tmp_path / "state"
    assert _compile(state, FIRST) == 0
    before = _files(state)
    assert before["compiled.json"] is None and before["observation-pool.json"] is not None
    monkeypatch.setattr(os, "replace", _failing_rename(state / "compiled.json", _raise))
    assert _compile(state, SESSIONS) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert _files(state) == before
    monkeypatch.undo()
    assert _compile(state, SESSIONS) == 0
    assert (state / "compiled.json").exists()


KILLED = """
import json, os, signal, sys
from pathlib import Path
from pytest_entropy.state.store import COMPILED, POOL, Write, commit, snapshot

old, new = Path(sys.argv[1]), Path(sys.argv[2])
target = str((old / "compiled.json").resolve())
real = os.replace


def replace(source, destination, **kwargs):
    if os.path.abspath(destination) == target and str(source).endswith((".tmp", ".staged")):
        os.kill(os.getpid(), signal.SIGKILL)  # killed between the pool and the artifact
    real(source, destination, **kwargs)


os.replace = replace
reads = [snapshot(old / POOL.filename, POOL), snapshot(old / COMPILED.filename, COMPILED)]
commit(reads, [
    Write(old / POOL.filename, POOL, json.loads((new / POOL.filename).read_text())),
    Write(old / COMPILED.filename, COMPILED, json.loads((new / COMPILED.filename).read_text())),
])
"""


def _kill_a_writer_between_the_renames(old: Path, new: Path) -> None:
    """Run KILLED: a commit of ``new``'s files into ``old`` that SIGKILLs itself after the
    pool's rename."""
    done = subprocess.run(
        [sys.executable, "-c", KILLED, str(old), str(new)],
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX")
def test_a_writer_killed_between_the_renames_is_rolled_back(states: tuple[Path, Path]) -> None:
    old, new = states
    before = _files(old)
    _kill_a_writer_between_the_renames(old, new)
    # The kill came after the pool's rename: on disk, for now, a new pool beside the old artifact.
    assert (old / POOL.filename).read_bytes() == (new / POOL.filename).read_bytes()
    assert any(name.startswith(JOURNAL_PREFIX) for name in os.listdir(old))
    # The next command that takes the two locks rolls it back before it reads anything.
    reads = [snapshot(old / POOL.filename, POOL), snapshot(old / COMPILED.filename, COMPILED)]
    assert commit(reads, []) is None  # what it had read changed under it: computed again
    assert _files(old) == before


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX")
def test_the_roll_back_leaves_what_another_writer_wrote_since(
    states: tuple[Path, Path],
) -> None:
    """After the kill, a writer that knows no journal (the reference) replaces the pool; the
    roll-back must not put the old pool back over it."""
    old, new = states
    before = _files(old)
    _kill_a_writer_between_the_renames(old, new)
    theirs = before["observation-pool.json"][0].replace(b'"version": 1', b'"version":  1')
    replacement = old / "theirs.tmp"
    replacement.write_bytes(theirs)
    os.replace(replacement, old / POOL.filename)
    reads = [snapshot(old / POOL.filename, POOL), snapshot(old / COMPILED.filename, COMPILED)]
    commit(reads, [])
    after = _files(old)
    assert after["observation-pool.json"][0] == theirs
    assert after["compiled.json"] == before["compiled.json"]
    assert after["listing"] == before["listing"]  # no journal, staged file or backup left


def test_a_single_write_is_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One file changed: one atomic rename, as before, and no journal or backup left."""
    state = tmp_path / "state"
    assert _compile(state, FIRST) == 0
    assert sorted(os.listdir(state)) == [".gitignore", "observation-pool.json"]
    shutil.rmtree(state)
