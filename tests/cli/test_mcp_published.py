"""Live MCP servers beyond our own SDK server: one written with the standalone ``fastmcp``
package (in memory and over stdio), ours over streamable HTTP, and a published reference
server from PyPI (``mcp-server-time``), each compared with the file ``export`` writes."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from pytest_entropy import load_surface
from pytest_entropy.cli.app import main
from pytest_entropy.sources.mcp import http_server, stdio_server

pytestmark = pytest.mark.server  # live servers: subprocesses and a loopback HTTP server

REPO = Path(__file__).resolve().parents[2]
SERVER_ENV = {"PYTHONPATH": str(REPO)}


def _export(argv: list[str], out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["export", "--out", str(out), *argv]) == 0, capsys.readouterr().err
    capsys.readouterr()  # what export printed
    exported: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return exported


def _by_ref(surface: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted(surface["actions"], key=lambda action: action["ref"])


def _reference_fields(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The exported actions as the reference writes them (``ref`` and ``inputSchema``): our
    export also keeps each tool's description, title, ... (docs/decisions.md)."""
    return [{"ref": action["ref"], "inputSchema": action["inputSchema"]} for action in actions]


def test_a_standalone_fastmcp_server_in_memory_over_stdio_and_exported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("fastmcp", reason="the standalone fastmcp package is not installed")
    from tests.servers.fastmcp_server import server

    memory = load_surface(server)
    assert [action["ref"] for action in memory["actions"]] == ["book", "cancel"]
    book = memory["actions"][0]["inputSchema"]
    assert book["properties"]["room"]["enum"] == ["red", "blue"]
    assert book["required"] == ["room"]
    command = (sys.executable, "-m", "tests.servers.fastmcp_server")
    live = load_surface(stdio_server(*command, env=SERVER_ENV, timeout=60))
    assert live == memory
    argv = ["--mcp-env", f"PYTHONPATH={REPO}", "--mcp-timeout", "60", "--mcp", "--", *command]
    exported = _export(argv, tmp_path / "fastmcp.json", capsys)
    assert _reference_fields(exported["actions"]) == _by_ref(memory)
    assert exported["actions"] == _by_ref(load_surface(server, tool_fields=True))
    assert (
        main(["diff", str(tmp_path / "fastmcp.json"), "tests.servers.fastmcp_server:server"]) == 0
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def http_url() -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.servers.http_server", str(port)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                pytest.fail(f"the HTTP server exited: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("the HTTP server did not start listening within 60 s")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        assert process.stderr is not None
        process.stderr.close()


def test_a_streamable_http_server_lists_what_memory_lists(
    http_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.servers.echo_server import server

    memory = load_surface(server)
    assert load_surface(http_server(http_url, timeout=60)) == memory
    assert load_surface(http_url) == memory  # a URL string is a live server too
    exported = _export(["--mcp-url", http_url], tmp_path / "http.json", capsys)
    assert _reference_fields(exported["actions"]) == _by_ref(memory)
    assert exported["actions"] == _by_ref(load_surface(server, tool_fields=True))
    # Wherever a surface is taken: freedom of the live URL equals freedom of the file.
    assert main(["freedom", "--surface", http_url, "--json"]) == 0
    live_freedom = json.loads(capsys.readouterr().out)
    assert main(["freedom", "--surface", str(tmp_path / "http.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == live_freedom


def test_an_http_url_nobody_answers_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{_free_port()}/mcp"
    code = main(["export", "--out", "/dev/null", "--mcp-timeout", "5", "--mcp-url", url])
    assert code == 2
    assert url in capsys.readouterr().err


def test_the_published_time_server_exports_what_it_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("mcp_server_time", reason="mcp-server-time (the test extra) is missing")
    command = (sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC")
    live = load_surface(stdio_server(*command, timeout=60), ref_prefix="mcp.time.")
    refs = [action["ref"] for action in live["actions"]]
    assert set(refs) >= {"mcp.time.get_current_time", "mcp.time.convert_time"}
    for action in live["actions"]:
        assert action["inputSchema"]["type"] == "object"
    argv = ["--ref-prefix", "mcp.time.", "--mcp-timeout", "60", "--mcp", "--", *command]
    exported = _export(argv, tmp_path / "time.json", capsys)
    assert _reference_fields(exported["actions"]) == _by_ref(live)
    assert all(action["description"] for action in exported["actions"])
    # The captured file measures like any surface, and diffs as identical against the server.
    assert main(["freedom", "--surface", str(tmp_path / "time.json")]) == 0
    spec = "mcp+stdio:" + " ".join(command)
    argv = ["diff", str(tmp_path / "time.json"), spec, "--ref-prefix", "mcp.time."]
    assert main(argv) == 0, capsys.readouterr()


def test_lint_reads_a_streamable_http_url(
    http_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 26 item 7: lint's --surface takes a URL like every command, with the tools'
    descriptions; and lint of the URL's export finds the same."""
    code = main(["lint", "--surface", http_url, "--mcp-timeout", "60", "--json"])
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    live = json.loads(out.out)
    assert "tool-undescribed" not in {row["rule"] for row in live["findings"]}
    exported = tmp_path / "http.json"
    _export(["--mcp-url", http_url], exported, capsys)
    assert main(["lint", "--surface", str(exported), "--json"]) == code

    # The same findings (the export is sorted by ref, the server lists in its own order).
    def key(row: dict[str, Any]) -> str:
        return json.dumps(row, sort_keys=True)

    from_file = json.loads(capsys.readouterr().out)["findings"]
    assert sorted(from_file, key=key) == sorted(live["findings"], key=key)
