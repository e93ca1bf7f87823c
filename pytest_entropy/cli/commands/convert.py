"""``pytest-entropy convert``: foreign session logs to native session JSONL.

One output file per input session, named ``<position>-<name>.jsonl`` (the position keeps the
input order when the output directory is measured by name; ``<name>`` is the input's path
relative to the directory it was found in, ``/`` written as ``__``, without its ``.json``,
``.jsonl`` or ``.gz`` suffix). The bytes depend only on the input, the format, the surface
and the options, so converting twice gives identical files, and measuring the output
directory gives the report measuring the inputs directly gives.

The inputs are listed, read and judged as ``measure`` reads them (issue 14: nothing passes
on nothing): a file that cannot be read or holds no session record gets no output, a line
the scanner cannot read is not copied (both counted and named), and inputs that yield no
trace exit 2 with the empty-corpus message before any output file takes its name.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EXIT_OK,
    add_allow_empty,
    add_format_options,
    add_json,
    add_sessions_option,
    add_surface_option,
    check_corpus,
    foreign_lines,
    print_json,
    print_lines,
    read_options_of,
    surface_files_of,
    surface_of,
)
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.ingest.base import (
    NATIVE_FORMAT,
    ReadOptions,
    open_session,
)
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.guard import SignedOperation
from pytest_entropy.ingest.inflation import InflatedSizeError, inflation_limit
from pytest_entropy.ingest.lines import iter_line_batches
from pytest_entropy.ingest.native import SessionScanner
from pytest_entropy.ingest.registry import resolve_format, session_reader
from pytest_entropy.report.text import diagnostics_lines
from pytest_entropy.run.file_verdicts import (
    NO_KNOWN_FORMAT,
    count_passed_over,
    judge_file,
)
from pytest_entropy.sources.locate import session_listing

__all__ = ["converted_name", "register", "run"]

_SUFFIXES = (".gz", ".jsonl", ".json")


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "convert", help="convert foreign session logs into native session JSONL"
    )
    add_sessions_option(
        parser,
        help="session files or directories (a directory means what --format says it means)",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="output directory")
    add_surface_option(parser)
    add_format_options(parser)
    add_allow_empty(parser)
    parser.add_argument(
        "--redact",
        action="store_true",
        help="drop values under secret-like keys and long base64-like strings from the audits",
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def converted_name(relative: str, position: int, width: int) -> str:
    """The output name of the ``position``-th input (1-based) with a relative path."""
    name = relative.replace("\\", "/")
    stripped = True
    while stripped:
        stripped = False
        for suffix in _SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix):
                name = name[: -len(suffix)]
                stripped = True
    return f"{position:0{width}d}-{name.replace('/', '__')}.jsonl"


def _inputs(
    sources: list[str], options: ReadOptions, exclude: list[str], diagnostics: ScanDiagnostics
) -> list[tuple[Path, str]]:
    """``(path, relative name)`` of every input file, in order, listed as every corpus
    command lists them (a named file that cannot be read is an input error); what a
    directory walk passed over is counted in ``diagnostics``, as a read counts it."""
    out: list[tuple[Path, str]] = []
    for raw in sources:
        listing = session_listing([raw], options, exclude)
        root = Path(raw)
        named_directory = root.is_dir()
        for found in listing.files:
            path = Path(found)
            out.append((path, path.relative_to(root).as_posix() if named_directory else path.name))
        for skipped, why in listing.skipped:
            count_passed_over(diagnostics, skipped, why)
    return out


def _source_lines(
    path: Path, session_format: str, options: ReadOptions, diagnostics: ScanDiagnostics
) -> Iterable[bytes]:
    """The native lines of one input: a native file's own lines, or what its reader writes."""
    if session_format != NATIVE_FORMAT:
        return session_reader(session_format)(path, options, diagnostics)
    return _native_lines(path)


def _native_lines(path: Path) -> Iterator[bytes]:
    with open_session(path) as stream:
        for batch in iter_line_batches(stream):
            yield from batch


def _unparsed(diagnostics: ScanDiagnostics) -> int:
    return diagnostics.malformed_lines + diagnostics.non_object_lines + diagnostics.oversized_lines


def _usable_lines(lines: Iterable[bytes], scanner: SessionScanner) -> Iterator[bytes]:
    """Every line the scanner can read, after it has read it: a line it counts as malformed
    JSON, not a JSON object or longer than the cap (naming file and line) is not copied."""
    diagnostics = scanner.diagnostics
    for line in lines:
        before = _unparsed(diagnostics)
        scanner.feed(line)
        if _unparsed(diagnostics) == before:
            yield line


class _Tally:
    """The calls of the traces a scan accepted (the operations measuring them counts)."""

    __slots__ = ("calls",)

    def __init__(self) -> None:
        self.calls = 0

    def hear(self, signed: list[SignedOperation], _task_key: str, _model: str | None) -> None:
        self.calls += len(signed)


def _convert_one(
    path: Path, partial: Path, options: ReadOptions
) -> tuple[dict[str, Any], ScanDiagnostics]:
    """Convert one input into ``partial``, read by the scanner ``measure`` reads it with;
    its entry and its own diagnostics (what measuring it would count). A file that fails
    while it is read, or holds no session record, leaves no partial file."""
    diagnostics = ScanDiagnostics(files=1)
    session_format = resolve_format(path, options)
    tally = _Tally()
    scanner = SessionScanner(
        on_signed=tally.hear,
        diagnostics=diagnostics,
        name=str(path),
        metric_version=options.metric_version,
    )
    written = 0
    opened = False
    try:
        with open(partial, "wb") as stream, inflation_limit(options.max_inflated_bytes):
            opened = True
            lines = _source_lines(path, session_format, options, diagnostics)
            for line in _usable_lines(lines, scanner):
                stream.write(line)
                stream.write(b"\n")
                written += 1
    except (OSError, EOFError) as error:
        if not opened:
            raise EntropyInputError(
                f"cannot write the output file: {getattr(error, 'strerror', error)}",
                source=str(partial),
            ) from None
        # As when measuring: a file that fails while being read contributes nothing.
        partial.unlink(missing_ok=True)
        if isinstance(error, InflatedSizeError):
            diagnostics.oversized_file(str(path), str(error))
        else:
            diagnostics.unreadable(str(path), str(error))
        return {"source": str(path), "output": None, "format": session_format}, diagnostics
    judge_file(str(path), diagnostics, options.session_format)
    if diagnostics.yielded_nothing() and not diagnostics.unrecognized_files:
        # Read as measure reads it, but named: no line of it is a session record (a CSV
        # file, random bytes under any name), so there is nothing to convert.
        diagnostics.unrecognized(str(path), NO_KNOWN_FORMAT)
    if diagnostics.unrecognized_files:
        partial.unlink(missing_ok=True)
        return {"source": str(path), "output": None, "format": session_format}, diagnostics
    entry = {
        "source": str(path),
        "output": str(partial),
        "format": session_format,
        "lines": written,
        "traces": diagnostics.traces,
        "calls": tally.calls,
        "skippedLines": _unparsed(diagnostics),
    }
    return entry, diagnostics


def _partial_of(target: Path) -> Path:
    return target.with_name(target.name + ".partial")


def _convert_all(
    inputs: list[tuple[Path, str]],
    directory: Path,
    options: ReadOptions,
    diagnostics: ScanDiagnostics,
    files: list[dict[str, Any]],
) -> None:
    """Every input converted into a partial file beside its target, its entry appended to
    ``files`` (so a run that fails midway knows what to remove), in input order."""
    width = max(4, len(str(len(inputs))))
    for position, (path, relative) in enumerate(inputs, 1):
        target = directory / converted_name(relative, position, width)
        partial = _partial_of(target)
        try:
            entry, own = _convert_one(path, partial, options)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        diagnostics.merge(own)
        if entry["output"] is not None:
            entry["output"] = str(target)
        files.append(entry)


def _output_directory(name: str) -> bool:
    """Create the output directory; whether this run created it."""
    directory = Path(name)
    existed = directory.is_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise EntropyInputError(
            f"cannot create the output directory: {error.strerror}", source=name
        ) from None
    return not existed


def _discard(files: list[dict[str, Any]], directory: Path, created: bool) -> None:
    """Remove what a run that failed wrote: its partial files, and the directory it made."""
    for entry in files:
        if entry["output"] is not None:
            _partial_of(Path(entry["output"])).unlink(missing_ok=True)
    if created:
        with contextlib.suppress(OSError):  # not empty: someone else writes there too
            directory.rmdir()


def run(args: argparse.Namespace, out: TextIO) -> int:
    surface = surface_of(args, args.surface) if args.surface else None
    options = read_options_of(args, surface)
    diagnostics = ScanDiagnostics()
    inputs = _inputs(args.sessions, options, surface_files_of(args), diagnostics)
    directory = Path(args.out)
    created = _output_directory(args.out)
    files: list[dict[str, Any]] = []
    try:
        _convert_all(inputs, directory, options, diagnostics, files)
        # As every corpus command: --strict, and nothing passes on nothing (exit 2, naming
        # what was read), before any output file takes its name.
        check_corpus(args, diagnostics, shows_diagnostics=True)
    except BaseException:
        _discard(files, directory, created)
        raise
    for entry in files:
        if entry["output"] is not None:
            os.replace(_partial_of(Path(entry["output"])), entry["output"])
    if args.json:
        print_json(out, {"files": files, "diagnostics": diagnostics.to_json()})
    else:
        print_lines(out, _summary_lines(files, diagnostics))
    return EXIT_OK


def _summary_lines(files: list[dict[str, Any]], diagnostics: ScanDiagnostics) -> list[str]:
    lines = []
    unreadable = set(diagnostics.unreadable_names)
    for item in files:
        if item["output"] is None:
            what = "unreadable" if item["source"] in unreadable else "unrecognised"
            lines.append(f"{item['source']}: {what}, nothing written")
            continue
        skipped = item["skippedLines"]
        lines.append(
            f"{item['source']} -> {item['output']} ({item['format']}: "
            f"{item['calls']} calls in {item['traces']} traces"
            + (f"; {skipped} unusable lines not copied" if skipped else "")
            + ")"
        )
    written = [item for item in files if item["output"] is not None]
    lines.append(
        f"converted {len(written)} of {len(files)} files: "
        f"{sum(item['calls'] for item in written)} calls in "
        f"{sum(item['traces'] for item in written)} traces"
    )
    return [*lines, *foreign_lines(diagnostics), *diagnostics_lines(diagnostics)]
