"""A small MCP server of ours (the SDK's ``MCPServer``, FastMCP's successor) for the tests.

Run as ``python -m tests.servers.echo_server`` it serves stdio; imported, ``server`` is the
in-memory object. ``ECHO_SERVER_MODE`` makes it misbehave: ``hang`` (never answers),
``crash`` (exits at start after a line on stderr), ``garbage`` (writes non-JSON-RPC).
"""

from __future__ import annotations

import os
import sys
from typing import Literal


def _misbehave() -> None:
    """The failure modes, before the SDK import (slow on a busy machine)."""
    mode = os.environ.get("ECHO_SERVER_MODE", "")
    pid_file = os.environ.get("ECHO_SERVER_PID_FILE")
    if pid_file:
        with open(pid_file, "w", encoding="utf-8") as stream:
            stream.write(str(os.getpid()))
    if mode == "crash":
        sys.stderr.write("echo server: cannot open the notes database\n")
        sys.exit(3)
    if mode == "hang":
        import time

        sys.stderr.write("echo server: waiting forever\n")
        sys.stderr.flush()
        while True:
            time.sleep(1)
    if mode == "garbage":
        sys.stdout.write("this is not JSON-RPC\n" * 5)
        sys.stdout.flush()
        import time

        time.sleep(60)


if __name__ == "__main__":
    _misbehave()

from mcp.server.mcpserver import MCPServer  # noqa: E402

server = MCPServer("echo")


@server.tool()
def search(query: str, limit: int = 10) -> str:
    """Search the notes."""
    return f"{query}:{limit}"


@server.tool()
def render(fmt: Literal["pdf", "html"], pages: list[int] | None = None) -> str:
    """Render a document."""
    return fmt


def main() -> None:
    server.run("stdio")


if __name__ == "__main__":
    main()
