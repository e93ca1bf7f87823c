"""``pytest-entropy export``: write the surface snapshot, sorted by ref, of a file or a live
MCP server (``--mcp -- COMMAND ARGS`` over stdio, ``--mcp-url URL`` over streamable HTTP)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EXIT_OK,
    add_format_options,
    add_json,
    add_state_options,
    add_surface_option,
    print_json,
    state_dir_of,
    surface_of,
)
from pytest_entropy.core.canonical import EXPORT_INDENT_DEPTH, file_text
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.inputs import live_surface_snapshot
from pytest_entropy.core.status import surface_hash
from pytest_entropy.report.names import terminal_text
from pytest_entropy.sources.agent_dir import EXPORTED_SURFACE
from pytest_entropy.state.files import ensure_state_directory
from pytest_entropy.state.store import write_file_atomic


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "export", help="write the surface snapshot (sorted by ref) for hashing and sharing"
    )
    add_surface_option(parser)
    parser.add_argument(
        "--mcp",
        action="store_true",
        help="list a live MCP server started as the COMMAND after `--` (stdio)",
    )
    parser.add_argument("--mcp-url", metavar="URL", help="list a streamable-HTTP MCP server")
    parser.add_argument(
        "--mcp-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds the server has to list its tools (default 30)",
    )
    parser.add_argument(
        "--mcp-env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="environment for the stdio server (repeatable; the SDK passes only a minimal one)",
    )
    parser.add_argument(
        "--mcp-header",
        action="append",
        default=[],
        metavar="KEY:VALUE",
        help="HTTP header for --mcp-url (repeatable)",
    )
    parser.add_argument(
        "server_command", nargs="*", metavar="COMMAND", help="with --mcp: the server command"
    )
    parser.add_argument("--out", metavar="FILE", help="where (default: STATE_DIR/surface.json)")
    add_format_options(parser, sessions=False)
    add_state_options(parser)
    add_json(parser)
    parser.set_defaults(handler=run)


def _pairs(items: list[str], separator: str, flag: str) -> dict[str, str]:
    pairs = {}
    for item in items:
        key, found, value = item.partition(separator)
        if not found or not key.strip():
            raise EntropyInputError(f"{flag} takes KEY{separator}VALUE, got {item!r}")
        pairs[key.strip()] = value.strip() if separator == ":" else value
    return pairs


def _source(args: argparse.Namespace) -> Any:
    """The one surface source the options name: a file, a stdio command or a URL."""
    from pytest_entropy.sources.mcp import http_server, stdio_server

    chosen = [bool(args.surface), bool(args.mcp), bool(args.mcp_url)]
    if sum(chosen) != 1:
        raise EntropyInputError(
            "export takes exactly one of --surface, --mcp -- COMMAND, --mcp-url"
        )
    if args.server_command and not args.mcp:
        raise EntropyInputError(f"unexpected arguments {' '.join(args.server_command)!r} (--mcp?)")
    if args.mcp_timeout <= 0:
        raise EntropyInputError("--mcp-timeout must be positive")
    if args.mcp:
        if not args.server_command:
            raise EntropyInputError("--mcp needs the server command after `--`")
        env = _pairs(args.mcp_env, "=", "--mcp-env")
        return stdio_server(args.server_command, env=env, timeout=args.mcp_timeout)
    if args.mcp_url:
        headers = _pairs(args.mcp_header, ":", "--mcp-header")
        return http_server(args.mcp_url, headers=headers, timeout=args.mcp_timeout)
    return args.surface


def run(args: argparse.Namespace, out: TextIO) -> int:
    snapshot = live_surface_snapshot(surface_of(args, _source(args))["actions"])
    if args.out:
        target = Path(args.out)
    else:
        target = state_dir_of(args) / EXPORTED_SURFACE
        ensure_state_directory(target.parent)
    # Deep schemas would grow with the square of their depth: compact below 32 levels.
    written = write_file_atomic(target, file_text(snapshot, indent_depth=EXPORT_INDENT_DEPTH))
    path = target.resolve()
    if args.json:
        print_json(
            out,
            {
                "path": str(path),
                "actions": len(snapshot["actions"]),
                "digest": surface_hash(snapshot),
                "written": written,
            },
        )
    else:
        out.write(
            f"Exported {len(snapshot['actions'])} surface actions → {terminal_text(str(path))}\n"
        )
    return EXIT_OK
