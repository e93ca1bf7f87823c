"""The state store: exact load messages, no-op saves, damage never overwritten, the lock."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_entropy.core.canonical import file_text
from pytest_entropy.core.compiler import compile_entropy_surface
from pytest_entropy.core.pool import merge_observation_window
from pytest_entropy.state.lock import _pid_alive, process_start_epoch
from pytest_entropy.state.store import (
    COMPILED,
    POOL,
    StoreDamagedError,
    StoreError,
    StoreLockTimeout,
    document_bytes,
    document_text,
    load,
    save,
    state_lock,
    write_file_atomic,
)
from tests.vectors import cases_of

RATCHET = next(
    c
    for c in cases_of("compiler", "compileEntropySurface", key="kind")
    if c["id"] == "V2-CV-10:compile"
)


def ratchet_artifact() -> dict:
    given = RATCHET["input"]
    outcome = compile_entropy_surface(given["traces"], given["surface"], given.get("repairs"))
    assert outcome.artifact is not None
    return outcome.artifact


def test_roundtrip_and_noop_save(tmp_path: Path) -> None:
    # V2-CV-11: first save writes, load equals, an identical save is a no-op.
    artifact = ratchet_artifact()
    assert load(tmp_path, COMPILED).to_json() == {}
    assert save(tmp_path, COMPILED, artifact).written is True
    assert load(tmp_path, COMPILED).file == artifact
    assert save(tmp_path, COMPILED, artifact).written is False
    text = (tmp_path / "compiled.json").read_text(encoding="utf-8")
    assert text == RATCHET["expected"]["artifactFileText"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{ nope", "compiled surface is malformed JSON"),
        (b"{}", "compiled surface is invalid"),
        (b'{"version": NaN}', "compiled surface is malformed JSON"),
    ],
)
def test_damage_is_reported_and_never_overwritten(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "compiled.json"
    path.write_bytes(content)
    assert load(tmp_path, COMPILED).error == message
    with pytest.raises(StoreDamagedError, match=message):
        save(tmp_path, COMPILED, ratchet_artifact())
    assert path.read_bytes() == content
    assert not (tmp_path / "compiled.lock").exists()


def test_pool_store_messages(tmp_path: Path) -> None:
    merged = merge_observation_window(
        None, [{"file": "a.jsonl", "observations": [{"ref": "r", "key": "k", "value": "v"}]}]
    )
    assert save(tmp_path, POOL, merged.file).written is True
    assert load(tmp_path, POOL).file == merged.file
    assert save(tmp_path, POOL, merged.file).written is False
    (tmp_path / "observation-pool.json").write_text("{ nope", encoding="utf-8")
    assert load(tmp_path, POOL).error == "observation pool is malformed JSON"
    with pytest.raises(StoreDamagedError, match="observation pool is malformed JSON"):
        save(tmp_path, POOL, merged.file)


def test_unreadable_file_message(tmp_path: Path) -> None:
    (tmp_path / "compiled.json").mkdir()
    error = load(tmp_path, COMPILED).error
    assert error is not None
    assert error.startswith("compiled surface is unreadable: ")


def test_symlink_at_the_artifact_path_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(file_text(ratchet_artifact()), encoding="utf-8")
    (tmp_path / "compiled.json").symlink_to(target)
    error = load(tmp_path, COMPILED).error
    assert error is not None
    assert "symbolic link" in error
    with pytest.raises(StoreDamagedError):
        save(tmp_path, COMPILED, ratchet_artifact())
    assert (tmp_path / "compiled.json").is_symlink()


def test_permissions(tmp_path: Path) -> None:
    state = tmp_path / "state"
    save(state, COMPILED, ratchet_artifact())
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE((state / "compiled.json").stat().st_mode) == 0o600


def test_atomic_writer_never_clobbers_a_directory(tmp_path: Path) -> None:
    (tmp_path / "out.json").mkdir()
    with pytest.raises(StoreError, match="is a directory"):
        write_file_atomic(tmp_path / "out.json", "{}\n")
    assert write_file_atomic(tmp_path / "new" / "out.json", "{}\n") is True
    assert write_file_atomic(tmp_path / "new" / "out.json", "{}\n") is False
    assert [p.name for p in (tmp_path / "new").iterdir()] == ["out.json"]


def test_a_refused_pool_names_what_it_refused(tmp_path: Path) -> None:
    """A pool its own loader would reject (here the reference mode's negative total) is not
    written, and the message reads as English ("an observation pool")."""
    windows = [
        {
            "file": "a",
            "observations": [{"ref": "r", "key": "k", "value": n, "count": 2} for n in range(32)],
        },
        {"file": "b", "observations": [{"ref": "r", "key": "k", "value": "x", "count": 3}]},
    ]
    once = merge_observation_window(None, windows, drop_unloadable=False)
    again = merge_observation_window(
        once.file, [{"file": "a", "observations": []}], drop_unloadable=False
    )
    assert again.file["entries"][0]["total"] < 0
    with pytest.raises(StoreError, match=r"refusing to write an observation pool its own loader"):
        document_bytes(tmp_path / "pool.json", POOL, again.file)
    assert not (tmp_path / "pool.json").exists()


def test_a_document_is_written_as_the_bytes_of_its_text(tmp_path: Path) -> None:
    """The pool document (values with astral characters, whose ``str`` would take four bytes
    a character) goes to disk as UTF-8 bytes, the same bytes its text encodes to."""
    observation = {"ref": "r", "key": "k", "value": "x\U0001f600é", "count": 2}
    pool = merge_observation_window(None, [{"file": "s.jsonl", "observations": [observation]}])
    expected = file_text(pool.file).encode("utf-8")
    assert "\U0001f600".encode() in expected
    assert document_bytes(tmp_path / "pool.json", POOL, pool.file) == expected
    assert document_text(tmp_path / "pool.json", POOL, pool.file).encode("utf-8") == expected
    save(tmp_path, POOL, pool.file)
    assert (tmp_path / "observation-pool.json").read_bytes() == expected
    assert write_file_atomic(tmp_path / "raw.json", expected) is True
    assert write_file_atomic(tmp_path / "raw.json", expected.decode("utf-8")) is False
    assert (tmp_path / "raw.json").read_bytes() == expected


# ----------------------------------------------------------------------------- lock


def owner_record(lock: Path, token: str, pid: int, created_ms: float) -> None:
    lock.mkdir()
    (lock / "owner").write_text(f"{token}\n{pid}\n{int(created_ms)}\n", encoding="utf-8")


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_lock_record_format_and_release(tmp_path: Path) -> None:
    with state_lock(tmp_path, "compiled.lock", "timeout") as token:
        lines = (tmp_path / "compiled.lock" / "owner").read_text(encoding="utf-8").split("\n")
        assert lines[0] == token
        assert int(lines[1]) == os.getpid()
        assert abs(int(lines[2]) - time.time() * 1000) < 60_000
        assert lines[3] == ""
        assert stat.S_IMODE((tmp_path / "compiled.lock").stat().st_mode) == 0o700
    assert not (tmp_path / "compiled.lock").exists()


def test_stale_lock_of_a_dead_process_is_broken(tmp_path: Path) -> None:
    owner_record(tmp_path / "compiled.lock", "old", dead_pid(), time.time() * 1000 - 60_000)
    assert save(tmp_path, COMPILED, ratchet_artifact()).written is True
    assert not (tmp_path / "compiled.lock").exists()
    assert not [p for p in tmp_path.iterdir() if ".stale-" in p.name]


def long_running_pid() -> tuple[int, float]:
    """A live pid and a lock creation time after that process started (pid 1 on Linux)."""
    started = process_start_epoch(1)
    if started is not None and _pid_alive(1):
        return 1, started * 1000 + 2_000
    return os.getpid(), time.time() * 1000 - 1_000


def test_old_lock_of_a_live_process_is_never_broken(tmp_path: Path) -> None:
    pid, created = long_running_pid()
    owner_record(tmp_path / "compiled.lock", "live", pid, created)
    with pytest.raises(
        StoreLockTimeout, match="Timed out waiting for the compiled entropy surface lock"
    ):
        save(tmp_path, COMPILED, ratchet_artifact())
    assert (tmp_path / "compiled.lock" / "owner").read_text(encoding="utf-8").startswith("live\n")
    assert not (tmp_path / "compiled.json").exists()


def test_young_lock_of_a_dead_process_is_broken_at_once(tmp_path: Path) -> None:
    # The reference waits until such a lock is 30 s old; its owner is provably gone.
    owner_record(tmp_path / "observation-pool.lock", "young", dead_pid(), time.time() * 1000)
    started = time.monotonic()
    assert save(tmp_path, POOL, merge_observation_window(None, []).file).written is True
    assert time.monotonic() - started < 5
    assert not (tmp_path / "observation-pool.lock").exists()


def test_lock_without_owner_record_by_age(tmp_path: Path) -> None:
    lock = tmp_path / "compiled.lock"
    lock.write_text("not a directory", encoding="utf-8")
    with pytest.raises(StoreLockTimeout):
        save(tmp_path, COMPILED, ratchet_artifact())
    old = time.time() - 120
    os.utime(lock, (old, old))
    assert save(tmp_path, COMPILED, ratchet_artifact()).written is True
    assert not lock.exists()


def test_release_leaves_a_lock_that_is_no_longer_ours(tmp_path: Path) -> None:
    lock = tmp_path / "compiled.lock"
    with state_lock(tmp_path, "compiled.lock", "timeout"):
        (lock / "owner").write_text(f"someone-else\n{os.getpid()}\n0\n", encoding="utf-8")
    assert lock.exists()


def test_artifact_file_is_what_the_reference_reads(tmp_path: Path) -> None:
    save(tmp_path, COMPILED, ratchet_artifact())
    parsed = json.loads((tmp_path / "compiled.json").read_text(encoding="utf-8"))
    assert list(parsed) == [
        "version",
        "metricVersion",
        "actions",
        "quarantined",
        "applied",
        "gate",
        "evidenceDigest",
    ]


def test_a_killed_writers_temp_file_is_swept_by_the_next_save(tmp_path: Path) -> None:
    debris = tmp_path / ".compiled.json.0123456789abcdef.tmp"
    debris.write_text("{ half written", encoding="utf-8")
    other = tmp_path / ".unrelated.tmp"
    other.write_text("keep", encoding="utf-8")
    save(tmp_path, COMPILED, ratchet_artifact())
    assert not debris.exists()
    assert other.exists()
