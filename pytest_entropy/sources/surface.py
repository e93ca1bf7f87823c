"""Surfaces from anywhere: one function for every API, fixture and command that takes one.

:func:`load_surface` turns a source into a snapshot ``{version: 1, actions: [...]}``:

* a path (file or directory) in any surface format the CLI reads;
* a parsed value in any of those formats (snapshot, MCP ``tools/list`` result or list of
  tools, OpenAI / Anthropic / Gemini tool arrays, ...);
* MCP SDK ``Tool`` objects, an in-memory MCP server object, or a live server
  (see :mod:`pytest_entropy.sources.mcp`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from pytest_entropy.core.errors import EntropyInputError

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    # The diff (and the containment checks under it) loads with the first diff_surfaces:
    # every command that only loads a surface goes without it.
    from typing import Any

    from pytest_entropy.core.surface_diff import AcceptedLoosening, SurfaceDiff

__all__ = ["NotASurfaceError", "diff_surfaces", "load_surface"]

_OBJECT_SOURCE = "<object>"


class NotASurfaceError(EntropyInputError, TypeError):
    """A value of a type no surface reader takes (a ``TypeError`` too, for Python callers)."""


def load_surface(
    source: Any,
    *,
    surface_format: str = "auto",
    ref_prefix: str = "",
    tool_fields: bool = False,
    timeout: float | None = None,
) -> dict[str, Any]:
    """A surface snapshot from a path, a parsed value, SDK tools, a server or a live server.

    ``source`` is a path (file or directory); a parsed value in any surface format; SDK
    ``Tool`` objects or a ``ListToolsResult``; an MCP server object (listed in memory); a
    :class:`~pytest_entropy.sources.mcp.LiveServer` (``stdio_server(...)``,
    ``http_server(...)``); or a string ``mcp+stdio:COMMAND ARGS``, ``http(s)://URL`` or
    ``module:attribute`` naming a server (the module found on ``sys.path`` or in the working
    directory). ``surface_format`` names the format of a file or parsed value (``auto``:
    detect); ``ref_prefix`` goes before every ref. ``tool_fields`` keeps what each tool
    carries besides its schema (``description``, ``title``, ``annotations``,
    ``outputSchema``, ...) on its action, as ``lint`` and ``export`` read them; no hash reads
    them, and without it they are dropped. ``timeout`` is the seconds a server has to list
    its tools (default 30; a ``LiveServer``'s own when not given).

    >>> load_surface({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
    {'version': 1, 'actions': [{'ref': 'echo', 'inputSchema': {'type': 'object'}}]}
    """
    from pytest_entropy.ingest.surfaces import load_surface as load_surface_file

    if isinstance(source, os.PathLike) or (isinstance(source, str) and ":" not in source):
        # A path: every server spelling holds a colon (mcp+stdio:, a URL, module:attribute),
        # so the servers' module is not loaded for a file or directory.
        return load_surface_file(
            source, surface_format=surface_format, ref_prefix=ref_prefix, tool_fields=tool_fields
        )

    from dataclasses import replace

    from pytest_entropy.ingest.surfaces import surface_from_parsed
    from pytest_entropy.sources import mcp

    deadline = mcp.DEFAULT_TIMEOUT if timeout is None else timeout

    def from_tools(tools: list[dict[str, Any]], where: str) -> dict[str, Any]:
        # A server's tool names are its call targets: listing one twice is a broken server.
        # (Files may repeat a name: directories of historical snapshots do.)
        seen: set[Any] = set()
        for position, tool in enumerate(tools):
            if tool["name"] in seen:
                raise EntropyInputError(
                    f"tool {position} ({tool['name']}) is listed twice", source=where
                )
            seen.add(tool["name"])
        return surface_from_parsed(
            {"tools": tools},
            source=where,
            surface_format="mcp",
            ref_prefix=ref_prefix,
            tool_fields=tool_fields,
        )

    if isinstance(source, str):
        spec = mcp.parse_server_spec(source, timeout=deadline)
        if isinstance(spec, mcp.LiveServer):
            return from_tools(mcp.list_live_tools(spec), spec.describe())
        if isinstance(spec, str):
            with mcp.working_directory_importable():
                server = mcp.import_server(spec)
                if not mcp.is_server_object(server):
                    raise NotASurfaceError(
                        f"not an MCP server object: a {type(server).__name__}", source=spec
                    )
                return from_tools(mcp.list_server_tools(server, timeout=deadline, name=spec), spec)
    if isinstance(source, (str, os.PathLike)):
        return load_surface_file(
            source, surface_format=surface_format, ref_prefix=ref_prefix, tool_fields=tool_fields
        )
    if isinstance(source, mcp.LiveServer):
        if timeout is not None:
            source = replace(source, timeout=timeout)
        return from_tools(mcp.list_live_tools(source), source.describe())
    if mcp.is_server_object(source):
        listed = mcp.list_server_tools(source, timeout=deadline)
        return from_tools(listed, type(source).__name__)
    tools = getattr(source, "tools", None)
    if not isinstance(source, (dict, list)) and isinstance(tools, list):
        source = tools  # an SDK ListToolsResult
    if isinstance(source, (list, tuple)) and source and all(map(mcp.is_tool_object, source)):
        return from_tools(mcp.tool_dicts(list(source)), "<SDK tools>")
    if isinstance(source, (dict, list)):
        return surface_from_parsed(
            source,
            source=_OBJECT_SOURCE,
            surface_format=surface_format,
            ref_prefix=ref_prefix,
            tool_fields=tool_fields,
        )
    raise NotASurfaceError(
        f"not a surface: a {type(source).__name__} (expected a path, a parsed tool list or"
        " surface snapshot, MCP Tool objects, an MCP server object or a live server)",
        source=_OBJECT_SOURCE,
    )


def diff_surfaces(
    before: Any,
    after: Any,
    *,
    surface_format: str = "auto",
    accepted: Iterable[AcceptedLoosening] = (),
) -> SurfaceDiff:
    """Classify every change from ``before`` to ``after`` (any two surface sources).

    >>> tool = lambda schema: {"tools": [{"name": "s", "inputSchema": schema}]}
    >>> diff = diff_surfaces(tool({"type": "object", "properties": {"q": {"type": "string"}}}),
    ...                      tool({"type": "object", "properties": {"q": {}}}))
    >>> [change.text() for change in diff.loosened]
    ['s:q: type ("string" → null)']
    """
    from pytest_entropy.core.surface_diff import diff_snapshots

    return diff_snapshots(
        load_surface(before, surface_format=surface_format),
        load_surface(after, surface_format=surface_format),
        accepted=accepted,
    )
