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
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "corpora" / "demo"
HOST_SCRIPT = """
import json, sys
from pytest_entropy.core.enforce import validate_call
live = json.load(open(sys.argv[1]))
for n in range(1000):
    validate_call("mcp.report.render", {"format": "pdf", "title": str(n)}, live, None)
"""


class Listener:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.count = 0
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.count += 1
            if self.answer:
                connection.recv(65536)
                connection.sendall(
                    b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 2\r\n\r\n{}"
                )
                connection.close()
            else:
                self.held.append(connection)


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
        for name, argv in [*runs.items(), ("validate_call x 1,000", None)]:
            command = (
                [args.python, "-m", "pytest_entropy", *argv]
                if argv is not None
                else [args.python, "-c", HOST_SCRIPT, str(surface_path)]
            )
            before = listener.count
            started = time.monotonic()
            try:
                code = str(
                    subprocess.run(
                        command,
                        env=env,
                        cwd=tmp,  # not this checkout: -m would import it from the cwd
                        capture_output=True,
                        timeout=args.timeout,
                        check=False,
                    ).returncode
                )
            except subprocess.TimeoutExpired:
                code = f"hung (killed at {args.timeout:g} s)"
            seconds = time.monotonic() - started
            print(f"| `{name}` | {code} | {seconds:.2f} | {listener.count - before} |")


if __name__ == "__main__":
    main()
