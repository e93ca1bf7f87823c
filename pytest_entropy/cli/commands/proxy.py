"""``pytest-entropy proxy``: record, enforce and compile live between any MCP client and
server (``-- CMD ARGS...`` over stdio; see docs/proxy.md)."""

from __future__ import annotations

import argparse
import os
import shlex
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pytest_entropy.cli.common import add_state_options, state_dir_of
from pytest_entropy.cli.generation import add_metric_version_option, metric_version_of
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.sources.agent_dir import state_sessions_dir
from pytest_entropy.state.config import add_command_flag, load_config
from pytest_entropy.state.files import ensure_state_directory, os_error_reason
from pytest_entropy.state.store import StoreError

if TYPE_CHECKING:
    from pytest_entropy.run.proxy import ProxyHub


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "proxy",
        help="sit between an MCP client and server: record calls, enforce the compiled surface",
    )
    parser.add_argument(
        "--record",
        metavar="DIR",
        help="where the session files go (default: STATE_DIR/sessions)",
    )
    parser.add_argument(
        "--artifact",
        metavar="FILE",
        help="the compiled surface to enforce (default: STATE_DIR/compiled.json when present)",
    )
    parser.add_argument(
        "--no-enforce",
        action="store_true",
        help="record and forward only: enforce no compiled surface",
    )
    parser.add_argument(
        "--ref-prefix",
        metavar="PREFIX",
        help="what goes before every tool name in a ref (default: the server's name and a dot)",
    )
    parser.add_argument(
        "--compile",
        action="store_true",
        help="compile in the background as calls are recorded (the watch loop), and tell"
        " clients to list again when the surface changes",
    )
    parser.add_argument("--grace-ms", type=int, metavar="MS", help="with --compile: wait (250)")
    parser.add_argument("--poll", action="store_true", help="with --compile: poll, no inotify")
    add_command_flag(parser, "redact-values")
    add_metric_version_option(parser)
    add_command_flag(parser, "cwd", help="the current project (default: here)")
    add_state_options(parser)
    parser.add_argument(
        "--upstream",
        metavar="URL",
        help="a streamable-HTTP MCP server to proxy (with --listen) instead of a command",
    )
    parser.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help="with --upstream: where to serve (a bare PORT binds 127.0.0.1)",
    )
    parser.add_argument(
        "server_command", nargs="*", metavar="COMMAND", help="the MCP server command (after --)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from pytest_entropy.report.names import terminal_line
    from pytest_entropy.run.proxy import ArtifactHolder, ProxyHub
    from pytest_entropy.run.proxy_artifact import proxy_notice, set_notice_renderer
    from pytest_entropy.run.proxy_stdio import run_stdio_proxy

    set_notice_renderer(terminal_line)

    if bool(args.server_command) == bool(args.upstream):
        raise EntropyInputError(
            "proxy takes the MCP server command after `--`, or --upstream URL --listen HOST:PORT"
        )
    listen: tuple[str, int] | None = None
    if args.upstream:
        from pytest_entropy.run.proxy_http import parse_listen, parse_upstream

        if not args.upstream.startswith(("http://", "https://")):
            raise EntropyInputError(f"--upstream takes an http(s):// URL, got {args.upstream!r}")
        if not args.listen:
            raise EntropyInputError("--upstream needs --listen HOST:PORT")
        try:
            listen = parse_listen(args.listen)
        except ValueError as error:
            raise EntropyInputError(str(error)) from None
        try:  # the MCP SDK's HTTP stack
            import httpx2  # noqa: F401
            import starlette  # noqa: F401
            import uvicorn  # noqa: F401
        except ImportError:
            from pytest_entropy.sources.mcp import MCP_EXTRA

            raise EntropyInputError(
                f"proxy --upstream needs the MCP SDK, which is not installed: {MCP_EXTRA}"
            ) from None
        try:
            parse_upstream(args.upstream)
        except ValueError as error:
            raise EntropyInputError(str(error)) from None
    elif args.listen:
        raise EntropyInputError("--listen goes with --upstream URL")
    cwd = args.cwd or os.getcwd()
    state_dir = state_dir_of(args)
    config = load_config(
        cwd,
        {
            "state_dir": str(state_dir),
            "grace_ms": args.grace_ms,
            "redact_values": args.redact_values,
        },
    )
    record = Path(args.record) if args.record else state_sessions_dir(state_dir)
    compiled = state_dir / "compiled.json"
    artifact_path = Path(args.artifact) if args.artifact else compiled
    if args.compile and args.artifact and Path(args.artifact).resolve() != compiled.resolve():
        raise EntropyInputError(
            "--compile enforces what it compiles (STATE_DIR/compiled.json): drop --artifact"
        )
    if args.artifact and not Path(args.artifact).exists():
        raise EntropyInputError("artifact not found", source=args.artifact)
    enforce = config.compile and not args.no_enforce
    # Nothing is served before both directories are known to take files: a recording the
    # disk refuses would otherwise be lost call by call (docs/decisions.md).
    _writable(state_dir, "--state-dir", state=True)
    _writable(record, "--record")
    # The generation follows --metric-version, else the configuration, as for every command.
    metric_version = metric_version_of(args)
    if not config.compile:
        where = config.sources.get("compile", "the configuration")
        proxy_notice(
            f"entropy: proxy: compile and enforcement are off (compile: false in {where});"
            " recording only"
        )
    hub = ProxyHub(
        record_dir=record,
        state_dir=state_dir,
        artifact=ArtifactHolder(artifact_path, enabled=enforce, metric_version=metric_version),
        ref_prefix=args.ref_prefix,
        redact=config.redact_values,
        advertise_list_changed=bool(args.compile and config.compile),
    )
    listener = None
    if listen is not None:
        from pytest_entropy.run.proxy_http import bind_listener

        listener = bind_listener(*listen)
    target = args.upstream or shlex.join(args.server_command)
    proxy_notice(f"entropy: proxy: {target} · recording to {record} · {_enforcing(hub)}")
    live = None
    if args.compile and config.compile:
        from pytest_entropy.run.proxy_compile import LiveCompile

        live = LiveCompile(
            hub,
            record,
            window=config.window,
            grace_seconds=config.grace_ms / 1000,
            poll_seconds=config.poll_ms / 1000,
            use_inotify=not args.poll,
            redact_values=config.redact_values,
        )
    try:
        if listener is not None:
            from pytest_entropy.run.proxy_http import run_http_proxy

            status = run_http_proxy(hub, args.upstream, listener)
        else:
            status = run_stdio_proxy(hub, args.server_command)
    finally:
        if listener is not None:
            listener.close()
        if live is not None:
            live.stop()
    return status


def _writable(directory: Path, option: str, *, state: bool = False) -> None:
    """Create ``directory`` if needed and prove a file can be made in it, or stop with a
    usage error naming the option, the path and why (a file in its place, read-only)."""
    try:
        if state:
            ensure_state_directory(directory)  # with its .gitignore, as every command does
        else:
            directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory, prefix=".entropy-probe-"):
            pass
    except StoreError as error:
        raise EntropyInputError(f"{option}: {error}") from None
    except OSError as error:
        reason = os_error_reason(error, directory)
        raise EntropyInputError(f"{option} {directory}: cannot write there: {reason}") from None


def _enforcing(hub: ProxyHub) -> str:
    """What the banner says is enforced: the artifact is read now, as each message reads it
    (a damaged one says so on stderr first)."""
    holder = hub.artifact
    if not holder.enabled:
        return "not enforcing"
    if holder.current() is not None:
        return f"enforcing {holder.path}"
    if holder.path is not None and not os.path.lexists(holder.path):
        return f"no compiled artifact yet at {holder.path}: enforcing nothing until one is written"
    return f"not enforcing {holder.path} (unusable, see above): enforcing nothing until it is fixed"
