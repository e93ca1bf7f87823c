"""Hardening round two for the state store: non-regular files, unusable directories, locks,
documents the loader would reject, and what an import hides (issue 12, items 3, 4, 6, 10, 11).
"""

from __future__ import annotations

import errno
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.canonical import schema_digest
from pytest_entropy.state.lock import process_start_epoch, read_owner, state_lock
from pytest_entropy.state.store import (
    COMPILED,
    POOL,
    StoreError,
    StoreLockTimeout,
    document_text,
    load,
    save,
    write_file_atomic,
)
from tests.process_support import entropy_process

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SESSIONS = str(DEMO / "sessions")
SURFACE = str(DEMO / "surface.json")
# Far longer than any of these commands takes; a hang on a FIFO never ends at all.
BOUND_SECONDS = 60

fifo_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def cli_process(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a child process, bounded: a hang fails the test instead of stalling it."""
    return entropy_process(argv, timeout=BOUND_SECONDS, cwd=cwd)


def declared() -> dict[str, Any]:
    surface = json.loads(Path(SURFACE).read_text(encoding="utf-8"))
    return {action["ref"]: action["inputSchema"] for action in surface["actions"]}


def peer_artifact(
    *, quarantined: tuple[str, ...] = (), before: Any = 1.0, overlays: tuple[str, ...] = ()
) -> dict[str, Any]:
    schemas = declared()
    return {
        "version": 1,
        "metricVersion": 2,
        "actions": [
            {
                "ref": ref,
                "inputSchema": schemas[ref],
                "baseSchemaDigest": schema_digest(schemas[ref]),
            }
            for ref in overlays
        ],
        "quarantined": [
            {"ref": ref, "baseSchemaDigest": schema_digest(schemas[ref])} for ref in quarantined
        ],
        "applied": [],
        "gate": {"passed": True, "beforeScore": before, "afterScore": 1.0, "reasons": []},
        "evidenceDigest": "peer",
    }


# ------------------------------------------------------- item 3: non-regular state files


@fifo_only
@pytest.mark.parametrize(
    ("name", "command"),
    [
        ("compiled.json", "status"),
        ("compiled.json", "compile"),
        ("compiled.json", "import"),
        ("compiled.json", "watch"),
        ("observation-pool.json", "compile"),
        ("observation-pool.json", "watch"),
    ],
)
def test_a_fifo_at_a_state_path_is_damage_reported_at_once(
    tmp_path: Path, name: str, command: str
) -> None:
    state = tmp_path / ".entropy"
    state.mkdir()
    fifo = state / name
    os.mkfifo(fifo)
    peer = tmp_path / "peer.json"
    peer.write_text(json.dumps(peer_artifact(quarantined=("pi.edit",))), encoding="utf-8")
    argv = {
        "status": ["status", "--sessions", SESSIONS, "--surface", SURFACE],
        "compile": ["compile", "--sessions", SESSIONS, "--surface", SURFACE, "--write"],
        "import": ["import", str(peer), "--surface", SURFACE],
        "watch": ["watch", "--sessions", SESSIONS, "--surface", SURFACE, "--once"],
    }[command]
    started = time.monotonic()
    done = cli_process(*argv, "--state-dir", str(state), cwd=tmp_path)
    assert time.monotonic() - started < BOUND_SECONDS
    shown = done.stdout + done.stderr
    assert "Traceback" not in shown
    assert "is a FIFO" in shown and str(fifo) in shown, shown
    if command in ("compile", "import"):
        assert done.returncode == 2, shown
    assert os.path.exists(fifo) and not fifo.is_file()  # left exactly as it was
    assert not [p for p in state.iterdir() if p.name.endswith(".lock")]  # no lock left held


@fifo_only
def test_a_fifo_as_a_lock_owner_record_does_not_hang(tmp_path: Path) -> None:
    lock = tmp_path / "compiled.lock"
    lock.mkdir()
    os.mkfifo(lock / "owner")
    code = (
        "import sys; from pathlib import Path;"
        "from pytest_entropy.state.store import COMPILED, StoreLockTimeout, load;"
        "from pytest_entropy.state.lock import state_lock\n"
        "try:\n"
        f"    with state_lock(Path({str(tmp_path)!r}), 'compiled.lock', 'timeout'): pass\n"
        "except StoreLockTimeout as error: print(error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=BOUND_SECONDS
    )
    assert "no readable owner record" in done.stdout, done.stdout + done.stderr


@fifo_only
def test_atomic_write_refuses_to_replace_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pool.json"
    os.mkfifo(fifo)
    with pytest.raises(StoreError, match="refusing to replace a FIFO"):
        write_file_atomic(fifo, "{}\n")
    assert not fifo.is_file() and fifo.exists()


def test_a_directory_at_the_artifact_path_names_it(tmp_path: Path) -> None:
    (tmp_path / "compiled.json").mkdir()
    error = load(tmp_path, COMPILED).error
    assert error is not None
    assert error.startswith("compiled surface is unreadable: not a regular file")
    assert "is a directory" in error


# ------------------------------------------- item 6: unusable state directories are exit 2


@pytest.mark.parametrize("command", ["import", "compile", "watch"])
@pytest.mark.parametrize("layout", ["state dir is a file", "parent is a file"])
def test_a_file_where_the_state_directory_should_be_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, layout: str
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory", encoding="utf-8")
    state = blocker if layout == "state dir is a file" else blocker / "state"
    peer = tmp_path / "peer.json"
    peer.write_text(json.dumps(peer_artifact(quarantined=("pi.edit",))), encoding="utf-8")
    argv = {
        "import": ["import", str(peer), "--surface", SURFACE],
        "compile": ["compile", "--sessions", SESSIONS, "--surface", SURFACE, "--write"],
        "watch": ["watch", "--sessions", SESSIONS, "--surface", SURFACE, "--once"],
    }[command]
    code, out, err = cli(capsys, *argv, "--state-dir", str(state))
    assert "Traceback" not in err and "internal error" not in err
    assert f"{blocker} is a file, not a directory" in out + err
    if command != "watch":  # watch reports the tick's failure as a notice and carries on
        assert code == 2, err
    assert blocker.read_text(encoding="utf-8") == "not a directory"


def test_a_read_only_state_directory_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / ".entropy"
    state.mkdir()
    # Root ignores permission bits, so the refusal a read-only directory gives is simulated.
    real_mkdir, real_open = os.mkdir, os.open

    def refuse(path: Any) -> None:
        if str(path).startswith(str(state)):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))

    def mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
        refuse(path)
        real_mkdir(path, *args, **kwargs)

    def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT:
            refuse(path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", mkdir)
    monkeypatch.setattr(os, "open", open_)
    peer = tmp_path / "peer.json"
    peer.write_text(json.dumps(peer_artifact(quarantined=("pi.edit",))), encoding="utf-8")
    for argv in (
        ["import", str(peer), "--surface", SURFACE],
        ["compile", "--sessions", SESSIONS, "--surface", SURFACE, "--write"],
    ):
        code, _, err = cli(capsys, *argv, "--state-dir", str(state))
        assert code == 2, err
        assert str(state / "compiled.lock") in err or str(state) in err
        assert "Permission denied (the directory is read-only" in err
        assert "Traceback" not in err


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs a non-root POSIX user")
def test_a_really_read_only_state_directory_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / ".entropy"
    state.mkdir()
    peer = tmp_path / "peer.json"
    peer.write_text(json.dumps(peer_artifact(quarantined=("pi.edit",))), encoding="utf-8")
    state.chmod(0o500)
    try:
        code, _, err = cli(
            capsys, "import", str(peer), "--surface", SURFACE, "--state-dir", str(state)
        )
    finally:
        state.chmod(0o700)
    assert code == 2 and "Permission denied" in err and "Traceback" not in err


# ------------------------------------------------------------------------- item 10: locks


def test_our_owner_record_keeps_the_reference_layout_and_names_the_host(tmp_path: Path) -> None:
    with state_lock(tmp_path, "compiled.lock", "timeout") as token:
        text = (tmp_path / "compiled.lock" / "owner").read_text(encoding="utf-8")
        token_line, pid, created, rest = text.split("\n")
        assert token_line == token and rest == ""
        assert int(pid) == os.getpid() and float(created) > 0
        owner = read_owner(tmp_path / "compiled.lock")
        assert owner is not None and owner.host is not None
        assert owner.host in socket.gethostname() or owner.host == "unknown-host"


@pytest.mark.skipif(process_start_epoch(os.getpid()) is None, reason="no process start times")
def test_a_lock_whose_pid_was_reused_is_broken_at_once(tmp_path: Path) -> None:
    # The recorded pid runs, but that process started after the lock was taken: not its owner.
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock = tmp_path / "compiled.lock"
        lock.mkdir()
        created = int(time.time() * 1000) - 20_000
        (lock / "owner").write_text(f"reference-token\n{sleeper.pid}\n{created}\n", "utf-8")
        started = time.monotonic()
        save(tmp_path, COMPILED, json.loads(json.dumps(peer_artifact())))
        assert time.monotonic() - started < 5
        assert not lock.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_live_lock_times_out_with_its_path_owner_and_remedy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / ".entropy"
    lock = state / "compiled.lock"
    lock.mkdir(parents=True)
    started = process_start_epoch(os.getpid())
    created = int((started + 2 if started is not None else time.time()) * 1000)
    (lock / "owner").write_text(f"held-by-test\n{os.getpid()}\n{created}\n", "utf-8")
    peer = tmp_path / "peer.json"
    peer.write_text(json.dumps(peer_artifact(quarantined=("pi.edit",))), encoding="utf-8")
    code, _, err = cli(capsys, "import", str(peer), "--surface", SURFACE, "--state-dir", str(state))
    assert code == 2, err  # a usage problem, not a gate failure (it was exit 1)
    assert "Timed out waiting for the compiled entropy surface lock" in err
    assert str(lock) in err
    assert f"held by pid {os.getpid()} on this host (running)" in err
    assert f"rm -r '{lock}'" in err
    assert (lock / "owner").read_text(encoding="utf-8").startswith("held-by-test\n")


def test_a_lock_held_on_another_host_is_never_broken(tmp_path: Path) -> None:
    lock = tmp_path / "observation-pool.lock"
    lock.mkdir()
    old = int(time.time() * 1000) - 3_600_000
    (lock / "owner").write_text(f"abc@elsewhere-host\n999999999\n{old}\n", "utf-8")
    with pytest.raises(StoreLockTimeout) as raised:
        save(tmp_path, POOL, {"version": 1, "tracked": {}, "entries": []})
    assert "on host elsewhere-host (cannot be checked from this host)" in str(raised.value)
    assert lock.exists()


# ------------------------------------------- item 4: never write what the loader rejects


def test_a_document_the_loader_rejects_is_never_written(tmp_path: Path) -> None:
    artifact = peer_artifact()
    artifact["gate"]["beforeScore"] = float("inf")
    with pytest.raises(StoreError, match=r"gate\.beforeScore is a number JSON cannot represent"):
        document_text(tmp_path / "compiled.json", COMPILED, artifact)
    with pytest.raises(StoreError, match="nothing was written"):
        save(tmp_path, COMPILED, artifact)
    assert not (tmp_path / "compiled.json").exists()


def test_importing_an_overflowing_gate_score_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / ".entropy"
    peer = tmp_path / "peer.json"
    text = json.dumps(peer_artifact(quarantined=("pi.edit",), before=123.0))
    peer.write_text(text.replace("123.0", "1e400"), encoding="utf-8")
    code, _, err = cli(capsys, "import", str(peer), "--surface", SURFACE, "--state-dir", str(state))
    assert code == 2, err
    assert "gate.beforeScore is a number JSON cannot represent" in err
    assert not (state / "compiled.json").exists()
    # The store is still usable: a later compile and import work.
    code, _, err = cli(
        capsys, "compile", "--sessions", SESSIONS, "--surface", SURFACE, "--state-dir", str(state),
        "--write",
    )  # fmt: skip
    assert code == 0, err
    assert load(state, COMPILED).error is None


# ------------------------------------------------------ item 11: what an import hides


def test_import_names_every_adopted_quarantine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / ".entropy"
    peer = tmp_path / "peer.json"
    everything = tuple(declared())
    peer.write_text(json.dumps(peer_artifact(quarantined=everything)), encoding="utf-8")
    code, out, err = cli(
        capsys, "import", str(peer), "--surface", SURFACE, "--state-dir", str(state)
    )
    assert code == 0, err
    hidden = [line for line in out.splitlines() if line.startswith("adopted quarantines")]
    assert hidden == [
        f"adopted quarantines (these tools are now hidden): {', '.join(sorted(everything))}"
    ]


def test_import_no_quarantines_keeps_overlays_and_hides_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / ".entropy"
    peer = tmp_path / "peer.json"
    peer.write_text(
        json.dumps(peer_artifact(quarantined=("pi.edit", "pi.bash"), overlays=("pi.read",))),
        encoding="utf-8",
    )
    code, out, err = cli(
        capsys, "import", str(peer), "--surface", SURFACE, "--state-dir", str(state),
        "--no-quarantines", "--json",
    )  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    assert result["adoptedQuarantines"] == 0 and result["quarantined"] == 0
    assert result["refusedQuarantines"] == 2 and result["adoptedQuarantineRefs"] == []
    assert result["adoptedOverlays"] == 1
    stored = load(state, COMPILED).file
    assert stored is not None and stored["quarantined"] == []
    assert [entry["ref"] for entry in stored["actions"]] == ["pi.read"]
