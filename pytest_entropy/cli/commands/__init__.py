"""One module per ``pytest-entropy`` command; each exposes ``register(subparsers)``.

A module's ``register`` adds its sub-parser and sets ``handler`` to a function
``(args, out) -> exit status``. The order of :data:`COMMAND_MODULES` is the order of the
help text.
"""

from __future__ import annotations

COMMAND_MODULES = (
    "measure",
    "status",
    "freedom",
    "propose",
    "compile",
    "trial",
    "certify",
    "export",
    "export_artifact",
    "import_artifact",
    "pool",
    "watch",
    "proxy",
    "convert",
    "diff",
    "lint",
    "report",
    "apply",
    "config",
)
