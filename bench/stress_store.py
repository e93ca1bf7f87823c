"""Stress the state store: concurrent compilers, and writers killed with SIGKILL mid-save.

    python bench/stress_store.py [--writers 4] [--rounds 25] [--kills 200] [--seed 7]

1. *Concurrency.* ``--writers`` processes run ``pytest-entropy compile --write`` into one
   state directory at the same time, ``--rounds`` times each, on different slices of the
   demo corpus (so they write different artifacts and pools). Afterwards, and after every
   round, ``compiled.json`` and ``observation-pool.json`` must load without error. A lock
   timeout is a valid outcome (it is reported by the CLI and counted here), a torn or
   invalid file is not.
2. *Crash safety.* A writer process saves artifact A and artifact B alternately, as fast as
   it can, through the locked store. It is killed with SIGKILL after a random delay; the
   file must then hold exactly A's bytes or B's bytes. The harness clears the dead
   writer's lock between trials (the store itself breaks a dead owner's lock only after
   30 s). The same is done for the observation pool.

Prints the counts as Markdown for ``docs/reliability.md``. POSIX only.
"""

from __future__ import annotations

import argparse
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
DEMO = REPO / "corpora" / "demo"

WRITER = r"""
import sys
from pathlib import Path
from pytest_entropy.store import COMPILED, POOL, save, StoreError
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


def concurrency(work: Path, writers: int, rounds: int) -> dict[str, int]:
    state = work / "concurrent-state"
    sessions = sorted((DEMO / "sessions").glob("*.jsonl"))
    counts = {
        "runs": 0,
        "compiled or converged": 0,
        "rejected": 0,
        "lock timeouts": 0,
        "other errors": 0,
        "invalid files after a round": 0,
    }
    for _ in range(rounds):
        processes = []
        for index in range(writers):
            chosen = [str(p) for p in sessions[: 1 + index % len(sessions)]]
            processes.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "pytest_entropy",
                        "compile",
                        "--sessions",
                        *chosen,
                        "--surface",
                        str(DEMO / "surface.json"),
                        "--state-dir",
                        str(state),
                        "--write",
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        for process in processes:
            _, err = process.communicate()
            counts["runs"] += 1
            if process.returncode == 0:
                counts["compiled or converged"] += 1
            elif process.returncode == 1 and "Timed out waiting" in err:
                counts["lock timeouts"] += 1
            elif process.returncode == 1:
                counts["rejected"] += 1
            else:
                counts["other errors"] += 1
                print(err, file=sys.stderr)
        if not all(_loads_cleanly(state)):
            counts["invalid files after a round"] += 1
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
        import json

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
    import json

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
            title = f"{args.writers} concurrent compilers x {args.rounds} rounds"
            print(table(title, concurrency(work, args.writers, args.rounds)))
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
