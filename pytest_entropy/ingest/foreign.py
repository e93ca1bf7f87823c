"""Reading foreign files: JSON Lines and whole JSON documents, damage counted, never fatal.

Every foreign reader gets its records from here, so malformed input is handled one way:
an empty line is counted and skipped, an over-long line is counted and streamed past, a
line holding several JSON values written back to back (a real Pi writer quirk) yields each
of them, and a line that does not parse is counted as malformed with a sample. Parsing uses
the same JavaScript-compatible rules as native session lines.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.jsonparse import (
    JSONParseError,
    parse_json_bytes,
    parse_json_int,
    parse_json_text,
)
from pytest_entropy.ingest.lines import OVERSIZED, iter_line_batches

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    import os
    from pathlib import Path
    from typing import Any, Final

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "decode_arguments",
    "head_records",
    "iter_json_lines",
    "iter_json_values",
    "load_json_document",
    "open_foreign",
]

# Whole-document formats (tau-bench, ToolBench, OpenHands replay files) are read at once.
MAX_DOCUMENT_BYTES: Final = 256 << 20

# JSON whitespace, after an editor's byte order mark if the file starts with one.
_WHITESPACE: Final = re.compile(rb"(?:\xef\xbb\xbf)?[ \t\r\n]*")


def _reject_constant(name: str) -> Any:
    raise JSONParseError(f"{name} is not valid JSON")


@functools.cache
def _concatenated() -> Any:
    # Made at the first line holding several values: most runs never meet one.
    import json

    return json.JSONDecoder(parse_constant=_reject_constant, parse_int=parse_json_int)


def open_foreign(path: str | os.PathLike[str]) -> Any:
    """Open a foreign file for binary reading (``.gz`` transparently)."""
    from pytest_entropy.ingest.base import open_session

    return open_session(path)


def _split_values(raw: bytes) -> list[Any] | None:
    """The JSON values of a line holding several written back to back, or ``None``."""
    text = raw.decode("utf-8", "replace")
    values: list[Any] = []
    position = 0
    end = len(text)
    while True:
        while position < end and text[position] in " \t\r\n":
            position += 1
        if position >= end:
            break
        try:
            value, position = _concatenated().raw_decode(text, position)
        except (ValueError, RecursionError):
            return None
        values.append(value)
    return values if len(values) > 1 else None


def iter_json_lines(
    path: Path, diagnostics: ScanDiagnostics, *, name: str | None = None
) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for every JSON value of a JSON Lines file, in order.

    Damaged lines are counted in ``diagnostics`` (``emptyLines``, ``oversizedLines``,
    ``malformedLines``, ``concatenatedLines``) and yield nothing, or what could be read.
    """
    where = name or str(path)
    number = 0
    with open_foreign(path) as stream:
        for batch in iter_line_batches(stream):
            for raw in batch:
                number += 1
                if raw is OVERSIZED:
                    diagnostics.oversized_lines += 1
                    diagnostics.note(f"{where}:{number}", "line longer than the cap")
                    continue
                if not raw.strip():
                    diagnostics.empty_lines += 1
                    continue
                try:
                    value, _ = parse_json_bytes(raw)
                except JSONParseError as error:
                    values = _split_values(raw)
                    if values is None:
                        diagnostics.malformed_lines += 1
                        diagnostics.note(f"{where}:{number}", f"malformed JSON ({error})")
                        continue
                    diagnostics.concatenated_lines += 1
                    diagnostics.note(f"{where}:{number}", f"{len(values)} JSON values on one line")
                    for item in values:
                        diagnostics.foreign_records += 1
                        yield number, item
                    continue
                diagnostics.foreign_records += 1
                yield number, value


def load_json_document(
    path: Path, diagnostics: ScanDiagnostics, *, name: str | None = None
) -> tuple[bool, Any]:
    """``(True, value)`` of a whole-file JSON document, or ``(False, None)`` (counted)."""
    where = name or str(path)
    with open_foreign(path) as stream:
        raw = stream.read(MAX_DOCUMENT_BYTES + 1)
    if len(raw) > MAX_DOCUMENT_BYTES:
        diagnostics.oversized_lines += 1
        diagnostics.note(where, f"document larger than {MAX_DOCUMENT_BYTES >> 20} MiB")
        return False, None
    try:
        value, _ = parse_json_bytes(raw)
    except JSONParseError as error:
        diagnostics.malformed_lines += 1
        diagnostics.note(where, f"malformed JSON ({error})")
        return False, None
    return True, value


def iter_json_values(
    path: Path, diagnostics: ScanDiagnostics, *, name: str | None = None
) -> Iterator[tuple[int, Any]]:
    """Records of a file that is either JSON Lines or one JSON document.

    A file starting with ``[`` is one document, and so is a file whose first line is not a
    whole JSON value while the whole file is (a pretty-printed object). A document yields
    its items when it is an array, else itself, all numbered line 1. Anything else is read
    as JSON Lines.
    """
    with open_foreign(path) as stream:
        head = stream.read(1 << 16)
    match = _WHITESPACE.match(head)
    body = head[match.end() if match else 0 :]
    document = body[:1] == b"["
    if body[:1] == b"{" and b"\n" in body:
        try:
            parse_json_bytes(body.split(b"\n", 1)[0])
        except JSONParseError:
            document = True
    if document:
        probe = ScanDiagnostics()
        ok, value = load_json_document(path, probe, name=name)
        if ok or body[:1] == b"[":
            diagnostics.merge(probe)
            items = value if type(value) is list else [value] if ok else []
            for item in items:
                diagnostics.foreign_records += 1
                yield 1, item
            return
    yield from iter_json_lines(path, diagnostics, name=name)


def head_records(head: bytes, limit: int = 8) -> list[Any]:
    """The JSON values of the first complete lines of a file's head (for detectors)."""
    out: list[Any] = []
    for raw in head.split(b"\n")[:-1] if b"\n" in head else [head]:
        if not raw.strip():
            continue
        try:
            value, _ = parse_json_bytes(raw)
        except JSONParseError:
            values = _split_values(raw)
            if values is None:
                continue
            out.extend(values)
        else:
            out.append(value)
        if len(out) >= limit:
            break
    return out


def decode_arguments(value: Any) -> tuple[Any, bool]:
    """``(arguments, decoded)``: a JSON-object string becomes its object.

    OpenAI-style logs carry arguments as a JSON *string*. A dict passes through; a string
    that parses to an object is decoded; anything else comes back unchanged with
    ``decoded`` false (the call keeps its raw arguments and is counted).
    """
    if type(value) is dict:
        return value, True
    if type(value) is str:
        try:
            parsed = parse_json_text(value)
        except JSONParseError:
            return value, False
        if type(parsed) is dict:
            return parsed, True
    return value, False
