"""An in-memory MCP server that answers ``initialize`` but never ``tools/list`` in time: the
timeout tests' server (``tests.servers.slow_server:server``)."""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer


class _SlowServer(MCPServer):
    async def list_tools(self) -> Any:  # type: ignore[override]
        await anyio.sleep(60)
        return await super().list_tools()


server = _SlowServer("slow")


@server.tool()
def ping(count: int) -> str:
    """Answer a ping."""
    return "pong" * count
