"""The JSON Schemas of every command's ``--json`` output, shipped in the package.

``schemas/<command>.json`` (draft 2020-12) describes what ``pytest-entropy <command> --json``
prints; ``watch``'s describes each of its lines. The schemas allow added keys: interfaces
grow, they are never renamed (README, deprecation policy).

>>> sorted(schema_for("measure")["required"])
['diagnostics', 'report', 'reportHash']
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Final

__all__ = ["SCHEMA_NAMES", "schema_for"]

SCHEMA_NAMES: Final = (
    "certify",
    "compile",
    "config",
    "convert",
    "diff",
    "export",
    "export-artifact",
    "freedom",
    "import",
    "lint",
    "measure",
    "pool",
    "propose",
    "status",
    "trial",
    "watch",
)


def schema_for(command: str) -> dict[str, Any]:
    """The JSON Schema of ``command``'s ``--json`` output."""
    if command not in SCHEMA_NAMES:
        raise KeyError(command)
    text = resources.files(__package__).joinpath("schemas", f"{command}.json").read_text("utf-8")
    value: dict[str, Any] = json.loads(text)
    return value
