"""``pytest-entropy convert``: foreign session logs to native session JSONL.

One output file per input session, named ``<position>-<name>.jsonl`` (the position keeps the
input order when the output directory is measured by name; ``<name>`` is the input's path
relative to the directory it was found in, ``/`` written as ``__``, without its ``.json``,
``.jsonl`` or ``.gz`` suffix). The bytes depend only on the input, the format, the surface
and the options, so converting twice gives identical files, and measuring the output
directory gives the report measuring the inputs directly gives.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EXIT_OK,
    add_format_options,
    add_json,
    add_sessions_option,
    add_surface_option,
    check_strict,
    foreign_lines,
    print_json,
    print_lines,
    read_options_of,
    surface_of,
)
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.ingest.base import NATIVE_FORMAT, ReadOptions, open_session
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.guard import TRACE_KIND
from pytest_entropy.ingest.inflation import InflatedSizeError, inflation_limit
from pytest_entropy.ingest.lines import OVERSIZED, iter_line_batches
from pytest_entropy.ingest.registry import directory_files, resolve_format, session_reader

__all__ = ["converted_name", "register", "run"]

_TRACE_MARK = TRACE_KIND.encode()
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


def _inputs(sources: list[str], options: ReadOptions) -> list[tuple[Path, str]]:
    """``(path, relative name)`` of every input file, in order."""
    out: list[tuple[Path, str]] = []
    for raw in sources:
        path = Path(raw)
        if path.is_dir():
            out.extend(
                (found, found.relative_to(path).as_posix())
                for found in directory_files(path, options)
            )
        elif path.exists():
            out.append((path, path.name))
        else:
            raise EntropyInputError("no such file or directory", source=raw)
    return out


def _native_lines(path: Path, diagnostics: ScanDiagnostics) -> Iterator[bytes]:
    with open_session(path) as stream:
        for batch in iter_line_batches(stream):
            for raw in batch:
                if raw is OVERSIZED:
                    diagnostics.oversized_lines += 1
                    diagnostics.note(str(path), "line longer than the cap (not copied)")
                    continue
                yield raw


def _convert_one(
    path: Path, target: Path, options: ReadOptions, diagnostics: ScanDiagnostics
) -> dict[str, Any]:
    session_format = resolve_format(path, options)
    if session_format == NATIVE_FORMAT:
        lines = _native_lines(path, diagnostics)
    else:
        lines = iter(session_reader(session_format)(path, options, diagnostics))
    calls_before = diagnostics.foreign_calls
    written = traces = 0
    partial = target.with_name(target.name + ".partial")
    opened = False
    try:
        with open(partial, "wb") as stream, inflation_limit(options.max_inflated_bytes):
            opened = True
            for line in lines:
                stream.write(line)
                stream.write(b"\n")
                written += 1
                if _TRACE_MARK in line:
                    traces += 1
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
        return {"source": str(path), "output": None, "format": session_format}
    os.replace(partial, target)
    return {
        "source": str(path),
        "output": str(target),
        "format": session_format,
        "lines": written,
        "traces": traces,
        "calls": diagnostics.foreign_calls - calls_before,
    }


def run(args: argparse.Namespace, out: TextIO) -> int:
    surface = surface_of(args, args.surface) if args.surface else None
    options = read_options_of(args, surface)
    inputs = _inputs(args.sessions, options)
    directory = Path(args.out)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise EntropyInputError(
            f"cannot create the output directory: {error.strerror}", source=args.out
        ) from None
    width = max(4, len(str(len(inputs))))
    diagnostics = ScanDiagnostics()
    files = []
    for position, (path, relative) in enumerate(inputs, 1):
        diagnostics.files += 1
        target = directory / converted_name(relative, position, width)
        files.append(_convert_one(path, target, options, diagnostics))
    check_strict(args, diagnostics)
    if args.json:
        print_json(out, {"files": files, "diagnostics": diagnostics.to_json()})
    else:
        for item in files:
            if item["output"] is None:
                print_lines(out, [f"{item['source']}: unreadable, nothing written"])
            else:
                print_lines(
                    out,
                    [
                        f"{item['source']} -> {item['output']} ({item['format']}: "
                        f"{item['calls']} calls in {item['traces']} traces)"
                    ],
                )
        written = [item for item in files if item["output"] is not None]
        print_lines(
            out,
            [
                f"converted {len(written)} of {len(files)} files: "
                f"{sum(item['calls'] for item in written)} calls in "
                f"{sum(item['traces'] for item in written)} traces",
                *foreign_lines(diagnostics),
                *(f"  {sample}" for sample in diagnostics.samples),
            ],
        )
    return EXIT_OK
