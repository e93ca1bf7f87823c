"""A small server written with the standalone ``fastmcp`` package (not the SDK's ``MCPServer``).

Imported, ``server`` is the in-memory object; run as ``python -m tests.servers.fastmcp_server``
it serves stdio.
"""

from __future__ import annotations

from typing import Literal

from fastmcp import FastMCP

server = FastMCP("calendar")


@server.tool
def book(room: Literal["red", "blue"], minutes: int = 30, note: str | None = None) -> str:
    """Book a meeting room."""
    return f"{room}:{minutes}"


@server.tool
def cancel(booking_id: str) -> str:
    """Cancel a booking by its id."""
    return booking_id


if __name__ == "__main__":
    server.run("stdio", show_banner=False)
