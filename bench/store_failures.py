"""How the state store fails: seconds to fail, exit codes and bytes written (issue 12).

    python bench/store_failures.py [--bound 20]

Each scenario runs the real CLI in a child process, killed after ``--bound`` seconds (a
hang shows as ``hung``):

* a FIFO at ``compiled.json`` / ``observation-pool.json`` under ``status``, ``compile
  --write``, ``import`` and ``watch --once`` (item 3);
* a state directory that is a file, or whose parent is a file, and a read-only state
  directory (item 6; the read-only case is skipped when running as root, which ignores
  permission bits);
* a lock left by a dead process 1 s ago, one whose pid now runs a younger process, and one
  held by a live process (item 10);
* importing a peer artifact whose ``gate.beforeScore`` is ``1e400``, then compiling (item 4).

Run it with ``PYTHONPATH`` set to another checkout to measure that one. Prints Markdown.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.process_support import timed_entropy  # noqa: E402

DEMO = REPO / "corpora" / "demo"
SESSIONS = str(DEMO / "sessions")
SURFACE = str(DEMO / "surface.json")
# The line worth showing from a command's output.
MARKERS = ("error", "FIFO", "unavailable", "Timed out", "adopted quarantines", "entropy:")


def _run(argv: list[str], cwd: Path, bound: float) -> tuple[str, float, str]:
    done, elapsed = timed_entropy(argv, timeout=bound, cwd=cwd)
    if done is None:
        return "hung", elapsed, ""
    text = (done.stderr + done.stdout).strip().splitlines()
    telling = [line for line in text if any(word in line for word in MARKERS)]
    last = (telling or text or [""])[0]
    if "Traceback" in done.stderr:
        last = "traceback: " + last
    return str(done.returncode), elapsed, last[:240]


def _peer(work: Path, before: str = "1.0") -> Path:
    from pytest_entropy.core.canonical import schema_digest

    schemas = {a["ref"]: a["inputSchema"] for a in json.loads(Path(SURFACE).read_text())["actions"]}
    artifact: dict[str, Any] = {
        "version": 1,
        "metricVersion": 2,
        "actions": [],
        "quarantined": [{"ref": "pi.edit", "baseSchemaDigest": schema_digest(schemas["pi.edit"])}],
        "applied": [],
        "gate": {"passed": True, "beforeScore": "B", "afterScore": 1.0, "reasons": []},
        "evidenceDigest": "peer",
    }
    path = work / f"peer-{before}.json"
    path.write_text(json.dumps(artifact).replace('"B"', before), encoding="utf-8")
    return path


def _commands(work: Path) -> dict[str, list[str]]:
    return {
        "status": ["status", "--sessions", SESSIONS, "--surface", SURFACE],
        "compile --write": ["compile", "--sessions", SESSIONS, "--surface", SURFACE, "--write"],
        "import": ["import", str(_peer(work)), "--surface", SURFACE],
        "watch --once": ["watch", "--sessions", SESSIONS, "--surface", SURFACE, "--once"],
    }


def _owner(lock: Path, pid: int, created_ms: int) -> None:
    lock.mkdir(parents=True)
    (lock / "owner").write_text(f"bench-token\n{pid}\n{created_ms}\n", encoding="utf-8")


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def scenarios(work: Path, bound: float) -> list[tuple[str, str, str, float, str]]:
    rows = []
    for name in ("compiled.json", "observation-pool.json"):
        for label, argv in _commands(work).items():
            if name == "observation-pool.json" and label in ("status", "import"):
                continue
            case = Path(tempfile.mkdtemp(dir=work))
            state = case / ".entropy"
            state.mkdir()
            os.mkfifo(state / name)
            code, seconds, last = _run([*argv, "--state-dir", str(state)], case, bound)
            rows.append((f"FIFO at {name}", label, code, seconds, last))
    for layout in ("state dir is a file", "parent of the state dir is a file", "read-only"):
        if layout == "read-only" and os.geteuid() == 0:
            rows.append((layout, "(all)", "skipped", 0.0, "root ignores permission bits"))
            continue
        for label, argv in _commands(work).items():
            if label == "status":
                continue
            case = Path(tempfile.mkdtemp(dir=work))
            blocker = case / "blocker"
            if layout == "read-only":
                blocker.mkdir()
                blocker.chmod(0o500)
                state = blocker
            else:
                blocker.write_text("x", encoding="utf-8")
                state = blocker if layout == "state dir is a file" else blocker / "state"
            code, seconds, last = _run([*argv, "--state-dir", str(state)], case, bound)
            if layout == "read-only":
                blocker.chmod(0o700)
            rows.append((layout, label, code, seconds, last))
    now = int(time.time() * 1000)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    time.sleep(0.2)
    try:
        for layout, pid, created in (
            ("lock of a dead process, 1 s old", _dead_pid(), now - 1_000),
            ("lock whose pid runs a younger process", sleeper.pid, now - 20_000),
            ("lock of a live process (this bench)", os.getpid(), now),
        ):
            case = Path(tempfile.mkdtemp(dir=work))
            _owner(case / ".entropy" / "compiled.lock", pid, created)
            argv = _commands(work)["import"]
            code, seconds, last = _run([*argv, "--state-dir", str(case / ".entropy")], case, bound)
            rows.append((layout, "import", code, seconds, last))
    finally:
        sleeper.kill()
        sleeper.wait()
    case = Path(tempfile.mkdtemp(dir=work))
    state = case / ".entropy"
    argv = ["import", str(_peer(work, "1e400")), "--surface", SURFACE, "--state-dir", str(state)]
    code, seconds, last = _run(argv, case, bound)
    written = (state / "compiled.json").stat().st_size if (state / "compiled.json").exists() else 0
    rows.append(("import of gate.beforeScore 1e400", f"import ({written} bytes written)", code,
                 seconds, last))  # fmt: skip
    code, seconds, last = _run(
        ["compile", "--sessions", SESSIONS, "--surface", SURFACE, "--state-dir", str(state),
         "--write"], case, bound,
    )  # fmt: skip
    rows.append(("... then", "compile --write", code, seconds, last))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bound", type=float, default=20.0)
    args = parser.parse_args()
    if os.name != "posix":
        raise SystemExit("POSIX only (FIFOs)")
    with tempfile.TemporaryDirectory() as tmp:
        rows = scenarios(Path(tmp), args.bound)
        work = str(Path(tmp).resolve())
    print("| condition | command | exit | seconds | last line of output |")
    print("| --- | --- | ---: | ---: | --- |")
    for condition, command, code, seconds, last in rows:
        shown = last.replace("|", "\\|").replace(work, "$WORK")
        print(f"| {condition} | {command} | {code} | {seconds:.2f} | {shown} |")


if __name__ == "__main__":
    main()
