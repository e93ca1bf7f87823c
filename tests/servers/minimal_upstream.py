"""A minimal MCP server over stdio with no SDK: newline-delimited JSON-RPC, answered at once.

What the proxy tests and ``bench/bench_proxy.py`` put behind the proxy, so the proxy is what
is measured. Tools: ``echo`` (returns its text), ``slow`` (sleeps ``seconds`` first) and
``crash`` (the process exits with status 3 before answering).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

TOOLS = [
    {
        "name": "echo",
        "inputSchema": {
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "mode": {"type": "string", "enum": ["fast", "slow", "safe"]},
            },
            "required": ["text"],
        },
    },
    {
        "name": "slow",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
    {"name": "crash", "inputSchema": {"type": "object"}},
]
_out = threading.Lock()


def _send(message: dict[str, Any]) -> None:
    data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
    with _out:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def _answer(message: dict[str, Any]) -> None:
    method, request_id = message.get("method"), message.get("id")
    params = message.get("params") or {}
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "minimal", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        if name == "crash":
            os._exit(3)
        if name == "slow":
            time.sleep(float(args.get("seconds", 1)))
        if name not in ("echo", "slow"):
            _send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32602, "message": f"Unknown tool: {name}"},
                }
            )
            return
        result = {"content": [{"type": "text", "text": str(args.get("text", ""))}]}
    elif method == "ping":
        result = {}
    else:
        _send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": -32601, "message": f"Method not found: {method}"},
            }
        )
        return
    _send({"jsonrpc": "2.0", "id": request_id, "result": result})


def main() -> None:
    for line in iter(sys.stdin.buffer.readline, b""):
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if type(message) is not dict or "id" not in message or "method" not in message:
            continue
        if (
            message.get("method") == "tools/call"
            and (message.get("params") or {}).get("name") == "slow"
        ):
            threading.Thread(target=_answer, args=(message,), daemon=True).start()
        else:
            _answer(message)


if __name__ == "__main__":
    main()
