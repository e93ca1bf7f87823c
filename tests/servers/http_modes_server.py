"""A streamable-HTTP server of ours whose one tool has a three-value enum, so a compile over
recorded calls can tighten it: ``python -m tests.servers.http_modes_server PORT``."""

from __future__ import annotations

import sys
from typing import Literal

from mcp.server.mcpserver import MCPServer

server = MCPServer("modes")


@server.tool()
def echo(text: str, mode: Literal["fast", "slow", "safe"] = "fast") -> str:
    """Echo the text."""
    return f"{text}:{mode}"


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
