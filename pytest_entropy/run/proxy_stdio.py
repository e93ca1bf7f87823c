"""The MCP proxy over stdio: the client starts the proxy as its server command.

The proxy starts ``CMD ARGS...`` with pipes, then copies newline-delimited JSON-RPC both
ways (the stdio transport of MCP) through a :class:`~pytest_entropy.run.proxy.ProxyConnection`.
Two threads, one per direction; writes to each side are serialised by a lock. The server's
stderr is the proxy's stderr (the client's log). When the client closes its end, the server's
stdin is closed and the server is given a few seconds to exit; when the server exits, every
request still waiting gets a JSON-RPC error and the proxy exits with the server's status.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import IO, Final

from pytest_entropy.run.proxy import ProxyConnection, ProxyHub

__all__ = ["run_stdio_proxy"]

_EXIT_WAIT: Final = 5.0
_CHUNK: Final = 1 << 16
_CHUNK: Final = 1 << 16


class _Sink:
    """One side's byte stream, written one whole line at a time."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.lock = threading.Lock()
        self.open = True

    def send(self, line: bytes) -> None:
        with self.lock:
            if not self.open:
                return
            try:
                self.stream.write(line if line.endswith(b"\n") else line + b"\n")
                self.stream.flush()
            except (OSError, ValueError):
                self.open = False

    def close(self) -> None:
        with self.lock:
            self.open = False
            with contextlib.suppress(OSError):
                self.stream.close()


def _lines(descriptor: int) -> Iterator[bytes]:
    """Lines read straight from a file descriptor: no buffered reader whose lock a thread
    still blocked in it at interpreter exit would hold (CPython aborts on that)."""
    pending = b""
    while True:
        try:
            chunk = os.read(descriptor, _CHUNK)
        except OSError:
            chunk = b""
        if not chunk:
            if pending:
                yield pending
            return
        pending += chunk
        if b"\n" in chunk:
            *whole, pending = pending.split(b"\n")
            yield from whole


def _pump_client(
    source: IO[bytes], connection: ProxyConnection, server: _Sink, client: _Sink
) -> None:
    for line in _lines(source.fileno()):
        if not line.strip():
            continue
        routed = connection.from_client(line.rstrip(b"\r\n"))
        for out in routed.to_client:
            client.send(out)
        for out in routed.to_server:
            server.send(out)
    server.close()  # the client is gone: the server sees end of input


def _pump_server(source: IO[bytes], connection: ProxyConnection, client: _Sink) -> None:
    for line in iter(source.readline, b""):
        if not line.strip():
            continue
        for out in connection.from_server(line.rstrip(b"\r\n")).to_client:
            client.send(out)


def _reap(process: subprocess.Popen[bytes]) -> int:
    try:
        return process.wait(timeout=_EXIT_WAIT)
    except subprocess.TimeoutExpired:
        process.terminate()
    try:
        return process.wait(timeout=_EXIT_WAIT)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()


def run_stdio_proxy(
    hub: ProxyHub,
    command: Sequence[str],
    *,
    client_in: IO[bytes] | None = None,
    client_out: IO[bytes] | None = None,
) -> int:
    """Proxy the client on ``client_in``/``client_out`` (stdin/stdout) to ``command``."""
    source = client_in if client_in is not None else sys.stdin.buffer
    client = _Sink(client_out if client_out is not None else sys.stdout.buffer)
    try:
        process = subprocess.Popen(
            list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
    except OSError as error:
        sys.stderr.write(f"entropy: proxy: cannot start {command[0]!r}: {error.strerror}\n")
        return 2
    if process.stdin is None or process.stdout is None:  # pragma: no cover - PIPE gives both
        raise RuntimeError("the server's pipes were not opened")
    server = _Sink(process.stdin)
    connection = hub.connect(client.send)
    upstream = threading.Thread(
        target=_pump_server, args=(process.stdout, connection, client), daemon=True
    )
    downstream = threading.Thread(
        target=_pump_client, args=(source, connection, server, client), daemon=True
    )
    upstream.start()
    downstream.start()
    while upstream.is_alive():
        upstream.join(0.1)
        if not downstream.is_alive():
            # The client is gone and the server's stdin closed: it has a moment to finish.
            upstream.join(_EXIT_WAIT)
            break
    status = _reap(process)
    if downstream.is_alive():
        # The server went away while the client is still there: it must not wait forever.
        reason = f"it exited with status {status}"
        for answer in connection.upstream_gone(reason):
            client.send(answer)
        sys.stderr.write(f"entropy: proxy: the MCP server {command[0]!r} exited ({status})\n")
    connection.close()
    process.stdout.close()
    stats = hub.stats
    if stats.malformed:
        sys.stderr.write(f"entropy: proxy: {stats.malformed} malformed messages passed through\n")
    return 0 if status == 0 else (status if 0 < status < 256 else 1)
