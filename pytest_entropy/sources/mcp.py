"""Tool lists from MCP servers: SDK ``Tool`` objects, in-memory server objects, live servers.

Everything here goes through the official ``mcp`` SDK (the optional extra
``pytest-entropy[mcp]``), imported only when a server is actually read:

* a Python server object (the SDK's ``MCPServer``, its low-level ``Server``, v1's
  ``FastMCP``, or the standalone ``fastmcp`` package's server) is listed in memory, with the
  SDK's in-process client: no subprocess, the same ``tools/list`` a client sees;
* a live server is a stdio command (:func:`stdio_server`) or a streamable-HTTP URL
  (:func:`http_server`), listed with the SDK client, every page of ``tools/list``.

A listing has a deadline (default 30 s, ``timeout=`` or ``--mcp-timeout``; a timeout names
the step it waited for: ``initialize`` or ``tools/list``); a server that fails to start,
crashes, or answers garbage is an :class:`~pytest_entropy.core.errors.EntropyInputError`
naming the server, with the tail of its stderr. The SDK's stdio client closes the child's
stdin, waits, then kills its process tree, also when the deadline cancels the listing: the
child is always reaped.
Listing works inside a running event loop too (a pytest-asyncio test, a notebook): the
listing then runs on its own loop in a helper thread.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import tempfile
import threading
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from pytest_entropy.core.errors import EntropyInputError

__all__ = [
    "DEFAULT_TIMEOUT",
    "MCP_EXTRA",
    "LiveServer",
    "http_server",
    "is_server_object",
    "is_tool_object",
    "list_live_tools",
    "list_server_tools",
    "parse_server_spec",
    "stdio_server",
    "tool_dicts",
]

DEFAULT_TIMEOUT: Final = 30.0
MCP_EXTRA: Final = "pip install 'pytest-entropy[mcp]'"
_STDERR_TAIL: Final = 2000
_PAGE_LIMIT: Final = 1000
_MODULE_ATTRIBUTE: Final = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")

T = TypeVar("T")
_MISSING: Final = object()


def _field(value: Any, name: str, old_name: str) -> Any:
    """``value.name`` (SDK v2), or ``value.old_name`` (v1) only when there is no ``name``:
    v2 models keep the v1 spelling as a deprecated alias that warns when read."""
    found = getattr(value, name, _MISSING)
    return getattr(value, old_name, None) if found is _MISSING else found


@dataclass(frozen=True, slots=True)
class LiveServer:
    """A live MCP server: a stdio ``command`` or a streamable-HTTP ``url``."""

    command: tuple[str, ...] = ()
    url: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT
    cwd: str | None = None

    def describe(self) -> str:
        """How errors name it: ``mcp+stdio:CMD ARGS`` or the URL."""
        return self.url or "mcp+stdio:" + shlex.join(self.command)


def stdio_server(
    command: str | Sequence[str],
    *args: str,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    cwd: str | None = None,
) -> LiveServer:
    """A server started as ``command args...`` and spoken to over its stdin/stdout.

    ``env`` is added to the SDK's minimal environment (it passes on only ``PATH``, ``HOME``
    and a few more), for a server that needs a token::

        load_surface(stdio_server("python", "server.py", env={"API_TOKEN": "..."}))
    """
    argv = (command,) if isinstance(command, str) else tuple(command)
    argv = (*argv, *args)
    if not argv or not argv[0]:
        raise EntropyInputError("an MCP stdio server needs a command")
    return LiveServer(command=argv, env=dict(env or {}), timeout=timeout, cwd=cwd)


def http_server(
    url: str, *, headers: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT
) -> LiveServer:
    """A streamable-HTTP MCP server at ``url`` (``headers`` on every request)."""
    if not url.startswith(("http://", "https://")):
        raise EntropyInputError(f"an MCP server URL starts with http:// or https://: {url!r}")
    return LiveServer(url=url, headers=dict(headers or {}), timeout=timeout)


def parse_server_spec(text: str, *, timeout: float = DEFAULT_TIMEOUT) -> LiveServer | str | None:
    """A surface spelled as a server: ``mcp+stdio:COMMAND ARGS`` (shell words),
    ``mcp+http://...``/``mcp+https://...`` (or a bare ``http(s)://`` URL) give a
    :class:`LiveServer`; ``module:attribute`` (when no such file exists) gives the string
    back, to import; anything else ``None`` (a path)."""
    if text.startswith("mcp+stdio:"):
        return stdio_server(shlex.split(text.removeprefix("mcp+stdio:")), timeout=timeout)
    if text.startswith(("mcp+http://", "mcp+https://")):
        return http_server(text.removeprefix("mcp+"), timeout=timeout)
    if text.startswith(("http://", "https://")):
        return http_server(text, timeout=timeout)
    if _MODULE_ATTRIBUTE.match(text) and not os.path.exists(text):
        return text
    return None


@contextmanager
def working_directory_importable() -> Iterator[None]:
    """The working directory first on ``sys.path`` while the block runs (as ``python -m``
    and pytest's rootdir put it), so ``module:attribute`` names a module of the project
    without ``PYTHONPATH=.``; the entry is removed again afterwards."""
    entry = os.getcwd()
    if entry in sys.path or "" in sys.path:
        yield
        return
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        with suppress(ValueError):  # the block removed it itself
            sys.path.remove(entry)


def import_server(spec: str) -> Any:
    """The object ``module:attribute`` names (dots in the attribute walk into it); the module
    is found on ``sys.path`` or in the working directory."""
    from importlib import import_module

    module_name, _, attribute = spec.partition(":")
    try:
        with working_directory_importable():
            value: Any = import_module(module_name)
    except ImportError as error:
        raise EntropyInputError(
            f"cannot import {module_name!r} (looked in the working directory and on sys.path):"
            f" {error}",
            source=spec,
        ) from None
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise EntropyInputError(f"{module_name!r} has no attribute {attribute!r}", source=spec)
        value = getattr(value, part)
    return value


# ---------------------------------------------------------------------- SDK objects


def is_tool_object(value: Any) -> bool:
    """An SDK ``Tool`` (any object with a ``name`` and an ``inputSchema``/``input_schema``)."""
    return (
        not isinstance(value, dict)
        and isinstance(getattr(value, "name", None), str)
        and (hasattr(value, "input_schema") or hasattr(value, "inputSchema"))
    )


def _tool_dict(tool: Any) -> dict[str, Any]:
    """One tool as its ``tools/list`` entry: name, schema and the tool fields it carries."""
    from pytest_entropy.core.inputs import TOOL_FIELDS

    schema = _field(tool, "input_schema", "inputSchema")
    entry: dict[str, Any] = {"name": tool.name, "inputSchema": schema}
    dump = getattr(tool, "model_dump", None)
    if callable(dump):  # a pydantic model: its fields under their wire names (_meta, ...)
        try:
            wire = dump(mode="json", by_alias=True, exclude_none=True)
        except (TypeError, ValueError):  # a field that does not serialise: keep the rest
            wire = {}
        if isinstance(wire, dict):
            entry.update((key, wire[key]) for key in TOOL_FIELDS if key in wire)
    if "description" not in entry and isinstance(getattr(tool, "description", None), str):
        entry["description"] = tool.description
    return entry


def tool_dicts(tools: Sequence[Any]) -> list[dict[str, Any]]:
    """SDK ``Tool`` objects as ``tools/list`` entries ``{name, inputSchema, ...}`` (with the
    description, title, annotations, output schema and the other fields each carries)."""
    return [_tool_dict(tool) for tool in tools]


def _class_path(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def is_server_object(value: Any) -> bool:
    """An in-memory MCP server of the ``mcp`` SDK (any major) or of the ``fastmcp`` package."""
    for kind in type(value).__mro__:
        module = kind.__module__
        if (module == "fastmcp" or module.startswith("fastmcp.")) and "FastMCP" in kind.__name__:
            return True
        if module.startswith("mcp.server") and kind.__name__ in ("MCPServer", "FastMCP", "Server"):
            return True
    return False


def _require_mcp(what: str) -> None:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise EntropyInputError(
            f"{what} needs the MCP SDK, which is not installed: {MCP_EXTRA}"
        ) from None


# ------------------------------------------------------------------ running a listing


def _run(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion, also from inside a running event loop."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    # A loop runs in this thread (pytest-asyncio, a notebook): give the listing its own.
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["value"] = asyncio.run(factory())
        except BaseException as error:  # handed to the caller's thread below
            outcome["error"] = error

    worker = threading.Thread(target=work, name="pytest-entropy-mcp", daemon=True)
    worker.start()
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]


def _innermost(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


class _Step:
    """What a listing is waiting for, so a timeout can say it."""

    def __init__(self, what: str) -> None:
        self.what = what


async def _all_pages(client: Any, step: _Step | None = None) -> list[Any]:
    tools: list[Any] = []
    cursor: str | None = None
    for page_number in range(1, _PAGE_LIMIT + 1):
        if step is not None:
            step.what = "tools/list" if page_number == 1 else f"tools/list (page {page_number})"
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = _field(page, "next_cursor", "nextCursor")
        if not cursor:
            return tools
    raise EntropyInputError(f"tools/list did not end after {_PAGE_LIMIT} pages")


def _failure(source: str, problem: str, stderr: str = "") -> EntropyInputError:
    tail = stderr.strip()[-_STDERR_TAIL:]
    shown = f"; the server's stderr ends with:\n{tail}" if tail else ""
    return EntropyInputError(f"{problem}{shown}", source=source)


def _timeout_problem(timeout: float, step: _Step) -> str:
    return (
        f"the MCP server did not list its tools within {timeout:g} s: no answer to"
        f" {step.what} after waiting {timeout:g} s (raise the limit with --mcp-timeout"
        " SECONDS, mcp-timeout in the configuration, or timeout= in Python)"
    )


def _check_timeout(timeout: float) -> float:
    if type(timeout) not in (int, float) or not 0 < timeout < float("inf"):
        raise EntropyInputError(f"an MCP timeout is a positive number of seconds, not {timeout!r}")
    return float(timeout)


def list_live_tools(server: LiveServer) -> list[dict[str, Any]]:
    """Every tool a live server lists (all pages), as ``{name, inputSchema, ...}`` entries.

    The whole listing (start, ``initialize``, every ``tools/list`` page) has
    ``server.timeout`` seconds; a timeout names the step it waited for.
    """
    _require_mcp(f"the live MCP server {server.describe()}")
    source = server.describe()
    timeout = _check_timeout(server.timeout)
    step = _Step(
        "initialize (the connection to the server)"
        if server.url
        else "initialize (the server starting up)"
    )
    deadlines: list[Any] = []  # the deadline's cancel scope: was it our deadline that hit?
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:

        async def listing() -> list[Any]:
            import anyio
            from mcp import Client

            with anyio.fail_after(timeout) as scope:
                deadlines.append(scope)
                async with AsyncExitStack() as stack:
                    transport = await _transport(server, errlog, stack)
                    client = await stack.enter_async_context(Client(transport))
                    return await _all_pages(client, step)

        try:
            tools = _run(listing)
        except EntropyInputError:
            raise
        except BaseException as error:
            inner = _innermost(error)
            if isinstance(inner, KeyboardInterrupt):
                raise inner from None
            errlog.seek(0)
            stderr = errlog.read()
            if _deadline_hit(inner, deadlines):
                problem = _timeout_problem(timeout, step)
            else:
                problem = f"cannot list the MCP server's tools ({_error_text(inner)})"
            raise _failure(source, problem, stderr) from None
    return tool_dicts(tools)


def _deadline_hit(error: BaseException, deadlines: list[Any]) -> bool:
    """Whether ``error`` is the listing's own deadline (not a server's ``TimeoutError``)."""
    return isinstance(error, TimeoutError) and any(scope.cancel_called for scope in deadlines)


def _error_text(error: BaseException) -> str:
    """``Kind: message``, or the kind alone for an exception without a message."""
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


async def _transport(server: LiveServer, errlog: Any, stack: AsyncExitStack) -> Any:
    if server.url:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        # The SDK leaves a client it was given open: the stack closes it (and its sockets).
        client = httpx2.AsyncClient(headers=dict(server.headers), timeout=server.timeout)
        await stack.enter_async_context(client)
        return streamable_http_client(server.url, http_client=client)
    from mcp.client.stdio import StdioServerParameters, stdio_client

    parameters = StdioServerParameters(
        command=server.command[0],
        args=list(server.command[1:]),
        env=dict(server.env) or None,
        cwd=server.cwd,
    )
    return stdio_client(parameters, errlog=errlog)


def list_server_tools(
    server: Any, *, timeout: float = DEFAULT_TIMEOUT, name: str | None = None
) -> list[dict[str, Any]]:
    """Every tool an in-memory server object lists, through its in-process client, within
    ``timeout`` seconds (a timeout names the step it waited for); errors name the server
    ``name`` (its ``module:attribute``), else its class."""
    source = name or _class_path(server)
    timeout = _check_timeout(timeout)
    fastmcp = any(kind.__module__.split(".")[0] == "fastmcp" for kind in type(server).__mro__)
    if not fastmcp:
        _require_mcp(f"the MCP server object {source}")
    step = _Step("initialize (the in-process connection)")
    deadlines: list[Any] = []

    async def listing() -> list[Any]:
        import anyio

        with anyio.fail_after(timeout) as scope:
            deadlines.append(scope)
            if fastmcp:
                from importlib import import_module

                async with import_module("fastmcp").Client(server) as client:
                    step.what = "tools/list"
                    return list(await client.list_tools())
            from mcp import Client

            async with Client(server) as client:
                return await _all_pages(client, step)

    try:
        tools = _run(listing)
    except EntropyInputError:
        raise
    except Exception as error:
        inner = _innermost(error)
        if _deadline_hit(inner, deadlines):
            raise _failure(source, _timeout_problem(timeout, step)) from None
        raise _failure(source, f"cannot list the server's tools ({_error_text(inner)})") from None
    return tool_dicts(tools)
