"""The ``pytest-entropy`` command line (console script ``pytest_entropy.cli:main``).

This module stays light on purpose: :func:`main` catches a Ctrl-C (``KeyboardInterrupt``)
before it imports the commands, their libraries and the parser, which takes the first second
or two of every run. An interrupt then ends the run with status 130 and one line, not with a
traceback from inside an import (issue 26, item 16).
"""

from __future__ import annotations

import sys

from pytest_entropy.cli.interrupt import EXIT_INTERRUPTED, interrupted

TYPE_CHECKING = False  # typing is not imported on the way to --version (issue 32)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from pytest_entropy.cli.app import build_parser

__all__ = ["EXIT_INTERRUPTED", "build_parser", "interrupted", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (never calls ``sys.exit``)."""
    try:
        if (sys.argv[1:] if argv is None else list(argv)) == ["--version"]:
            # The one-word form needs no grammar: answered before argparse is imported.
            from pytest_entropy.cli.version import version_text
            from pytest_entropy.report.encoding import degrade_stream

            degrade_stream(sys.stdout)
            sys.stdout.write(version_text() + "\n")
            return 0
        from pytest_entropy.cli.app import main as run

        return run(argv)
    except KeyboardInterrupt:
        return interrupted()


def __getattr__(name: str) -> Any:
    if name == "build_parser":  # the grammar loads every command: only when asked for
        from pytest_entropy.cli import app

        return app.build_parser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
