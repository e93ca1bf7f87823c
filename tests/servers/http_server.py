"""Our echo server over streamable HTTP on 127.0.0.1, on the port given as the argument:
``python -m tests.servers.http_server PORT``."""

from __future__ import annotations

import sys

from tests.servers.echo_server import server

if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
