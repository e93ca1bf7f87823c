"""``pytest-entropy watch``: the autonomous compile loop over a live session directory."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    add_allow_empty,
    add_command_flag,
    add_format_options,
    add_json,
    add_session_dir_options,
    allow_empty_of,
    load_optional_repairs,
    read_options_of,
    surface_of,
)
from pytest_entropy.cli.generation import (
    add_metric_version_option,
    check_state_generation,
    metric_version_of,
)
from pytest_entropy.cli.steering import min_gain_of
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.steering import Steering
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.report.names import repair_surrogates, terminal_text
from pytest_entropy.run.empty import EmptyCorpusError, empty_corpus_message
from pytest_entropy.run.watch import CompileLoop, Notice, Watcher
from pytest_entropy.sources.agent_dir import (
    agent_layout,
    default_state_dir,
    machine_session_files,
    project_session_files,
)
from pytest_entropy.sources.locate import SessionFile, directory_session_files
from pytest_entropy.state.config import load_config


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "watch", help="compile continuously as agents append to session files"
    )
    add_session_dir_options(parser)
    add_command_flag(parser, "surface", help="the declared surface snapshot")
    add_command_flag(parser, "repairs")
    add_command_flag(parser, "state-dir")
    add_command_flag(parser, "cwd", help="the current project (default: here)")
    parser.add_argument("--grace-ms", type=int, metavar="MS", help="wait after a change (250)")
    parser.add_argument("--poll", action="store_true", help="poll instead of inotify")
    parser.add_argument("--once", action="store_true", help="run one compile tick and exit")
    add_format_options(parser)
    add_metric_version_option(parser)
    for name in ("partial", "only", "exclude", "min-gain", "redact-values"):
        add_command_flag(parser, name)
    add_allow_empty(parser)
    add_json(parser)
    parser.set_defaults(handler=run)


def _emit(out: TextIO, notice: Notice, as_json: bool) -> None:
    # JSON keeps exact values (a lone surrogate as \\udxxx, as the JSON path writes it); a
    # notice's text is terminal text.
    shown = json.dumps(notice.to_json(), ensure_ascii=False) if as_json else notice.text
    out.write((repair_surrogates(shown) if as_json else terminal_text(shown)) + "\n")
    out.flush()


def _steering(args: argparse.Namespace, partial: bool) -> Steering | None:
    """The loop's opt-in steering (``None``: the reference's compile)."""
    steering = Steering(
        partial=partial,
        only=tuple(args.only or ()),
        exclude=tuple(args.exclude or ()),
        min_gain=min_gain_of(args.min_gain),
    )
    return None if steering == Steering() else steering


def run(args: argparse.Namespace, out: TextIO) -> int:
    metric_version = metric_version_of(args)
    cwd = args.cwd or os.getcwd()
    config = load_config(
        cwd,
        {
            "sessions": [args.sessions] if args.sessions else None,
            "agent_dir": args.agent_dir,
            "surface": args.surface,
            "repairs": args.repairs,
            "state_dir": args.state_dir,
            "grace_ms": args.grace_ms,
            "strict": True if args.strict else None,
            "partial": args.partial,
            "redact_values": args.redact_values,
        },
    )
    if not config.compile:
        where = config.sources.get("compile", "the configuration")
        out.write(
            terminal_text(f"entropy: the compile loop is disabled (compile: false in {where})")
            + "\n"
        )
        return EXIT_OK
    if config.agent_dir and not args.sessions:
        agent = Path(config.agent_dir)
        if not agent.is_dir():
            raise EntropyInputError("agent directory not found", source=str(agent))
        layout = agent_layout(agent, args.agent_kind)
        if args.format == "auto":
            args.format = layout.session_format
        state_dir = Path(config.state_dir) if config.state_dir else layout.state_dir(cwd)
        watch_paths = [layout.project_dir(cwd) if args.project else layout.sessions_root]
        exported = layout.surface_path(cwd)
        surface_path: str | None = config.surface or str(exported)
        agent_repairs = layout.repairs_path()
        repairs_path: str | None = config.repairs or (
            str(agent_repairs) if agent_repairs is not None and agent_repairs.is_file() else None
        )
        kind = layout.kind

        def window() -> Sequence[SessionFile]:
            if args.project:
                return project_session_files(agent, cwd, config.window, kind)
            return machine_session_files(agent, cwd, config.window, kind)

    elif config.sessions:
        directory = Path(config.sessions[0])
        if not directory.is_dir():
            raise EntropyInputError("sessions directory not found", source=str(directory))
        watch_paths = [directory]
        state_dir = Path(config.state_dir) if config.state_dir else default_state_dir(cwd)
        surface_path = config.surface
        repairs_path = config.repairs

        def window() -> Sequence[SessionFile]:
            return directory_session_files(directory, config.window)

    else:
        raise EntropyInputError("watch needs --sessions DIR or --agent-dir DIR")
    if not surface_path or not Path(surface_path).is_file():
        raise EntropyInputError(
            "watch needs the declared surface it compiles against (--surface FILE)",
            source=surface_path,
        )
    check_state_generation(args, state_dir)
    surface = surface_of(args, surface_path)
    steering = _steering(args, config.partial)
    if steering is not None and metric_version >= 3:
        raise EntropyInputError(
            "steering chooses among metric v2's restrictions; metric v3 compiles none"
            " (drop the steering options or use --metric-version 2)"
        )
    loop = CompileLoop(
        window=window,
        surface=surface,
        state_dir=state_dir,
        repairs=load_optional_repairs(repairs_path),
        options=read_options_of(args, surface),
        strict=config.strict,
        steering=steering,
        redact_values=config.redact_values,
        metric_version=metric_version,
    )
    if args.once:
        result = loop.tick()
        if result.empty and not allow_empty_of(args):
            # One tick that compiled nothing from nothing is a failure; a running watch
            # waits for sessions instead (it says so once).
            diagnostics = result.diagnostics or ScanDiagnostics()
            raise EmptyCorpusError(
                f"watch --once: {empty_corpus_message(diagnostics, args.format or 'auto')}"
                f" (window: {', '.join(map(str, watch_paths))})"
            )
        for notice in result.notices:
            _emit(out, notice, args.json)
        if args.json:
            out.write(
                json.dumps({"event": "tick", "status": result.status, "written": result.written})
                + "\n"
            )
        return EXIT_USAGE if result.status == "unreadable" else EXIT_OK
    watcher = Watcher(
        loop,
        watch_paths,
        lambda notice: _emit(out, notice, args.json),
        grace_seconds=config.grace_ms / 1000,
        poll_seconds=config.poll_ms / 1000,
        use_inotify=not args.poll,
    )

    def shutdown(signum: int, _frame: Any) -> None:
        watcher.stop()

    previous = {sig: signal.signal(sig, shutdown) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        sys.stderr.write(
            terminal_text(
                f"entropy: watching {', '.join(map(str, watch_paths))} · state in {state_dir}"
                " · Ctrl-C to stop"
            )
            + "\n"
        )
        watcher.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return EXIT_OK
