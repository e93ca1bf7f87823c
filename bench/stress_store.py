"""Stress the state store: concurrent compilers and importers, and writers killed mid-save.

    python bench/stress_store.py [--writers 4] [--importers 2] [--rounds 25] [--kills 200]
                                 [--scale 1] [--import-delay 0] [--parts ...]

1. *Concurrency.* ``--writers`` processes run ``pytest-entropy compile --write`` into one
   state directory at the same time, ``--rounds`` times each, on different slices of the
   demo corpus (so they write different artifacts and pools), while ``--importers``
   processes import peer artifacts into the same directory, each adopting one entry (a
   quarantine or an enum overlay) on a tool no session calls. After every round,
   ``compiled.json`` and ``observation-pool.json`` must parse (not torn) and load (not
   invalid), every entry an import reported as adopted must still be in ``compiled.json``,
   and every session file of a compile that exited 0 must be tracked in the pool: anything
   missing is a lost update. A lock timeout is a valid outcome (reported by the CLI with
   exit 2 and counted here); a torn, invalid or lost file is not.
2. *Crash safety.* A writer process saves artifact A and artifact B alternately, as fast as
   it can, through the locked store. It is killed with SIGKILL after a random delay; the
   file must then hold exactly A's bytes or B's bytes. The harness clears the dead
   writer's lock between trials (the store itself breaks a dead owner's lock only after
   30 s). The same is done for the observation pool.

Prints the counts as Markdown for ``docs/reliability.md``. POSIX only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.store_support import DEMO, peer_for, surface_with_spare_tools  # noqa: E402

WRITER = r"""
import sys
from pathlib import Path
from pytest_entropy.state.store import COMPILED, POOL, save, StoreError
import json
kind = {"compiled": COMPILED, "pool": POOL}[sys.argv[2]]
values = [json.loads(Path(p).read_text()) for p in sys.argv[3:5]]
state = Path(sys.argv[1])
print("ready", flush=True)
i = 0
while True:
    try:
        save(state, kind, values[i % 2])
    except StoreError:
        pass
    i += 1
"""


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_entropy", *args], capture_output=True, text=True, check=False
    )


def _loads_cleanly(state: Path) -> tuple[bool, bool]:
    from pytest_entropy.state.store import COMPILED, POOL, load

    return load(state, COMPILED).error is None, load(state, POOL).error is None


SPARE_TOOLS = 64


def _session_digest(path: str) -> str:
    """The pool's window digest of one session file (what the pool keeps of it)."""
    from pytest_entropy.core.pool import summarize_window
    from pytest_entropy.sources.scan import read_file_evidence

    evidence = read_file_evidence(path)
    return summarize_window(path, evidence.value_observations if evidence else []).digest


def _state_check(state: Path) -> tuple[int, int, set[str], set[str]]:
    """(torn files, invalid files, adopted refs, session digests kept) of a state dir.

    The pool tracks its 16 newest sessions and keeps older ones as digests only ("baked"),
    so a session is kept when its window digest is tracked or baked.
    """
    from pytest_entropy.state.store import COMPILED, POOL, load

    torn = invalid = 0
    for name in ("compiled.json", "observation-pool.json"):
        path = state / name
        if path.exists():
            try:
                json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                torn += 1
    compiled, pool = load(state, COMPILED), load(state, POOL)
    invalid = int(compiled.error is not None) + int(pool.error is not None)
    artifact = compiled.file or {}
    refs = {e["ref"] for e in [*artifact.get("actions", []), *artifact.get("quarantined", [])]}
    kept = {session["digest"] for session in (pool.file or {}).get("tracked", [])}
    kept.update((pool.file or {}).get("baked", []))
    return torn, invalid, refs, kept


def concurrency(
    work: Path, writers: int, importers: int, rounds: int, scale: int = 1, import_delay: float = 0
) -> dict[str, int]:
    state = work / "concurrent-state"
    surface = surface_with_spare_tools(work, SPARE_TOOLS, "spare-surface.json")
    sessions = sorted((DEMO / "sessions").glob("*.jsonl"))
    counts = {
        "compile runs": 0,
        "compiled or converged": 0,
        "rejected": 0,
        "import runs": 0,
        "imports that adopted their entry": 0,
        "lock timeouts": 0,
        "conflicts (state kept changing)": 0,
        "other errors": 0,
        "torn files after a round": 0,
        "invalid files after a round": 0,
        "adopted entries lost": 0,
        "sessions lost from the pool": 0,
    }
    adopted: set[str] = set()
    compiled_sessions: set[str] = set()
    peers = 0
    texts = [path.read_bytes() for path in sessions]
    for round_ in range(rounds):
        processes = []
        for index in range(writers):
            # Each writer compiles its own copies (distinct files, so distinct pool sessions),
            # each demo session repeated ``scale`` times so the compile computes for longer.
            chosen = []
            for offset in range(1 + index % len(sessions)):
                copy = work / "sessions" / f"r{round_}-w{index}-{offset}.jsonl"
                copy.parent.mkdir(exist_ok=True)
                tag = f"r{round_}w{index}o{offset}".encode()
                text = texts[(round_ + index + offset) % len(texts)] * scale
                # Distinct values, so each copy is a distinct pool session (same values would
                # be the same window digest, which the pool rightly merges only once).
                text = text.replace(b'"query":"', b'"query":"' + tag + b" ")
                copy.write_bytes(text.replace(b'"path":"src/', b'"path":"src' + tag + b"/"))
                chosen.append(str(copy))
            command = ["compile", "--sessions", *chosen, "--surface", str(surface)]
            processes.append(("compile", chosen, command))
        for _ in range(importers):
            peer, ref = peer_for(surface, peers, work, tools=SPARE_TOOLS)
            peers += 1
            processes.append(("import", [ref], ["import", str(peer), "--surface", str(surface)]))
        started = []
        for kind, items, command in processes:
            if kind == "import" and import_delay:
                time.sleep(import_delay)  # land while the compiles compute
            started.append(
                (
                    kind,
                    items,
                    subprocess.Popen(
                        [sys.executable, "-m", "pytest_entropy", *command]
                        + ["--state-dir", str(state)]
                        + (["--write"] if kind == "compile" else []),
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        text=True,
                    ),
                )
            )
        for kind, items, process in started:
            out, err = process.communicate()
            counts[f"{kind} runs"] += 1
            if "Timed out waiting" in err:
                counts["lock timeouts"] += 1
            elif "while this command computed" in err:
                counts["conflicts (state kept changing)"] += 1
            elif process.returncode == 0 and kind == "import":
                if "adopted 1 overlays and 0 quarantines" in out or (
                    "adopted 0 overlays and 1 quarantines" in out
                ):
                    counts["imports that adopted their entry"] += 1
                    adopted.update(items)
            elif process.returncode == 0:
                counts["compiled or converged"] += 1
                compiled_sessions.update(_session_digest(item) for item in items)
            elif process.returncode == 1 and kind == "compile":
                counts["rejected"] += 1
            else:
                counts["other errors"] += 1
                print(err, file=sys.stderr)
        torn, invalid, refs, files = _state_check(state)
        counts["torn files after a round"] += torn
        counts["invalid files after a round"] += invalid
        counts["adopted entries lost"] = len(adopted - refs)
        counts["sessions lost from the pool"] = len(compiled_sessions - files)
    return counts


def crash(work: Path, kind: str, trials: int, rng: random.Random) -> dict[str, int]:
    from pytest_entropy.core.canonical import file_text

    state = work / f"crash-{kind}"
    first, second = work / f"{kind}-a.json", work / f"{kind}-b.json"
    if kind == "compiled":
        a = _cli(
            "compile",
            "--sessions",
            str(DEMO / "sessions"),
            "--surface",
            str(DEMO / "surface.json"),
            "--json",
        )
        artifact = json.loads(a.stdout)["artifact"]
        other = dict(artifact, evidenceDigest="second-artifact-" + "x" * 200)
        values = [artifact, other]
    else:
        from pytest_entropy.core.pool import merge_observation_window

        obs = [{"ref": "mcp.a", "key": "k", "value": f"v{i}"} for i in range(12)]
        values = [
            merge_observation_window(None, [{"file": "a", "observations": obs}]).file,
            merge_observation_window(None, [{"file": "b", "observations": obs[:5]}]).file,
        ]
    first.write_text(json.dumps(values[0]), encoding="utf-8")
    second.write_text(json.dumps(values[1]), encoding="utf-8")
    texts = {file_text(values[0]).encode(), file_text(values[1]).encode()}
    name = "compiled.json" if kind == "compiled" else "observation-pool.json"
    lock = "compiled.lock" if kind == "compiled" else "observation-pool.lock"
    counts = {
        "trials": 0,
        "old or new bytes": 0,
        "no file yet": 0,
        "torn or other bytes": 0,
        "trials leaving a temp file": 0,
    }
    for _ in range(trials):
        process = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(state), kind, str(first), str(second)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdout is not None
        process.stdout.readline()
        time.sleep(rng.uniform(0.0, 0.05))
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        counts["trials"] += 1
        target = state / name
        if not target.exists():
            counts["no file yet"] += 1
        elif target.read_bytes() in texts:
            counts["old or new bytes"] += 1
        else:
            counts["torn or other bytes"] += 1
        if any(p.name.endswith(".tmp") for p in state.iterdir()):
            counts["trials leaving a temp file"] += 1
        shutil.rmtree(state / lock, ignore_errors=True)  # the dead writer's lock
    return counts


def crash_watch(work: Path, trials: int, rng: random.Random) -> dict[str, int]:
    """SIGKILL a `watch --once` tick at a random moment; the state files must stay loadable."""
    sessions = work / "watch-sessions"
    sessions.mkdir(exist_ok=True)
    state = work / "watch-state"
    texts = [p.read_bytes() for p in sorted((DEMO / "sessions").glob("*.jsonl"))]
    counts = {
        "median tick (ms)": 0,
        "trials": 0,
        "killed mid-run": 0,
        "finished before the kill": 0,
        "state files that failed to load": 0,
    }
    command = [
        sys.executable,
        "-m",
        "pytest_entropy",
        "watch",
        "--sessions",
        str(sessions),
        "--surface",
        str(DEMO / "surface.json"),
        "--state-dir",
        str(state),
        "--once",
    ]
    # Calibrate: how long a whole tick takes here (start-up, read, compile, two saves), so
    # the kills land across all of it rather than mostly after it.
    (sessions / "live.jsonl").write_bytes(b"".join(texts))
    durations = []
    for _ in range(5):
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        durations.append(time.perf_counter() - started)
    tick = sorted(durations)[len(durations) // 2]
    counts["median tick (ms)"] = round(tick * 1000)
    shutil.rmtree(state, ignore_errors=True)
    for trial in range(trials):
        # Alternate the evidence so every tick has something new to merge and save.
        (sessions / "live.jsonl").write_bytes(b"".join(texts[: 1 + trial % len(texts)]))
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # From the first tenth of a tick (imports) to just past its median end.
        time.sleep(rng.uniform(0.1 * tick, 1.05 * tick))
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            counts["killed mid-run"] += 1
        else:
            counts["finished before the kill"] += 1
        process.wait()
        counts["trials"] += 1
        compiled_ok, pool_ok = _loads_cleanly(state)
        counts["state files that failed to load"] += int(not compiled_ok) + int(not pool_ok)
        for lock in ("compiled.lock", "observation-pool.lock"):
            shutil.rmtree(state / lock, ignore_errors=True)
    return counts


def table(title: str, counts: dict[str, int]) -> str:
    rows = "\n".join(f"| {key} | {value} |" for key, value in counts.items())
    return f"**{title}**\n\n| outcome | count |\n| --- | ---: |\n{rows}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--importers", type=int, default=2)
    parser.add_argument(
        "--scale", type=int, default=1, help="repeat each session this many times (longer compiles)"
    )
    parser.add_argument(
        "--import-delay", type=float, default=0.0, help="seconds between starting each import"
    )
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--watch-kills", type=int, default=100)
    parser.add_argument(
        "--parts",
        default="concurrency,artifact,pool,watch",
        help="comma-separated subset of concurrency, artifact, pool, watch",
    )
    args = parser.parse_args()
    if os.name != "posix":
        raise SystemExit("POSIX only (SIGKILL)")
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        started = time.monotonic()
        parts = set(args.parts.split(","))
        if "concurrency" in parts:
            title = (
                f"{args.writers} concurrent compilers and {args.importers} importers"
                f" x {args.rounds} rounds"
            )
            counts = concurrency(
                work, args.writers, args.importers, args.rounds, args.scale, args.import_delay
            )
            print(table(title, counts))
        if "artifact" in parts:
            title = f"SIGKILL during artifact saves ({args.kills} trials)"
            print(table(title, crash(work, "compiled", args.kills, rng)))
            # The next locked save sweeps what killed writers left behind.
            from pytest_entropy.state.store import COMPILED, load, save

            state = work / "crash-compiled"
            value = load(state, COMPILED).file
            if value is not None:
                save(state, COMPILED, value)
            left = [p.name for p in state.iterdir() if p.name.endswith(".tmp")]
            print(f"temp files left after the next save: {len(left)}\n")
        if "pool" in parts:
            title = f"SIGKILL during pool saves ({args.kills} trials)"
            print(table(title, crash(work, "pool", args.kills, rng)))
        if "watch" in parts:
            title = f"SIGKILL during watch ticks ({args.watch_kills} trials)"
            print(table(title, crash_watch(work, args.watch_kills, rng)))
        print(f"elapsed {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
