"""No command fetches a ``$ref`` outside its schema (hardening round two, item 1).

A listener on 127.0.0.1 accepts connections, counts them and never answers: a command that
fetched would both show in the count and hang until the subprocess timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.process_support import Listener, entropy_process

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "corpora" / "demo"
SESSIONS = str(DEMO / "sessions")
# Far below a hang: every command here finishes in a few seconds on a busy machine.
TIMEOUT = 60
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


@pytest.fixture
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.close()


def hostile_surface(tmp_path: Path, port: int) -> tuple[Path, str, str]:
    """The demo surface with the title of the action the demo compile tightens behind an
    http ref and a file ref, and a search property behind the file ref.

    The file holds a schema every recorded value violates, so reading it would change the
    verdicts as well as the count.
    """
    remote = f"http://127.0.0.1:{port}/schemas/title.json"
    local_file = tmp_path / "integer.json"
    local_file.write_text('{"type": "integer"}', encoding="utf-8")
    local = local_file.as_uri()
    surface = json.loads((DEMO / "surface.json").read_text(encoding="utf-8"))
    for action in surface["actions"]:
        properties = action["inputSchema"]["properties"]
        if action["ref"] == "mcp.report.render":
            properties["title"] = {"allOf": [{"$ref": remote}, {"$ref": local}]}
        if action["ref"] == "mcp.notes.search":
            properties["query"] = {"$ref": local}
    path = tmp_path / "surface.json"
    path.write_text(json.dumps(surface), encoding="utf-8")
    return path, remote, local


def entropy(*argv: str) -> subprocess.CompletedProcess[str]:
    return entropy_process(argv, timeout=TIMEOUT, env=ENV)


def test_no_command_fetches_an_external_ref(listener: Listener, tmp_path: Path) -> None:
    surface, remote, local = hostile_surface(tmp_path, listener.port)
    state = tmp_path / "state"
    compiled = entropy(
        "compile", "--sessions", SESSIONS, "--surface", str(surface),
        "--state-dir", str(state), "--write", "--json",
    )  # fmt: skip
    assert compiled.returncode == 0, compiled.stderr
    result: dict[str, Any] = json.loads(compiled.stdout)
    assert result["status"] == "compiled"  # an unenforceable ref never fails the gate
    assert result["externalRefs"] == sorted([remote, local])
    text = entropy("compile", "--sessions", SESSIONS, "--surface", str(surface))
    assert "2 schema $ref target(s) lie outside their schema" in text.stdout
    assert repr(remote) in text.stdout

    trial = entropy(
        "trial", "--sessions", SESSIONS, "--surface", str(surface), "--state-dir", str(state)
    )
    assert trial.returncode == 0, trial.stderr
    assert "lie outside their schema; they are never fetched" in trial.stdout

    watched = entropy(
        "watch", "--once", "--sessions", SESSIONS, "--surface", str(surface),
        "--state-dir", str(tmp_path / "watched"), "--json",
    )  # fmt: skip
    assert watched.returncode == 0, watched.stderr
    events = [json.loads(line) for line in watched.stdout.splitlines() if line.startswith("{")]
    unenforced = [event for event in events if event.get("event") == "unenforced"]
    assert len(unenforced) == 1
    assert repr(remote) in unenforced[0]["text"]

    certified = entropy(
        "certify", "--sessions", SESSIONS, "--surface", str(surface), "--trial",
        "--artifact", str(state / "compiled.json"), "--format", "json",
    )  # fmt: skip
    assert certified.returncode in (0, 1), certified.stderr
    checks = {c["id"]: c for c in json.loads(certified.stdout)["evaluation"]["checks"]}
    assert checks["trial-mode"]["passed"], checks["trial-mode"]  # the trial replayed, offline

    host = (
        "import json, sys\n"
        "from pytest_entropy.core.enforce import validate_call\n"
        "live = json.load(open(sys.argv[1]))\n"
        "print(json.dumps([validate_call('mcp.report.render', {'format': 'pdf', 'title': 7},"
        " live, None).to_json(), validate_call('mcp.notes.search', {'query': 'x'}, live,"
        " None).to_json()]))\n"
    )
    hosted = subprocess.run(
        [sys.executable, "-c", host, str(surface)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        env=ENV,
    )
    assert hosted.returncode == 0, hosted.stderr
    assert json.loads(hosted.stdout) == [
        {"accepted": True, "externalRefs": sorted([remote, local])},
        {"accepted": True, "externalRefs": [local]},
    ]
    assert listener.connections == []  # zero requests, from every command
