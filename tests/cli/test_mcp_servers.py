"""MCP servers as surfaces: SDK tools, our MCPServer in memory and over stdio, export --mcp,
bad servers (crash, hang, garbage), bad listings, and the missing extra."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from pytest_entropy import load_surface
from pytest_entropy.cli.app import main
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.sources import mcp as sources_mcp
from pytest_entropy.sources.mcp import stdio_server

REPO = Path(__file__).resolve().parents[2]
SERVER_ENV = {"PYTHONPATH": str(REPO)}
COMMAND = (sys.executable, "-m", "tests.servers.echo_server")


def _server() -> Any:
    from tests.servers.echo_server import server

    return server


def test_an_in_memory_server_lists_its_tools() -> None:
    surface = load_surface(_server())
    assert [action["ref"] for action in surface["actions"]] == ["search", "render"]
    render = surface["actions"][1]["inputSchema"]
    assert render["properties"]["fmt"]["enum"] == ["pdf", "html"]
    assert render["required"] == ["fmt"]
    # The same through its module:attribute name, its SDK Tool objects and a prefix.
    assert load_surface("tests.servers.echo_server:server") == surface
    tools = asyncio.run(_server().list_tools())
    assert load_surface(tools) == surface
    prefixed = load_surface(_server(), ref_prefix="mcp.echo.")
    assert prefixed["actions"][0]["ref"] == "mcp.echo.search"


def test_every_command_takes_a_server_as_surface(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["freedom", "--surface", "tests.servers.echo_server:server", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {row["ref"] for row in report["actions"]} == {"search", "render"}


def test_listing_works_inside_a_running_event_loop() -> None:
    async def inside() -> dict[str, Any]:
        return load_surface(_server())

    assert asyncio.run(inside()) == load_surface(_server())


@pytest.mark.server
def test_stdio_capture_matches_memory_and_the_exported_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memory = load_surface(_server())
    live = load_surface(stdio_server(*COMMAND, env=SERVER_ENV))
    assert live == memory
    out = tmp_path / "surface.json"
    argv = ["export", "--out", str(out), "--mcp-env", f"PYTHONPATH={REPO}", "--mcp", "--", *COMMAND]
    assert main(argv) == 0, capsys.readouterr().err
    exported = json.loads(out.read_text(encoding="utf-8"))
    assert exported["version"] == 1
    assert [a["ref"] for a in exported["actions"]] == ["render", "search"]  # sorted by ref
    # Our export also keeps each tool's description, title, ... (docs/decisions.md); its
    # ref and inputSchema are the reference's export.
    described = load_surface(_server(), tool_fields=True)
    assert sorted(described["actions"], key=lambda a: a["ref"]) == exported["actions"]
    reference = [{"ref": a["ref"], "inputSchema": a["inputSchema"]} for a in exported["actions"]]
    assert sorted(memory["actions"], key=lambda a: a["ref"]) == reference
    # The exported file and the server diff as identical.
    code = main(["diff", str(out), "tests.servers.echo_server:server"])
    assert code == 0, capsys.readouterr()


@pytest.mark.server
@pytest.mark.parametrize(
    ("mode", "problem", "stderr"),
    [
        ("crash", "Connection closed", "cannot open the notes database"),
        ("hang", "did not list its tools within 3 s", "waiting forever"),
    ],
)
def test_a_bad_server_is_a_clear_error_and_its_child_is_reaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str, problem: str, stderr: str
) -> None:
    pid_file = tmp_path / "pid"
    argv = [
        "export",
        "--out",
        str(tmp_path / "s.json"),
        "--mcp-timeout",
        "3",
        "--mcp-env",
        f"PYTHONPATH={REPO}",
        "--mcp-env",
        f"ECHO_SERVER_MODE={mode}",
        "--mcp-env",
        f"ECHO_SERVER_PID_FILE={pid_file}",
        "--mcp",
        "--",
        *COMMAND,
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "mcp+stdio:" in err and problem in err
    assert stderr in err
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not (tmp_path / "s.json").exists()


def test_export_takes_exactly_one_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export"]) == 2
    assert "exactly one of --surface, --mcp -- COMMAND, --mcp-url" in capsys.readouterr().err
    assert main(["export", "--mcp"]) == 2
    assert "needs the server command" in capsys.readouterr().err
    assert main(["export", "--mcp-url", "ftp://x", "--mcp-header", "A:b"]) == 2
    assert "http:// or https://" in capsys.readouterr().err
    assert main(["export", "--mcp-env", "NOEQUALS", "--mcp", "--", "x"]) == 2
    assert "--mcp-env takes KEY=VALUE" in capsys.readouterr().err


class _Tool:
    def __init__(self, name: str, schema: Any) -> None:
        self.name = name
        self.input_schema = schema


def test_bad_listings_name_the_source_and_the_tool(tmp_path: Path) -> None:
    with pytest.raises(EntropyInputError, match=r"tool 1 \(a\) is listed twice"):
        load_surface([_Tool("a", {"type": "object"}), _Tool("a", {"type": "object"})])
    with pytest.raises(EntropyInputError, match=r"tool 0 \(a\): inputSchema is not an object"):
        load_surface({"tools": [{"name": "a", "inputSchema": "string"}]})
    bad = tmp_path / "tools.json"
    bad.write_text(json.dumps({"tools": [{"name": "q", "inputSchema": None}]}))
    with pytest.raises(EntropyInputError, match=r"tools.json: tool 0 \(q\): inputSchema"):
        load_surface(bad)
    with pytest.raises(TypeError, match="not a surface: a int"):
        load_surface(42)
    with pytest.raises(EntropyInputError, match="not an MCP server object"):
        load_surface("tests.servers.echo_server:main")


def test_all_pages_are_listed() -> None:
    class Page:
        def __init__(self, tools: list[Any], cursor: str | None) -> None:
            self.tools, self.next_cursor = tools, cursor

    class Client:
        async def list_tools(self, cursor: str | None = None) -> Page:
            pages = {None: Page([1, 2], "p2"), "p2": Page([3], "p3"), "p3": Page([4], None)}
            return pages[cursor]

    assert asyncio.run(sources_mcp._all_pages(Client())) == [1, 2, 3, 4]


def test_without_the_sdk_a_live_source_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(EntropyInputError, match=r"pip install 'pytest-entropy\[mcp\]'"):
        load_surface(stdio_server("true"))
