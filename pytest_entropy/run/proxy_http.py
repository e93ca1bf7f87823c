"""The MCP proxy over streamable HTTP: ``proxy --upstream URL --listen HOST:PORT``.

The proxy serves the MCP endpoint (at any path) on a loopback address by default and sends
every request to the one upstream URL it was given, nothing else. A POST's JSON-RPC body
goes through :meth:`ProxyConnection.from_client`; the upstream's answer, a JSON body or an
event stream, goes event by event through :meth:`ProxyConnection.from_server`; GET (the
server's own stream) and DELETE (session end) are passed through the same way. Headers
travel both ways (``Mcp-Session-Id``, ``MCP-Protocol-Version``, authorization), except the
hop-by-hop ones. A client connection is the upstream's session id, or, for a server that
gives none, the client's address.

The SDK's transport classes parse every message into typed models; a proxy that must pass
unknown protocol versions through unchanged cannot use them, so this is a plain reverse
proxy on the SDK's own HTTP stack (Starlette, uvicorn, httpx2).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import socket
from collections.abc import AsyncIterator
from typing import Any, Final
from urllib.parse import urlsplit

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.run.proxy import ProxyConnection, ProxyHub
from pytest_entropy.run.proxy_artifact import proxy_notice

__all__ = ["bind_listener", "parse_listen", "parse_upstream", "run_http_proxy"]

_SESSION: Final = "mcp-session-id"
_HOP: Final = frozenset(
    {
        "host",
        "content-length",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "accept-encoding",
        "content-encoding",
        "upgrade",
        "te",
        "trailer",
        "proxy-authorization",
        "proxy-connection",
    }
)


def parse_listen(text: str) -> tuple[str, int]:
    """``PORT`` or ``HOST:PORT`` (``[v6]:PORT``); the host defaults to 127.0.0.1."""
    host, colon, port = text.rpartition(":")
    if not colon:
        host, port = "", text
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"--listen takes PORT or HOST:PORT, got {text!r}")
    return host, int(port)


def parse_upstream(text: str) -> str:
    """The ``--upstream`` URL, checked before anything is served: an http(s) URL with a
    host and, when it names one, a port from 1 to 65535 (what httpx would only refuse, or
    misread, at the first request)."""
    import httpx2

    parts = urlsplit(text)
    try:
        port = parts.port  # ValueError: not a number, or out of range
    except ValueError:
        port = -1
    try:
        httpx2.URL(text)
        problem = None
    except httpx2.InvalidURL as error:
        problem = str(error).rstrip(".")
    if parts.scheme not in ("http", "https"):
        problem = "it takes an http(s):// URL"
    elif not parts.hostname:
        problem = "it names no host"
    elif port is not None and not 0 < port < 65536:
        problem = "its port is not a number from 1 to 65535"
    elif any(character.isspace() for character in text):
        problem = "it holds a space"
    if problem is not None:
        raise ValueError(f"--upstream {text!r} is not a URL the proxy can use: {problem}")
    return text


def _shown(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _bind_problem(error: OSError) -> str:
    if isinstance(error, socket.gaierror):
        return f"unknown host ({error.strerror or error})"
    if error.errno == errno.EADDRINUSE:
        return "address in use"
    if error.errno == errno.EADDRNOTAVAIL:
        return "this machine has no such address"
    if error.errno == errno.EACCES:
        return "permission denied"
    return error.strerror or str(error)


def bind_listener(host: str, port: int) -> socket.socket:
    """The listening socket of ``--listen HOST:PORT``, bound before the proxy says it
    listens (port 0: one the system picks). A usage error names the address when it
    cannot be bound: in use, not this machine's, or not allowed."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        listener = socket.socket(family, kind, proto)
    except OSError as error:
        raise EntropyInputError(
            f"cannot listen on {_shown(host, port)}: {_bind_problem(error)}"
        ) from None
    try:
        if os.name != "nt":  # as asyncio does: a port left in TIME_WAIT can be bound again
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(socket.SOMAXCONN)
    except OSError as error:
        listener.close()
        raise EntropyInputError(
            f"cannot listen on {_shown(host, port)}: {_bind_problem(error)}"
        ) from None
    return listener


class _Push:
    """A connection's way to the client outside an answer: the server's GET event stream
    while the client holds it open (messages pushed from other threads, the compile loop's)."""

    def __init__(self) -> None:
        self.streams: list[tuple[asyncio.AbstractEventLoop, asyncio.Queue[bytes]]] = []

    def send(self, line: bytes) -> None:
        for loop, queue in list(self.streams):
            with contextlib.suppress(RuntimeError):  # a loop that has closed
                loop.call_soon_threadsafe(queue.put_nowait, line)


class _Connections:
    def __init__(self, hub: ProxyHub) -> None:
        self.hub = hub
        self.by_key: dict[str, ProxyConnection] = {}
        self.pushes: dict[int, _Push] = {}

    def get(self, key: str) -> ProxyConnection:
        connection = self.by_key.get(key)
        if connection is None:
            push = _Push()
            connection = self.hub.connect(push.send)
            self.pushes[id(connection)] = push
            self.by_key[key] = connection
        return connection

    def push_of(self, connection: ProxyConnection) -> _Push:
        return self.pushes[id(connection)]

    def rename(self, old: str, new: str) -> None:
        if old != new and old in self.by_key and new not in self.by_key:
            self.by_key[new] = self.by_key.pop(old)

    def close(self, key: str) -> None:
        connection = self.by_key.pop(key, None)
        if connection is not None:
            self.pushes.pop(id(connection), None)
            connection.close()

    def close_all(self) -> None:
        for key in list(self.by_key):
            self.close(key)


def _headers(items: Any) -> dict[str, str]:
    return {name: value for name, value in items if name.lower() not in _HOP}


def _joined(lines: list[bytes]) -> bytes:
    return lines[0] if len(lines) == 1 else b"[" + b",".join(lines) + b"]"


async def _events(connection: ProxyConnection, lines: AsyncIterator[str]) -> AsyncIterator[bytes]:
    """An upstream event stream, each ``data:`` payload seen (and changed) by the proxy."""
    async for line in lines:
        if line.startswith("data:"):
            payload = line[5:].strip().encode("utf-8")
            if payload:
                out = connection.from_server(payload).to_client
                if out:  # none: it answered a held batch, which goes out whole later
                    yield b"data: " + _joined(out) + b"\n"
                continue
        yield line.encode("utf-8") + b"\n"


async def _merged(events: AsyncIterator[bytes], push: _Push) -> AsyncIterator[bytes]:
    """The server's GET stream with the proxy's own messages pushed in between its events."""
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    entry = (asyncio.get_running_loop(), queue)
    push.streams.append(entry)
    upstream = events.__aiter__()
    next_event: asyncio.Future[bytes] = asyncio.ensure_future(upstream.__anext__())
    next_push: asyncio.Future[bytes] = asyncio.ensure_future(queue.get())
    try:
        while True:
            done, _ = await asyncio.wait(
                {next_event, next_push}, return_when=asyncio.FIRST_COMPLETED
            )
            if next_push in done:
                yield b"event: message\ndata: " + next_push.result() + b"\n\n"
                next_push = asyncio.ensure_future(queue.get())
            if next_event in done:
                try:
                    chunk = next_event.result()
                except StopAsyncIteration:
                    return
                yield chunk
                next_event = asyncio.ensure_future(upstream.__anext__())
    finally:
        push.streams.remove(entry)
        for future in (next_event, next_push):
            future.cancel()


def build_app(hub: ProxyHub, upstream: str) -> Any:
    """The Starlette application of one proxy (its upstream client opened at start-up)."""
    import httpx2
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    connections = _Connections(hub)
    state: dict[str, Any] = {}

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        state["client"] = httpx2.AsyncClient(timeout=httpx2.Timeout(None, connect=30.0))
        try:
            yield
        finally:
            await state["client"].aclose()
            connections.close_all()

    def key_of(request: Request) -> str:
        session = request.headers.get(_SESSION)
        if session:
            return "session:" + session
        peer = request.client
        return f"peer:{peer.host if peer else ''}"

    async def endpoint(request: Request) -> Response:
        key = key_of(request)
        connection = connections.get(key)
        body = await request.body()
        if request.method == "POST" and body.strip():
            routed = connection.from_client(body)
            connection.flush()
            if not routed.to_server:
                return Response(_joined(routed.to_client), media_type="application/json")
            body = routed.to_server[0]
            extra = routed.to_client
        else:
            extra = []
        client: Any = state["client"]
        outgoing = client.build_request(
            request.method, upstream, headers=_headers(request.headers.items()), content=body
        )
        try:
            answer = await client.send(outgoing, stream=True)
        except httpx2.HTTPError as error:
            proxy_notice(f"entropy: proxy: the upstream {upstream} failed: {error}")
            for line in connection.upstream_gone(str(error), body):
                extra.append(line)
            if extra:
                return Response(_joined(extra), status_code=200, media_type="application/json")
            return Response(b"upstream unavailable", status_code=502)
        session = answer.headers.get(_SESSION)
        if session:
            connections.rename(key, "session:" + session)
        headers = _headers(answer.headers.items())
        if request.method == "DELETE":
            await answer.aclose()
            connections.close("session:" + (session or request.headers.get(_SESSION, "")))
            return Response(status_code=answer.status_code, headers=headers)
        kind = answer.headers.get("content-type", "")
        if kind.startswith("text/event-stream"):
            events = _events(connection, answer.aiter_lines())
            if request.method == "GET":
                events = _merged(events, connections.push_of(connection))

            async def stream() -> AsyncIterator[bytes]:
                try:
                    for line in extra:
                        yield b"data: " + line + b"\n\n"
                    async for chunk in events:
                        yield chunk
                        connection.flush()
                finally:
                    await answer.aclose()

            return StreamingResponse(stream(), status_code=answer.status_code, headers=headers)
        raw = await answer.aread()
        await answer.aclose()
        if extra and not raw.strip():
            # Only notifications went up (202, no body): the proxy's own answers are the body.
            return Response(_joined(extra), status_code=200, media_type="application/json")
        if raw.strip() and kind.startswith("application/json"):
            out = connection.from_server(raw).to_client
            connection.flush()
            raw = _joined(extra + out) if extra else (out[0] if out else raw)
        return Response(raw, status_code=answer.status_code, headers=headers)

    routes = [Route("/{path:path}", endpoint, methods=["GET", "POST", "DELETE"])]
    return Starlette(routes=routes, lifespan=lifespan)


def run_http_proxy(hub: ProxyHub, upstream: str, listener: socket.socket) -> int:
    """Serve on ``listener`` (from :func:`bind_listener`) until interrupted (Ctrl-C,
    SIGTERM); 1 when calls could not be recorded."""
    import uvicorn

    host, port = listener.getsockname()[:2]
    app = build_app(hub, upstream)
    proxy_notice(f"entropy: proxy: listening on http://{_shown(host, port)}/mcp -> {upstream}")
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    try:
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        listener.close()
    return 1 if hub.unrecorded_said() else 0
