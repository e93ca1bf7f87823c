"""The MCP proxy over stdio: the client starts the proxy as its server command.

The proxy starts ``CMD ARGS...`` with pipes, then copies newline-delimited JSON-RPC both
ways (the stdio transport of MCP) through a :class:`~pytest_entropy.run.proxy.ProxyConnection`.
Two threads, one per direction; writes to each side are serialised by a lock. The server's
stderr is the proxy's stderr (the client's log). When the client closes its end, the server's
stdin is closed and the server is given five seconds in all to exit (then it is terminated, and
killed two seconds later); when the server exits, every request still waiting gets a JSON-RPC
error and the proxy exits with the server's status.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import IO, Final

from pytest_entropy.run.proxy import ProxyConnection, ProxyHub
from pytest_entropy.run.proxy_artifact import proxy_notice

__all__ = ["run_stdio_proxy"]

_EXIT_WAIT: Final = 5.0  # docs/proxy.md: a server whose client left has five seconds
_KILL_WAIT: Final = 2.0  # then SIGTERM, and this long before SIGKILL
_CHUNK: Final = 1 << 16


class _Sink:
    """One side's byte stream, written whole lines at a time (one write per batch)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.lock = threading.Lock()
        self.open = True

    def send(self, line: bytes) -> None:
        self.send_all([line])

    def send_all(self, lines: list[bytes]) -> None:
        if not lines:
            return
        data = b"".join(line if line.endswith(b"\n") else line + b"\n" for line in lines)
        with self.lock:
            if not self.open:
                return
            try:
                self.stream.write(data)
                self.stream.flush()
            except (OSError, ValueError):
                self.open = False

    def close(self) -> None:
        with self.lock:
            self.open = False
            with contextlib.suppress(OSError):
                self.stream.close()


def _batches(descriptor: int) -> Iterator[list[bytes]]:
    """The lines each read gives, straight from a file descriptor.

    Reading the descriptor (no buffered reader) matters twice: a thread still blocked in a
    buffered reader at interpreter exit holds its lock (CPython aborts on that), and the
    lines that arrived together are handled together, each side written once per read.
    """
    pending = bytearray()  # grows in place: a huge line costs no quadratic copying
    while True:
        try:
            chunk = os.read(descriptor, _CHUNK)
        except OSError:
            chunk = b""
        if not chunk:
            if bytes(pending).strip():
                yield [bytes(pending)]
            return
        pending += chunk
        if b"\n" in chunk:
            *whole, rest = bytes(pending).split(b"\n")
            pending = bytearray(rest)
            yield [line.rstrip(b"\r") for line in whole if line.strip()]


def _pump_client(
    source: IO[bytes], connection: ProxyConnection, server: _Sink, client: _Sink
) -> None:
    try:
        descriptor = source.fileno()
    except (OSError, ValueError):  # io.UnsupportedOperation is both: no client to read
        descriptor = -1
    for lines in _batches(descriptor) if descriptor >= 0 else ():
        to_server: list[bytes] = []
        to_client: list[bytes] = []
        for line in lines:
            routed = connection.from_client(line)
            to_client.extend(routed.to_client)
            to_server.extend(routed.to_server)
        connection.flush()  # what was recorded is on disk before anyone sees an answer
        client.send_all(to_client)
        server.send_all(to_server)
    server.close()  # the client is gone: the server sees end of input


def _pump_server(source: IO[bytes], connection: ProxyConnection, client: _Sink) -> None:
    for lines in _batches(source.fileno()):
        to_client: list[bytes] = []
        for line in lines:
            to_client.extend(connection.from_server(line).to_client)
        connection.flush()
        client.send_all(to_client)


def _reap(process: subprocess.Popen[bytes], deadline: float, kill_wait: float) -> int:
    """The server's status: it may run until ``deadline`` (a monotonic time), then it is
    terminated, and killed ``kill_wait`` seconds later."""
    try:
        return process.wait(timeout=max(deadline - time.monotonic(), 0.0))
    except subprocess.TimeoutExpired:
        process.terminate()
    try:
        return process.wait(timeout=kill_wait)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()


def run_stdio_proxy(
    hub: ProxyHub,
    command: Sequence[str],
    *,
    client_in: IO[bytes] | None = None,
    client_out: IO[bytes] | None = None,
    exit_wait: float = _EXIT_WAIT,
    kill_wait: float = _KILL_WAIT,
) -> int:
    """Proxy the client on ``client_in``/``client_out`` (stdin/stdout) to ``command``.

    ``exit_wait`` is how long a server whose client left (or whose output ended) may take to
    exit, counted from that moment, before it is terminated (``kill_wait`` more: killed)."""
    source = client_in if client_in is not None else sys.stdin.buffer
    client = _Sink(client_out if client_out is not None else sys.stdout.buffer)
    try:
        process = subprocess.Popen(
            list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
    except OSError as error:
        proxy_notice(f"entropy: proxy: cannot start {command[0]!r}: {error.strerror}")
        return 2
    if process.stdin is None or process.stdout is None:  # pragma: no cover - PIPE gives both
        raise RuntimeError("the server's pipes were not opened")
    server = _Sink(process.stdin)
    connection = hub.connect(client.send)
    connection.batched = True  # the pumps flush the recording once per batch they read
    upstream = threading.Thread(
        target=_pump_server, args=(process.stdout, connection, client), daemon=True
    )
    downstream = threading.Thread(
        target=_pump_client, args=(source, connection, server, client), daemon=True
    )
    upstream.start()
    downstream.start()
    deadline: float | None = None
    while upstream.is_alive():
        upstream.join(0.1)
        if not downstream.is_alive():
            # The client is gone and the server's stdin closed: it has exit_wait to finish,
            # answers and exit together (one deadline, not one wait after the other).
            deadline = time.monotonic() + exit_wait
            upstream.join(exit_wait)
            break
    status = _reap(process, deadline or time.monotonic() + exit_wait, kill_wait)
    left_client = downstream.is_alive()
    if left_client:
        # The server went away while the client is still there: it must not wait forever.
        reason = f"it exited with status {status}"
        for answer in connection.upstream_gone(reason):
            client.send(answer)
    connection.close()
    process.stdout.close()
    stats = hub.stats
    if stats.malformed:
        proxy_notice(f"entropy: proxy: {stats.malformed} malformed messages passed through")
    if status != 0 or left_client:
        proxy_notice(f"entropy: proxy: the MCP server {command[0]!r} exited ({status})")
    unrecorded = hub.unrecorded_said()
    # The project's exit statuses: 1 says the server failed, or left its client (its own
    # status is on stderr), or calls were not recorded; passing a server's 2 or 3 on would
    # read as a usage error or a bug of ours.
    return 1 if status != 0 or left_client or unrecorded else 0
