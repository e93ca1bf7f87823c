"""Requests a replay makes to ``$ref`` targets outside the schema, and the time it takes.

    python bench/no_fetch.py [--answer] [--timeout 30] [--python PYTHON] [--path CHECKOUT]

Serves on 127.0.0.1 a listener that counts every connection: silent by default (accepts and
never answers, as a hostile or dead server would), or with ``--answer`` a tiny HTTP server
that returns ``{}`` (to count the requests a fetching build makes). The demo surface gets
its ``mcp.report.render`` title behind an http ``$ref`` and a ``file://`` ``$ref``; then
``compile --write``, ``trial``, ``watch --once``, ``certify --trial`` and 1,000
``validate_call`` run against it, each in its own process under ``--timeout``. Prints
Markdown for ``docs/reliability.md``: per command the exit code, the seconds and the
requests the listener saw.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.process_support import Listener, timed_run  # noqa: E402

DEMO = REPO / "corpora" / "demo"
HOST_SCRIPT = """
import json, sys
from pytest_entropy.core.enforce import validate_call
live = json.load(open(sys.argv[1]))
for n in range(1000):
    validate_call("mcp.report.render", {"format": "pdf", "title": str(n)}, live, None)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answer", action="store_true", help="answer {} instead of hanging")
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--path", default=str(REPO), help="checkout to run (PYTHONPATH)")
    args = parser.parse_args()
    listener = Listener(args.answer)
    env = {**os.environ, "PYTHONPATH": args.path, "PYTHONWARNINGS": "ignore"}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        strict = root / "integer.json"
        strict.write_text('{"type": "integer"}', encoding="utf-8")
        surface = json.loads((DEMO / "surface.json").read_text(encoding="utf-8"))
        for action in surface["actions"]:
            if action["ref"] == "mcp.report.render":
                action["inputSchema"]["properties"]["title"] = {
                    "allOf": [
                        {"$ref": f"http://127.0.0.1:{listener.port}/title.json"},
                        {"$ref": strict.as_uri()},
                    ]
                }
        surface_path = root / "surface.json"
        surface_path.write_text(json.dumps(surface), encoding="utf-8")
        sessions, state = str(DEMO / "sessions"), str(root / "state")
        common = ["--sessions", sessions, "--surface", str(surface_path)]
        runs = {
            "compile --write": ["compile", *common, "--state-dir", state, "--write"],
            "trial": ["trial", *common, "--state-dir", state],
            "watch --once": ["watch", "--once", *common, "--state-dir", str(root / "w")],
            "certify --trial": [
                "certify",
                *common,
                "--trial",
                "--artifact",
                state + "/compiled.json",
                "--format",
                "json",
            ],
        }
        print("| command | exit | seconds | requests to the ref's server |")
        print("| --- | ---: | ---: | ---: |")
        host = ["-c", HOST_SCRIPT, str(surface_path)]
        for name, argv in [*runs.items(), ("validate_call x 1,000", None)]:
            before = listener.count
            command = [args.python, *(["-m", "pytest_entropy", *argv] if argv else host)]
            # cwd: not this checkout, where -m would import it from the working directory.
            done, seconds = timed_run(command, timeout=args.timeout, cwd=tmp, env=env)
            code = str(done.returncode) if done else f"hung (killed at {args.timeout:g} s)"
            print(f"| `{name}` | {code} | {seconds:.2f} | {listener.count - before} |")


if __name__ == "__main__":
    main()
