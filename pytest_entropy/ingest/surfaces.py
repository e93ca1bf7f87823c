"""Surface and repair-table files (spec §1.6-§1.7): read, parse, validate.

Foreign tool-list formats (MCP, OpenAI, Anthropic, Pi, BFCL, ...) plug in through
the registry (:mod:`pytest_entropy.ingest.registry`, loaded only for them); the native
snapshot format is always available. ``docs/formats.md`` lists what each reader accepts.
"""

from __future__ import annotations

import os

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.inputs import (
    normalise_repair_rows,
    repair_table_rows,
    surface_from_value,
    without_tool_fields,
)
from pytest_entropy.core.jscompat import code_unit_key, js_trim
from pytest_entropy.core.records import RepairRow
from pytest_entropy.ingest.base import open_without_waiting
from pytest_entropy.ingest.jsonparse import JSONParseError, parse_json_bytes

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "load_json_file",
    "load_repairs",
    "load_repairs_with_notes",
    "load_surface",
    "load_surface_document",
    "surface_from_parsed",
]

MAX_INPUT_FILE_BYTES = 256 << 20


def _read_input_bytes(source: str, what: str) -> bytes:
    try:
        with open_without_waiting(source) as stream:  # a stray FIFO must not hang
            raw = stream.read(MAX_INPUT_FILE_BYTES + 1)
    except FileNotFoundError:
        raise EntropyInputError(f"{what} file not found", source=source) from None
    except IsADirectoryError:
        raise EntropyInputError(f"{what} path is a directory", source=source) from None
    except OSError as error:
        raise EntropyInputError(
            f"{what} file is unreadable: {error.strerror}", source=source
        ) from None
    if len(raw) > MAX_INPUT_FILE_BYTES:
        raise EntropyInputError(
            f"{what} file is larger than {MAX_INPUT_FILE_BYTES >> 20} MiB", source=source
        )
    return raw


def _empty_file_error(raw: bytes, source: str, what: str) -> EntropyInputError | None:
    """The error for a file of nothing but (JavaScript) whitespace, asked only once the file
    failed to parse: the JSON Lines fallback would read it as a list of no tools, which every
    foreign format takes for a surface of no actions."""
    if js_trim(raw.decode("utf-8", errors="replace")):
        return None
    return EntropyInputError(f"{what} file is empty", source=source)


def load_json_file(path: str | os.PathLike[str], what: str) -> Any:
    """Parse a whole JSON file with the reference's rules; errors name the file."""
    source = os.fspath(path)
    raw = _read_input_bytes(source, what)
    try:
        value, _ = parse_json_bytes(raw)
    except JSONParseError as error:
        empty = _empty_file_error(raw, source, what)
        if empty is not None:
            raise empty from None
        raise EntropyInputError(f"{what} file is not valid JSON ({error})", source=source) from None
    return value


_SURFACE_FILE_SUFFIXES = (".json", ".jsonl", ".snap")


def _load_surface_file(source: str) -> Any:
    """One surface file: a JSON document, or JSON Lines (one value per line) as a list."""
    raw = _read_input_bytes(source, "surface")
    try:
        return parse_json_bytes(raw)[0]
    except JSONParseError as error:
        empty = _empty_file_error(raw, source, "surface")
        if empty is not None:
            raise empty from None
        values = []
        for number, line in enumerate(raw.split(b"\n"), 1):
            if not line.strip():
                continue
            try:
                values.append(parse_json_bytes(line)[0])
            except JSONParseError:
                message = f"surface file is not valid JSON ({error})"
                if values:
                    raise EntropyInputError(
                        "surface file is neither JSON nor JSON Lines", source=source, line=number
                    ) from None
                raise EntropyInputError(message, source=source) from None
        return values


def _load_surface_value(source: str) -> Any:
    """A file's value; a directory's ``*.json``/``*.jsonl``/``*.snap`` files by name, their
    values concatenated (arrays spliced) into one list."""
    if not os.path.isdir(source):
        return _load_surface_file(source)
    try:
        names = [
            entry.name
            for entry in os.scandir(source)
            if entry.name.endswith(_SURFACE_FILE_SUFFIXES) and entry.is_file()
        ]
    except OSError as error:
        raise EntropyInputError(
            f"cannot list the surface directory: {error.strerror}", source=source
        ) from None
    if not names:
        raise EntropyInputError(
            "surface directory holds no .json/.jsonl/.snap files", source=source
        )
    values: list[Any] = []
    for name in sorted(names, key=code_unit_key):
        value = _listed_tools(_load_surface_file(os.path.join(source, name)))
        if type(value) is list:
            values.extend(value)
        else:
            values.append(value)
    return values


def _listed_tools(value: Any) -> Any:
    """A file's tools where it wraps them in a document: an MCP ``tools/list`` result (or
    its JSON-RPC response), an OpenAI or Anthropic ``{"tools": [...]}`` request, a
    ToolBench answer's ``answer_generation.function``; else the value as it is. A
    directory's files are concatenated tool by tool, so each document gives its tools."""
    if type(value) is not dict or "actions" in value:
        return value
    from pytest_entropy.ingest.tool_lists import tool_array

    generation = value.get("answer_generation")
    found = tool_array(generation, "function") if type(generation) is dict else None
    found = tool_array(value, "tools") if found is None else found
    return value if found is None else found


def load_surface(
    path: str | os.PathLike[str],
    *,
    surface_format: str = "auto",
    ref_prefix: str = "",
    descriptions: bool = False,
    tool_fields: bool = False,
) -> dict[str, Any]:
    """A surface snapshot ``{version: 1, actions: [{ref, inputSchema}]}`` from a file.

    ``surface_format`` names the file's format, or ``auto`` to detect it from the content;
    ``ref_prefix`` goes before every ref (empty: the format's default, ``pi.`` for Pi tool
    lists). A directory means its tool files in code-unit order of their names.
    ``tool_fields`` (``descriptions`` is its older name) keeps what a tool carries besides
    its schema (``description``, and an MCP tool's ``title``, ``annotations``,
    ``outputSchema``, ...: :data:`~pytest_entropy.core.inputs.TOOL_FIELDS`) on its action,
    for ``lint`` and ``export``; without it those fields are dropped, also from a snapshot's
    actions, so no hash reads them.
    """
    source = os.fspath(path)
    if surface_format == "snapshot":
        # The native format needs none of the foreign readers (kept cheap for the plugin).
        value = load_json_file(source, "surface")
    else:
        value = _load_surface_value(source)
    return surface_from_parsed(
        value,
        source=source,
        surface_format=surface_format,
        ref_prefix=ref_prefix,
        tool_fields=tool_fields or descriptions,
    )


def load_surface_document(
    path: str | os.PathLike[str], *, surface_format: str = "auto"
) -> tuple[Any, str]:
    """The parsed surface file (a directory: its files' values as one list) and its format
    (``surface_format``, or the detected one for ``auto``), for writers that edit it."""
    source = os.fspath(path)
    if surface_format == "snapshot":
        return load_json_file(source, "surface"), "snapshot"
    value = _load_surface_value(source)
    if surface_format != "auto":
        return value, surface_format
    from pytest_entropy.ingest.tool_lists import detect_surface_format

    return value, detect_surface_format(value) or "snapshot"


def _no_tools(value: Any) -> bool:
    """An empty list, or an object whose ``tools`` (an MCP ``tools/list`` result) is one."""
    if type(value) is list:
        return not value
    return type(value) is dict and "actions" not in value and value.get("tools") == []


def surface_from_parsed(
    value: Any,
    *,
    source: str,
    surface_format: str = "auto",
    ref_prefix: str = "",
    descriptions: bool = False,
    tool_fields: bool = False,
) -> dict[str, Any]:
    """A surface snapshot from a parsed value in any surface format (see :func:`load_surface`);
    ``source`` names it in errors."""
    keep = tool_fields or descriptions
    chosen = surface_format
    if chosen == "snapshot":
        surface = surface_from_value(value, source=source, tool_fields=keep)
    else:
        from pytest_entropy.ingest.registry import surface_format as registered
        from pytest_entropy.ingest.registry import surface_formats
        from pytest_entropy.ingest.tool_lists import detect_surface_format

        if chosen == "auto":
            # Nothing recognisable: the snapshot reader says what a snapshot must look like.
            chosen = detect_surface_format(value) or "snapshot"
            if chosen == "snapshot" and _no_tools(value):
                # An empty tool list has nothing to recognise its format by.
                raise EntropyInputError(
                    "surface holds no tool (an empty tool list; name its format with"
                    " --surface-format to read it as a surface of no tools)",
                    source=source,
                )
        found = registered(chosen)
        if found is None:
            known = ", ".join(sorted(surface_formats()))
            raise EntropyInputError(
                f"unknown surface format {surface_format!r} (known: {known})", source=source
            )
        surface = found.reader(value, source)
        if not keep:
            surface = _without_tool_fields(surface)
        ref_prefix = ref_prefix or found.ref_prefix
    if ref_prefix:
        surface = {
            "version": 1,
            "actions": [
                {**action, "ref": ref_prefix + action["ref"]} for action in surface["actions"]
            ],
        }
    return surface


def _without_tool_fields(surface: dict[str, Any]) -> dict[str, Any]:
    actions = surface["actions"]
    stripped = without_tool_fields(actions)
    return surface if stripped is actions else {**surface, "actions": stripped}


def load_repairs(path: str | os.PathLike[str]) -> list[RepairRow]:
    """Normalised repair rows from a stored repair table or a bare array of rows."""
    return load_repairs_with_notes(path)[0]


def load_repairs_with_notes(path: str | os.PathLike[str]) -> tuple[list[RepairRow], list[str]]:
    """:func:`load_repairs` and a note for each row counted although it is not a
    well-formed alias (:func:`~pytest_entropy.core.inputs.normalise_repair_rows`)."""
    source = os.fspath(path)
    rows = repair_table_rows(load_json_file(source, "repair table"), source=source)
    return normalise_repair_rows(rows, source=source)
