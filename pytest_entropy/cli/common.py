"""Helpers shared by the command modules: exit codes, options, output."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pytest_entropy.cli.exits import EXIT_FAILED, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE
from pytest_entropy.cli.generation import add_metric_version_option, metric_version_of
from pytest_entropy.cli.terminal import TerminalProgress, progress_wanted
from pytest_entropy.core.canonical import file_text
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.typing_lite import overload
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.inflation import DEFAULT_MAX_INFLATED_BYTES
from pytest_entropy.ingest.paths import as_path
from pytest_entropy.ingest.surfaces import load_repairs_with_notes
from pytest_entropy.report.names import terminal_line
from pytest_entropy.run.corpus import EngineOptions, SourceFile, source_files
from pytest_entropy.run.empty import check_not_empty
from pytest_entropy.run.executor import ENGINES, SCHEDULER_TIMEOUT
from pytest_entropy.sources.locate import session_source_listing
from pytest_entropy.sources.urls import is_url
from pytest_entropy.state.config import add_command_flag, load_config
from pytest_entropy.state.values import positive_int, positive_seconds, storage_options_value

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from pathlib import Path

    # Names of annotations only: a command that reads sessions and writes nothing (measure)
    # loads neither the pool, the store nor the records' dataclasses through this module.
    from typing import Any, Literal, TextIO

    from pytest_entropy.core.pool import PoolMerge
    from pytest_entropy.core.records import RepairRow
    from pytest_entropy.core.regex import Unenforced
    from pytest_entropy.state.store import StoreKind

__all__ = [
    "EMPTY_SURFACE",
    "EXIT_FAILED",
    "EXIT_INTERNAL",
    "EXIT_OK",
    "EXIT_USAGE",
    "add_allow_empty",
    "add_command_flag",
    "add_corpus_inputs",
    "add_corpus_reading",
    "add_engine_options",
    "add_format_options",
    "add_json",
    "add_mcp_timeout_option",
    "add_repairs_option",
    "add_session_dir_options",
    "add_sessions_option",
    "add_state_options",
    "add_surface_option",
    "allow_empty_of",
    "check_corpus",
    "engine_options_of",
    "foreign_lines",
    "load_optional_repairs",
    "load_state_file",
    "max_inflated_bytes_of",
    "optional_surface_of",
    "positive_int",
    "print_json",
    "print_lines",
    "read_options_of",
    "session_sources_of",
    "state_dir_of",
    "storage_options_of",
    "surface_of",
]

EMPTY_SURFACE: dict[str, Any] = {"version": 1, "actions": []}


def add_surface_option(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    add_command_flag(parser, "surface", required=required)
    add_mcp_timeout_option(parser)  # the surface may be a live server


def mcp_seconds(text: str) -> float:
    """``--mcp-timeout``'s value: a positive number of seconds."""
    try:
        return positive_seconds(float(text), "--mcp-timeout", "command line")
    except (ValueError, EntropyInputError):
        raise argparse.ArgumentTypeError(f"not a positive number of seconds: {text!r}") from None


def add_mcp_timeout_option(parser: argparse.ArgumentParser) -> None:
    """``--mcp-timeout SECONDS``: how long a live MCP server has to list its tools."""
    parser.add_argument(
        "--mcp-timeout",
        type=mcp_seconds,
        default=None,
        metavar="SECONDS",
        help="seconds a live MCP server (mcp+stdio:, a URL, module:attribute) has to start,"
        " answer initialize and list its tools (default 30, or mcp-timeout in the"
        " configuration)",
    )


def add_repairs_option(parser: argparse.ArgumentParser) -> None:
    add_command_flag(parser, "repairs")


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def print_json(out: TextIO, value: Any) -> None:
    """The §2.8 serialisation: 2-space JSON with JavaScript number text, then a newline."""
    out.write(file_text(value))


def print_lines(out: TextIO, lines: list[str], *, spec: bool = False) -> None:
    """Write ``lines``; on a terminal they are styled (cli.terminal) unless ``spec`` says
    they are one of the spec's own displays, whose text is exact.

    A line holds no control character of ours, so every one in it (a newline included) came
    from a name or a path and is written as a visible escape (``report.names.terminal_text``);
    the spec's displays too, which differ only for names that hold such characters."""
    style = None if spec else getattr(out, "style_line", None)
    for line in lines:
        line = terminal_line(line)
        out.write((style(line) if style is not None else line) + "\n")


def load_optional_repairs(path: str | None) -> list[RepairRow] | None:
    """The repair rows at ``path`` (``None`` without one); a row the reference counts
    although it is not a well-formed alias is named on stderr, outside every report."""
    if not path:
        return None
    rows, notes = load_repairs_with_notes(path)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return rows


@overload
def load_state_file(
    path: str | Path, kind: StoreKind, *, required: Literal[True] = ...
) -> dict[str, Any]: ...


@overload
def load_state_file(
    path: str | Path, kind: StoreKind, *, required: bool
) -> dict[str, Any] | None: ...


def load_state_file(
    path: str | Path, kind: StoreKind, *, required: bool = True
) -> dict[str, Any] | None:
    """The compiled artifact or observation pool at ``path``; a damaged file is an input
    error naming it, and so is a missing one when ``required`` (else ``None``)."""
    from pytest_entropy.state.store import load_path

    loaded = load_path(as_path(path), kind)
    if loaded.error is not None:
        raise EntropyInputError(loaded.error, source=str(path))
    if loaded.file is None and required:
        raise EntropyInputError(f"{kind.label} file not found", source=str(path))
    return loaded.file


def add_sessions_option(
    parser: argparse.ArgumentParser, *, required: bool = True, help: str | None = None
) -> None:
    """``--sessions PATH...``: files, directories or URLs (the shared flag of the table)."""
    add_command_flag(parser, "sessions", required=required, help=help)


def add_state_options(parser: argparse.ArgumentParser) -> None:
    """``--state-dir D`` or ``--agent-dir A`` (Pi: state under ``A/fabric/entropy``; Claude
    Code: the project's ``.entropy/``), and ``--agent-kind``."""
    where = parser.add_mutually_exclusive_group()
    add_command_flag(where, "state-dir")
    add_command_flag(
        where,
        "agent-dir",
        help="an agent directory: Pi's (state in fabric/entropy/) or Claude Code's (state in"
        " the project's .entropy/)",
    )
    add_command_flag(parser, "agent-kind")


def add_session_dir_options(
    parser: argparse.ArgumentParser, *, required: bool = False, sessions_help: str | None = None
) -> None:
    """``--sessions-dir D`` or ``--agent-dir A`` (one of them ``required``), ``--agent-kind``
    and ``--project``: where the commands that follow an agent find its sessions
    (``sessions_help``: what this command takes for ``--sessions``)."""
    where = parser.add_mutually_exclusive_group(required=required)
    add_command_flag(where, "sessions-dir", help=sessions_help)
    add_command_flag(where, "agent-dir")
    add_command_flag(parser, "agent-kind")
    parser.add_argument(
        "--project",
        action="store_true",
        help="with --agent-dir: only the current directory's sessions",
    )


def state_dir_of(args: argparse.Namespace) -> Path:
    """The state directory the options name: ``--state-dir``, else the agent directory's
    (Pi's ``fabric/entropy/``, the project's ``.entropy/`` for Claude Code), else
    ``.entropy/`` in the project (``--cwd``, or the working directory)."""
    from pytest_entropy.sources.agent_dir import agent_layout, default_state_dir

    cwd = getattr(args, "cwd", None) or None
    if getattr(args, "state_dir", None):
        return as_path(args.state_dir)
    if getattr(args, "agent_dir", None):
        return agent_layout(args.agent_dir, getattr(args, "agent_kind", None)).state_dir(cwd)
    return default_state_dir(cwd)


def surface_of(args: argparse.Namespace, path: Any, *, tool_fields: bool = False) -> dict[str, Any]:
    """Load a surface (a file, ``mcp+stdio:``, a URL, ``module:attribute`` or a server) with
    whatever format and ``--mcp-timeout`` options the command registered; ``tool_fields``
    keeps each tool's description, title, annotations, ... (``lint``, ``export``)."""
    from pytest_entropy.sources.surface import load_surface as load_any_surface

    return load_any_surface(
        path,
        surface_format=getattr(args, "surface_format", None) or "auto",
        ref_prefix=getattr(args, "ref_prefix", None) or "",
        tool_fields=tool_fields,
        timeout=getattr(args, "mcp_timeout", None),
    )


def optional_surface_of(args: argparse.Namespace) -> dict[str, Any] | None:
    """The ``--surface`` the command was given, loaded, or ``None`` without one."""
    return surface_of(args, args.surface) if args.surface else None


def read_options_of(args: argparse.Namespace, surface: dict[str, Any] | None) -> ReadOptions:
    """Session-reading options from the command line (format, ref prefix and surface, and
    the storage options for session URLs)."""
    return ReadOptions(
        session_format=getattr(args, "format", None) or "auto",
        surface=surface,
        ref_prefix=getattr(args, "ref_prefix", None) or "",
        redact=bool(getattr(args, "redact", False)),
        storage_options=_storage_options_of(args),
        max_inflated_bytes=max_inflated_bytes_of(args),
        metric_version=metric_version_of(args),
    )


def max_inflated_bytes_of(args: argparse.Namespace) -> int:
    """``--max-inflated-bytes`` (or ``max-inflated-bytes`` configured): a positive integer;
    1 GiB when neither gives one."""
    value = getattr(args, "max_inflated_bytes", None)
    if value is None:
        return DEFAULT_MAX_INFLATED_BYTES
    if type(value) is not int or value < 1:  # a configured value the table did not check
        raise EntropyInputError(
            f"max-inflated-bytes must be a positive number of bytes, not {str(value)[:40]!r}"
        )
    return value


def _storage_options_of(args: argparse.Namespace) -> dict[str, Any] | None:
    return storage_options_of(args, getattr(args, "sessions", None) or ())


def storage_options_of(
    args: argparse.Namespace, sources: str | Sequence[str]
) -> dict[str, Any] | None:
    """``--storage-options JSON``, else ``storage-options`` of the project configuration,
    which is read only when one of ``sources`` is a URL (local runs never look for it)."""
    text = getattr(args, "storage_options", None)
    if text is not None:
        import json  # only for the option: most runs never parse JSON here

        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            # The decoder's message gives a position, never the text (it may hold a secret).
            raise EntropyInputError(f"--storage-options is not valid JSON: {error}") from None
        return storage_options_value(value, "--storage-options", "command line")
    if isinstance(sources, str):
        sources = [sources]
    if any(is_url(source) for source in sources):
        return load_config(getattr(args, "cwd", None)).storage_options
    return None


def session_sources_of(args: argparse.Namespace, options: ReadOptions) -> list[SourceFile]:
    """The files ``--sessions`` names (local paths or fsspec URLs), as engine map items; a
    directory walk's ``--surface`` / ``--repairs`` files are surfaces, never sessions."""
    exclude = surface_files_of(args)
    listing = session_source_listing(args.sessions, options, exclude)
    return source_files(listing.files, listing.skipped)


def surface_files_of(args: argparse.Namespace) -> list[str]:
    """The local files ``--surface`` and ``--repairs`` name (a directory walk skips them)."""
    named = (getattr(args, "surface", None), getattr(args, "repairs", None))
    return [path for path in named if isinstance(path, str) and not is_url(path)]


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """``--jobs N``, ``--engine {local,processes,dask}`` and ``--scheduler ADDRESS``."""
    parser.add_argument(
        "--jobs", type=positive_int, default=1, metavar="N", help="worker processes"
    )
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        help="where to run: local (default), processes (the default when --jobs > 1) or "
        "dask (needs the dask extra)",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="Dask scheduler address (implies --engine dask; without it the dask engine "
        "starts a local cluster of --jobs workers)",
    )
    parser.add_argument(
        "--scheduler-timeout",
        type=_seconds,
        metavar="S",
        help="give up on a --scheduler that does not answer within S seconds (default 10, "
        "or scheduler-timeout in [tool.entropy])",
    )


def _seconds(text: str) -> float:
    try:
        return positive_seconds(float(text), "--scheduler-timeout", "command line")
    except (ValueError, EntropyInputError):
        raise argparse.ArgumentTypeError(f"not a positive number of seconds: {text!r}") from None


def engine_options_of(args: argparse.Namespace) -> EngineOptions:
    """The engine the options name: ``--jobs N`` (N > 1) alone means processes,
    ``--scheduler`` alone means dask."""
    engine = args.engine or (
        "dask" if args.scheduler is not None else "processes" if args.jobs > 1 else "local"
    )
    if args.scheduler is not None and engine != "dask":
        raise EntropyInputError("--scheduler needs --engine dask")
    timeout = getattr(args, "scheduler_timeout", None)
    if timeout is None:
        # The configuration is read only when a scheduler will be contacted.
        timeout = load_config().scheduler_timeout if args.scheduler else SCHEDULER_TIMEOUT
    progress = None
    if progress_wanted(sys.stderr, getattr(args, "no_progress", False)):
        progress = TerminalProgress(sys.stderr)
    return EngineOptions(
        engine, args.jobs, args.scheduler, scheduler_timeout=timeout, progress=progress
    )


def unsupported_pattern_lines(met: Unenforced) -> list[str]:
    """Notes naming what the replay could not enforce: schema patterns it could not
    evaluate and ``$ref`` targets outside their schema (never fetched)."""
    from pytest_entropy.core.notices import format_external_refs_note

    lines = []
    patterns = sorted(met.patterns)
    if patterns:
        shown = ", ".join(repr(pattern) for pattern in patterns[:3])
        more = f" and {len(patterns) - 3} more" if len(patterns) > 3 else ""
        lines.append(
            f"note: {len(patterns)} schema pattern(s) use lookarounds or backreferences, which"
            f" the linear-time engine cannot run; they were not enforced: {shown}{more}"
        )
    if met.refs:
        lines.append(format_external_refs_note(sorted(met.refs)))
    return lines


def oversized_note(merged: PoolMerge) -> str:
    """`` · N values over 64 KiB counted, not stored`` when a pool merge met any, and
    `` · N totals below zero written as 0`` when it clamped any."""
    note = ""
    if merged.oversized_values:
        note += f" · {merged.oversized_values} values over 64 KiB counted, not stored"
    if merged.clamped_totals:
        note += f" · {merged.clamped_totals} totals below zero written as 0"
    return note


def add_format_options(parser: argparse.ArgumentParser, *, sessions: bool = True) -> None:
    """``--format`` (with ``sessions``), ``--surface-format`` and ``--ref-prefix``.

    Every command that reads sessions or a surface registers them through this one helper;
    ``read_options_of``, ``session_sources_of`` and ``surface_of`` read them back.
    """
    from pytest_entropy.ingest.registry import session_formats, surface_formats

    if sessions:
        parser.add_argument(
            "--format",
            default="auto",
            choices=session_formats(),
            metavar="FORMAT",
            help="session format: auto (detect each file), fabric (native) or a foreign "
            f"format ({', '.join(session_formats()[2:])}); see docs/formats.md",
        )
        parser.add_argument(
            "--strict",
            action="store_true",
            default=None,
            help="any unreadable or unrecognised session file is an error (exit 2); default:"
            " strict in [tool.entropy] or entropy.yml, else counted and reported",
        )
        add_command_flag(parser, "storage-options")
        add_command_flag(parser, "max-inflated-bytes")
    parser.add_argument(
        "--surface-format",
        default="auto",
        choices=surface_formats(),
        metavar="FORMAT",
        help="surface file format: auto (detect), snapshot or a tool list "
        f"({', '.join(name for name in surface_formats()[1:] if name != 'snapshot')})",
    )
    parser.add_argument(
        "--ref-prefix",
        default="",
        metavar="TEXT",
        help="prefix for every foreign tool name, in sessions and surface alike "
        "(e.g. mcp.github.; default: none, pi. for Pi)",
    )


def strict_of(args: argparse.Namespace) -> bool:
    """``--strict``, else ``strict`` from the project configuration (``[tool.entropy]``)."""
    if getattr(args, "strict", None):
        return True
    from pytest_entropy.state.config import load_config

    return load_config(getattr(args, "cwd", None) or None).strict


def add_allow_empty(parser: argparse.ArgumentParser) -> None:
    """``--allow-empty``: a corpus that yields no operations passes (the shared flag)."""
    add_command_flag(parser, "allow-empty")


def add_corpus_inputs(
    parser: argparse.ArgumentParser, *, surface_required: bool = False, repairs: bool = True
) -> None:
    """What a corpus command reads: ``--sessions``, ``--surface`` and (with ``repairs``)
    ``--repairs``, in that order."""
    add_sessions_option(parser)
    add_surface_option(parser, required=surface_required)
    if repairs:
        add_repairs_option(parser)


def add_corpus_reading(
    parser: argparse.ArgumentParser, *, catalog_digest: str | None = None, engine: bool = True
) -> None:
    """How a corpus command reads it: the format options, ``--allow-empty``,
    ``--metric-version``, then (given its help text) ``--catalog-digest`` and (with
    ``engine``) the engine options."""
    add_format_options(parser)
    add_allow_empty(parser)
    add_metric_version_option(parser)
    if catalog_digest is not None:
        parser.add_argument("--catalog-digest", metavar="TEXT", help=catalog_digest)
    if engine:
        add_engine_options(parser)


def allow_empty_of(args: argparse.Namespace) -> bool:
    """``--allow-empty``, else ``allow-empty`` from the project configuration."""
    if getattr(args, "allow_empty", None):
        return True
    return load_config(getattr(args, "cwd", None) or None).allow_empty


def check_corpus(
    args: argparse.Namespace,
    diagnostics: ScanDiagnostics,
    err: TextIO | None = None,
    *,
    shows_diagnostics: bool = False,
) -> None:
    """What every command checks once its corpus is read, before it writes or prints:
    ``--strict`` (:func:`check_strict`), that the corpus yielded operations (exit 2, naming
    what was read, unless ``--allow-empty``), and warning lines on ``err`` (stderr) naming
    the unreadable and unrecognised files it passed over and, unless the command's own
    output ``shows_diagnostics``, the lines it skipped inside the files."""
    import sys

    from pytest_entropy.report.text import corpus_warnings

    check_strict(args, diagnostics)
    check_not_empty(
        diagnostics,
        allow_empty=allow_empty_of(args),
        session_format=getattr(args, "format", None) or "auto",
    )
    for warning in corpus_warnings(diagnostics, lines=not shows_diagnostics):
        (err or sys.stderr).write(terminal_line(warning) + "\n")


def check_strict(args: argparse.Namespace, diagnostics: ScanDiagnostics) -> None:
    """Under ``--strict``, raise for any unreadable or unrecognised file the read counted
    (before the command writes or prints anything)."""
    problems = diagnostics.unreadable_files + diagnostics.unrecognized_files
    if not problems or not strict_of(args):
        return
    named = "; ".join(
        diagnostics.samples[:3]
        or (diagnostics.unreadable_names + diagnostics.unrecognized_names)[:3]
    )
    raise EntropyInputError(
        f"--strict: {diagnostics.unreadable_files} unreadable and"
        f" {diagnostics.unrecognized_files} unrecognised session file(s)"
        + (f": {named}" if named else "")
    )


_FOREIGN_COUNTERS = (
    ("concatenated_lines", "lines holding several JSON values"),
    ("unknown_records", "unknown records"),
    ("unmatched_results", "results without a call"),
    ("unanswered_calls", "calls without a result (aborted)"),
    ("duplicate_records", "repeated records"),
    ("undecodable_arguments", "undecodable arguments"),
    ("unstructured_outputs", "unstructured outputs (no call)"),
    ("unscored_entries", "entries without a score file"),
    ("unrecognized_files", "files of another format"),
    ("split_traces", "traces split at the size bound"),
)


def foreign_lines(diagnostics: ScanDiagnostics) -> list[str]:
    """What the foreign readers saw, one line (nothing when no foreign file was read)."""
    if not diagnostics.foreign_records and not diagnostics.unrecognized_files:
        return []
    parts = [
        f"foreign records {diagnostics.foreign_records}",
        f"calls {diagnostics.foreign_calls}",
    ]
    parts.extend(
        f"{label} {getattr(diagnostics, name)}"
        for name, label in _FOREIGN_COUNTERS
        if getattr(diagnostics, name)
    )
    return [" · ".join(parts)]
