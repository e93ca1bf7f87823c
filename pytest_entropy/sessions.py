"""Session files on disk: discovery, windows and per-file scans (spec §4.2, §9.3).

Every file is scanned alone with its own model cursor. Reads stream line by line; a file is
never held in memory whole.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from .core.errors import EntropyInputError
from .core.jscompat import code_unit_key
from .core.meter import MeterState
from .core.records import AuditCall, Trace, ValueObservation
from .ingest.fabric import ScanDiagnostics, SessionEvidence, SessionScanner

__all__ = [
    "DEFAULT_WINDOW",
    "NATIVE_FORMAT",
    "SESSION_DETECTORS",
    "SESSION_DIRECTORY_RULES",
    "SESSION_READERS",
    "ReadOptions",
    "SessionFile",
    "SessionReader",
    "agent_dir_from_env",
    "directory_session_files",
    "encode_project_dir",
    "expand_session_paths",
    "machine_session_files",
    "meter_file",
    "open_session",
    "project_session_files",
    "read_file_evidence",
    "resolve_format",
    "scan_file",
    "session_formats",
]

DEFAULT_WINDOW = 8
SESSION_SUFFIXES = (".jsonl", ".jsonl.gz")
NATIVE_FORMAT = "fabric"


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """How to read session files; travels (pickled) to worker processes.

    ``session_format`` is ``auto``, ``fabric`` (the native trace-envelope JSONL) or the name
    of a registered foreign reader. ``surface`` lets foreign readers classify failure
    stages by replaying recorded arguments against the declared schemas. ``ref_prefix``
    goes before every foreign tool name (empty: the format's own default, ``pi.`` for Pi
    sessions); ``redact`` drops secret-like values from the audits a reader writes.
    """

    session_format: str = "auto"
    surface: dict[str, Any] | None = None
    ref_prefix: str = ""
    redact: bool = False


# A foreign reader turns one file into native session lines (model_change lines and
# fabric_exec trace lines with audits), so everything downstream - the guard, the meter,
# `convert` - treats every format alike. Readers register here by name.
SessionReader = Callable[[Path, ReadOptions, ScanDiagnostics], Iterable[bytes]]
SESSION_READERS: dict[str, SessionReader] = {}
# Content sniffers for `auto`: (name, predicate over the file's first bytes), in order.
SESSION_DETECTORS: list[tuple[str, Callable[[Path, bytes], bool]]] = []
# Which files a directory means for a format named explicitly: directory -> files in order.
# Formats without a rule use the native one (`*.jsonl`, `*.jsonl.gz`).
SESSION_DIRECTORY_RULES: dict[str, Callable[[Path], list[Path]]] = {}

_formats_loaded = False


def _load_formats() -> None:
    """Register the foreign readers on first use, so ``import pytest_entropy`` stays cheap."""
    global _formats_loaded
    if not _formats_loaded:
        _formats_loaded = True
        from .ingest import formats

        formats.register()


def session_formats() -> list[str]:
    """Every name ``--format`` accepts, ``auto`` and the native ``fabric`` first."""
    _load_formats()
    return ["auto", NATIVE_FORMAT, *sorted(SESSION_READERS)]


def resolve_format(path: Path, options: ReadOptions) -> str:
    """The format of one file: the explicit choice, or what its first bytes look like."""
    _load_formats()
    chosen = options.session_format
    if chosen != "auto":
        if chosen != NATIVE_FORMAT and chosen not in SESSION_READERS:
            known = ", ".join(sorted(["auto", NATIVE_FORMAT, *SESSION_READERS]))
            raise EntropyInputError(f"unknown session format {chosen!r} (known: {known})")
        return chosen
    if not SESSION_DETECTORS:
        return NATIVE_FORMAT
    try:
        with open_session(path) as stream:
            head = stream.read(64 << 10)
    except (OSError, EOFError):
        return NATIVE_FORMAT
    for name, detect in SESSION_DETECTORS:
        if detect(path, head):
            return name
    return NATIVE_FORMAT


def agent_dir_from_env() -> Path:
    """The Pi agent directory: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    configured = os.environ.get("PI_CODING_AGENT_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".pi" / "agent"


def encode_project_dir(cwd: str | os.PathLike[str]) -> str:
    """Pi's session directory name for a working directory.

    Pi strips one leading separator and turns every ``/``, ``\\`` and ``:`` into ``-``,
    wrapped in ``--``: ``/home/me/app`` -> ``--home-me-app--``.
    """
    resolved = os.path.abspath(os.fspath(cwd))
    if resolved[:1] in ("/", "\\"):
        resolved = resolved[1:]
    for separator in ("/", "\\", ":"):
        resolved = resolved.replace(separator, "-")
    return f"--{resolved}--"


def _is_session_name(name: str) -> bool:
    return name.endswith(SESSION_SUFFIXES)


def native_directory_files(path: Path) -> list[Path]:
    """The native rule: a directory's ``*.jsonl`` and ``*.jsonl.gz`` files, by name."""
    names = [
        entry.name for entry in os.scandir(path) if _is_session_name(entry.name) and entry.is_file()
    ]
    return [path / name for name in sorted(names, key=code_unit_key)]


def directory_files(path: Path, options: ReadOptions | None = None) -> list[Path]:
    """The session files a directory means for the chosen format (see ``docs/formats.md``)."""
    chosen = options.session_format if options is not None else "auto"
    if chosen != NATIVE_FORMAT:
        _load_formats()
    rule = SESSION_DIRECTORY_RULES.get(chosen, native_directory_files)
    try:
        return rule(path)
    except OSError as error:
        raise EntropyInputError(
            f"cannot list the directory: {error.strerror}", source=str(path)
        ) from None


def expand_session_paths(
    paths: Sequence[str | os.PathLike[str]], options: ReadOptions | None = None
) -> list[Path]:
    """Files as given; a directory means its ``*.jsonl`` (and ``*.jsonl.gz``) files, by name.

    Names sort in UTF-16 code-unit order. A foreign ``options.session_format`` may mean
    other files (``docs/formats.md``); ``auto`` adds Claude Code's
    ``<session>/subagents/*.jsonl``. A missing path is an input error.
    """
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(directory_files(path, options))
        elif path.exists():
            out.append(path)
        else:
            raise EntropyInputError("no such file or directory", source=str(path))
    return out


def open_session(path: Path) -> IO[bytes]:
    """Open a session file for binary reading; ``.gz`` files decompress transparently."""
    if path.name.endswith(".gz"):
        return cast(IO[bytes], gzip.open(path, "rb"))
    return open(path, "rb")


def scan_file(
    path: Path,
    on_trace: Callable[[Trace], None] | None,
    *,
    diagnostics: ScanDiagnostics,
    evidence: SessionEvidence | None = None,
    meter: MeterState | None = None,
    name: str | None = None,
    options: ReadOptions | None = None,
    on_audit: Callable[[AuditCall], None] | None = None,
    on_value: Callable[[ValueObservation], None] | None = None,
) -> bool:
    """Scan one file with a fresh model cursor; returns False when it could not be read.

    Audit calls and value observations go to ``evidence`` when given, else to ``on_audit``
    and ``on_value``.
    """
    options = options or ReadOptions()
    if evidence is not None:
        on_audit = evidence.audit_calls.append
        on_value = evidence.value_observations.append
    scanner = SessionScanner(
        on_trace,
        meter=meter,
        on_audit=on_audit,
        on_value=on_value,
        diagnostics=diagnostics,
        name=name or str(path),
    )
    diagnostics.files += 1
    session_format = resolve_format(path, options)
    try:
        if session_format == NATIVE_FORMAT:
            with open_session(path) as stream:
                scanner.scan_stream(stream)
        else:
            scanner.feed_lines(SESSION_READERS[session_format](path, options, diagnostics))
    except (OSError, EOFError) as error:
        diagnostics.unreadable_files += 1
        diagnostics.note(str(path), f"unreadable: {error}")
        return False
    return True


def meter_file(
    path: Path,
    *,
    diagnostics: ScanDiagnostics | None = None,
    retain_terms: bool = True,
    into: MeterState | None = None,
    options: ReadOptions | None = None,
) -> tuple[MeterState | None, ScanDiagnostics]:
    """Measure one file into a fresh state (or ``into``); ``None`` when unreadable."""
    diagnostics = diagnostics if diagnostics is not None else ScanDiagnostics()
    state = into if into is not None else MeterState(retain_terms=retain_terms)
    readable = scan_file(path, None, diagnostics=diagnostics, meter=state, options=options)
    return (state if readable else None), diagnostics


def read_file_evidence(
    path: Path,
    *,
    diagnostics: ScanDiagnostics | None = None,
    options: ReadOptions | None = None,
) -> SessionEvidence | None:
    """The session evidence of one file (traces, observations, audit calls), or ``None``."""
    diagnostics = diagnostics if diagnostics is not None else ScanDiagnostics()
    evidence = SessionEvidence()
    if not scan_file(
        path, evidence.traces.append, diagnostics=diagnostics, evidence=evidence, options=options
    ):
        return None
    return evidence


# -------------------------------------------------------------------------- windows


@dataclass(frozen=True, slots=True)
class SessionFile:
    path: Path
    mtime_ms: float


def _stamp(path: Path) -> SessionFile:
    try:
        return SessionFile(path, os.stat(path).st_mtime_ns / 1e6)
    except OSError:
        return SessionFile(path, 0.0)


def _newest_first(files: list[SessionFile]) -> list[SessionFile]:
    files.sort(key=lambda item: code_unit_key(str(item.path)))
    files.sort(key=lambda item: -item.mtime_ms)
    return files


def _session_files_in(directory: Path) -> list[SessionFile]:
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    out = []
    for entry in entries:
        try:
            if _is_session_name(entry.name) and entry.is_file():
                out.append(_stamp(Path(entry.path)))
        except OSError:
            continue
    return out


def directory_session_files(
    directory: Path, limit: int = DEFAULT_WINDOW, options: ReadOptions | None = None
) -> list[SessionFile]:
    """The newest ``limit`` session files of one directory, newest first.

    Without ``options`` (or with the native format) these are the files directly inside it;
    a foreign format lists what a directory means for it.
    """
    if options is None or options.session_format == NATIVE_FORMAT:
        files = _session_files_in(directory)
    else:
        try:
            files = [_stamp(path) for path in directory_files(directory, options)]
        except EntropyInputError:
            files = []
    return _newest_first(files)[: max(1, limit)]


def project_session_files(
    agent_dir: Path, cwd: str | os.PathLike[str], limit: int = DEFAULT_WINDOW
) -> list[SessionFile]:
    """The current project's newest session files (spec §4.2), newest first."""
    directory = agent_dir / "sessions" / encode_project_dir(cwd)
    return _newest_first(_session_files_in(directory))[: max(1, limit)]


def machine_session_files(
    agent_dir: Path, cwd: str | os.PathLike[str] | None, limit: int = DEFAULT_WINDOW
) -> list[SessionFile]:
    """The machine-wide window (spec §4.2): newest files across every project, with the
    current project's newest file always included."""
    root = agent_dir / "sessions"
    try:
        projects = sorted(
            (entry.name for entry in os.scandir(root) if entry.is_dir()), key=code_unit_key
        )
    except OSError:
        return []
    files: list[SessionFile] = []
    for project in projects:
        files.extend(_session_files_in(root / project))
    window = max(1, limit)
    selected = _newest_first(files)[:window]
    if cwd is not None:
        current = project_session_files(agent_dir, cwd, 1)
        if current and all(item.path != current[0].path for item in selected):
            selected = _newest_first([*selected[: window - 1], current[0]])
    return selected
