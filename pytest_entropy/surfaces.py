"""Surface and repair-table files (spec §1.6-§1.7): read, parse, validate.

Foreign tool-list formats (MCP, OpenAI, Anthropic, ...) plug in through
:data:`SURFACE_READERS`; the native snapshot format is always available.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .core.errors import EntropyInputError
from .core.inputs import repair_rows_from_value, surface_from_value
from .core.records import RepairRow
from .ingest.jsonparse import JSONParseError, parse_json_bytes

__all__ = [
    "SURFACE_READERS",
    "load_json_file",
    "load_repairs",
    "load_surface",
]

MAX_INPUT_FILE_BYTES = 256 << 20

SurfaceReader = Callable[[Any, str], dict[str, Any]]


def load_json_file(path: str | os.PathLike[str], what: str) -> Any:
    """Parse a whole JSON file with the reference's rules; errors name the file."""
    source = os.fspath(path)
    try:
        with open(source, "rb") as stream:
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
    try:
        value, _ = parse_json_bytes(raw)
    except JSONParseError as error:
        raise EntropyInputError(f"{what} file is not valid JSON ({error})", source=source) from None
    return value


def _snapshot(value: Any, source: str) -> dict[str, Any]:
    return surface_from_value(value, source=source)


SURFACE_READERS: dict[str, SurfaceReader] = {"snapshot": _snapshot}


def load_surface(
    path: str | os.PathLike[str], *, surface_format: str = "auto", ref_prefix: str = ""
) -> dict[str, Any]:
    """A surface snapshot ``{version: 1, actions: [{ref, inputSchema}]}`` from a file."""
    source = os.fspath(path)
    value = load_json_file(source, "surface")
    if surface_format in ("auto", "snapshot"):
        surface = _snapshot(value, source)
    else:
        reader = SURFACE_READERS.get(surface_format)
        if reader is None:
            known = ", ".join(sorted(["auto", *SURFACE_READERS]))
            raise EntropyInputError(
                f"unknown surface format {surface_format!r} (known: {known})", source=source
            )
        surface = reader(value, source)
    if ref_prefix:
        surface = {
            "version": 1,
            "actions": [
                {**action, "ref": ref_prefix + action["ref"]} for action in surface["actions"]
            ],
        }
    return surface


def load_repairs(path: str | os.PathLike[str]) -> list[RepairRow]:
    """Normalised repair rows from a stored repair table or a bare array of rows."""
    source = os.fspath(path)
    return repair_rows_from_value(load_json_file(source, "repair table"), source=source)


def repairs_path_default(agent_dir: Path) -> Path:
    """Where a Pi agent directory keeps its repair table."""
    return agent_dir / "fabric" / "repairs" / "current.json"
