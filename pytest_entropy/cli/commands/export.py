"""``pytest-entropy export``: write the surface snapshot, sorted by ref, of a file or a live
MCP server (``--mcp -- COMMAND ARGS`` over stdio, ``--mcp-url URL`` over streamable HTTP).

Each action keeps what its tool carries besides the schema (description, title, annotations,
output schema, ...), so ``lint`` reads the export as it reads the server; every hash reads
only ``ref`` and ``inputSchema`` (the ``--json`` digest is the reference's export's).
Everything after ``--`` is the server command: ``--out``, ``--state-dir`` and ``--agent-dir``
go before it (after it without their own value before it, they are refused as ambiguous).
"""

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
from pytest_entropy.core.inputs import live_surface_snapshot, without_tool_fields
from pytest_entropy.core.status import surface_hash
from pytest_entropy.report.names import terminal_text
from pytest_entropy.sources.agent_dir import EXPORTED_SURFACE
from pytest_entropy.sources.mcp import DEFAULT_TIMEOUT
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
        "server_command",
        nargs="*",
        metavar="COMMAND",
        help="with --mcp: the server command, after `--` (every word after it is the"
        " server's: give --out before `--`)",
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
    timeout = args.mcp_timeout if args.mcp_timeout is not None else DEFAULT_TIMEOUT
    if args.mcp:
        if not args.server_command:
            raise EntropyInputError("--mcp needs the server command after `--`")
        _check_destination(args)
        env = _pairs(args.mcp_env, "=", "--mcp-env")
        return stdio_server(args.server_command, env=env, timeout=timeout)
    if args.mcp_url:
        headers = _pairs(args.mcp_header, ":", "--mcp-header")
        return http_server(args.mcp_url, headers=headers, timeout=timeout)
    return args.surface


# Export's flags that say where it writes: after `--` they are the server's words, and
# without a value of their own before `--` the command would write where nobody asked.
_DESTINATION_FLAGS = (("--out", "out"), ("--state-dir", "state_dir"), ("--agent-dir", "agent_dir"))


def _check_destination(args: argparse.Namespace) -> None:
    """Refuse ``export --mcp -- CMD --out F`` (``--out`` given only after ``--``): the words
    after ``--`` go to the server, so the file would silently land at the default path."""
    for flag, dest in _DESTINATION_FLAGS:
        if getattr(args, dest, None):
            continue
        for word in args.server_command[1:]:
            if word == flag or word.startswith(flag + "="):
                raise EntropyInputError(
                    f"{flag} after `--` is a word of the server command (everything after `--`"
                    f" is passed to the server), so export would write to the default path;"
                    f" give {flag} before `--` (export {flag} FILE --mcp -- COMMAND ...); to"
                    f" pass {flag} to the server too, also give export's own {flag} before `--`"
                )


def run(args: argparse.Namespace, out: TextIO) -> int:
    surface = surface_of(args, _source(args), tool_fields=True)
    snapshot = live_surface_snapshot(surface["actions"], tool_fields=True)
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
                # Over ref and inputSchema only: the digest of the reference's export.
                "digest": surface_hash(
                    {"version": 1, "actions": without_tool_fields(snapshot["actions"])}
                ),
                "written": written,
            },
        )
    else:
        out.write(
            f"Exported {len(snapshot['actions'])} surface actions → {terminal_text(str(path))}\n"
        )
    return EXIT_OK
