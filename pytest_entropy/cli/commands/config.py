"""``pytest-entropy config``: the effective configuration and where each value came from.

Credentials (storage options, MCP headers) are masked: their keys and header names are
shown, their values never.
"""

from __future__ import annotations

import argparse
import os
from typing import Any, TextIO

from pytest_entropy.cli.common import EXIT_OK, add_command_flag, add_json, print_json, print_lines
from pytest_entropy.state.settings import (
    SETTINGS,
    configured_settings,
    find_config_files,
    mask,
)

PRECEDENCE = (
    "command line",
    "environment (PYTEST_ENTROPY_<KEY>)",
    "pytest ini (entropy_<key>, pytest only)",
    "[tool.entropy] in pyproject.toml",
    "entropy.yml",
    "default",
)


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "config", help="print the effective configuration and where each value came from"
    )
    add_command_flag(parser, "cwd", help="the project whose configuration to show")
    add_json(parser)
    parser.set_defaults(handler=run)


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def effective_configuration(cwd: str | None = None) -> dict[str, Any]:
    """The ``--json`` document: files found, the precedence and every setting."""
    start = cwd or os.getcwd()
    pyproject, yaml_file = find_config_files(start)
    configured = configured_settings(start)
    settings: dict[str, Any] = {}
    for entry in SETTINGS:
        resolved = configured.get(entry.key)
        value = resolved.value if resolved is not None else entry.default
        settings[entry.key] = {
            "value": _jsonable(mask(entry, value)),
            "source": resolved.source if resolved is not None else "default",
            "environment": entry.environment_name,
            "secret": entry.secret,
        }
    return {
        "files": {
            "pyproject": str(pyproject) if pyproject is not None else None,
            "yaml": str(yaml_file) if yaml_file is not None else None,
        },
        "precedence": list(PRECEDENCE),
        "settings": settings,
    }


def _shown(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def run(args: argparse.Namespace, out: TextIO) -> int:
    document = effective_configuration(args.cwd)
    if args.json:
        print_json(out, document)
        return EXIT_OK
    files = document["files"]
    lines = [
        "precedence: " + " > ".join(PRECEDENCE),
        f"pyproject.toml: {files['pyproject'] or '(none with [tool.entropy])'}",
        f"entropy.yml: {files['yaml'] or '(none)'}",
    ]
    width = max(len(key) for key in document["settings"])
    for key, row in document["settings"].items():
        lines.append(f"{key.ljust(width)} = {_shown(row['value'])}  ({row['source']})")
    print_lines(out, lines)
    return EXIT_OK
